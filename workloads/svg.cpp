// SVG charts of a study: the roofline of every kernel and a timeline of host and streams.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/op_cost.hpp"
#include "workloads/study.hpp"
#include "workloads/svg_text.hpp"

namespace ridge::workloads {
namespace {

const char* colour(Category c) {
  switch (c) {
    case Category::kGemm:
      return "#1f77b4";
    case Category::kAttention:
      return "#d62728";
    case Category::kElementwise:
      return "#2ca02c";
    case Category::kMemoryCopy:
      return "#9467bd";
    case Category::kHost:
      return "#7f7f7f";
    case Category::kOptimizer:
      return "#ff7f0e";
    case Category::kCommunication:
      return "#8c564b";
  }
  return "#000";
}

}  // namespace

std::string roofline_svg(const StudyResult& s) {
  const double W = 860, H = 560, L = 80, R = 200, Tm = 50, B = 60;
  const double pw = W - L - R, ph = H - Tm - B;
  const double peak = s.gpu.matmul_peak(hw::Precision::kBf16);
  const double fp32 = s.gpu.compute.vector.count(hw::Precision::kFp32)
                          ? s.gpu.compute.vector.at(hw::Precision::kFp32)
                          : peak / 16;
  const double bw = s.gpu.memory.hbm_bandwidth;
  const double x0 = -2, x1 = 5;  // log10 FLOP/B
  double lo = peak;
  for (const auto& r : s.results)
    for (const auto& p : r.roofline)
      if (p.time_s > 0 && p.flops > 0) lo = std::min(lo, p.flops / p.time_s);
  const double y0 = std::max(3.0, std::floor(std::log10(lo))),
               y1 = std::ceil(std::log10(peak) + 0.3);
  auto X = [&](double i) { return L + (std::log10(std::max(i, 1e-2)) - x0) / (x1 - x0) * pw; };
  auto Y = [&](double f) {
    return Tm + ph - (std::log10(std::max(f, std::pow(10.0, y0))) - y0) / (y1 - y0) * ph;
  };
  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{}" font-family="sans-serif" font-size="12">)",
      W, H);
  o += fmt::format(R"(<rect width="{}" height="{}" fill="white"/>)", W, H);
  o += fmt::format(
      R"(<text x="{}" y="25" font-size="15" text-anchor="middle">Roofline of every kernel on {} (HBM and bf16 tensor / fp32 roofs)</text>)",
      L + pw / 2, svg_escape(s.gpu.name));
  for (int e = static_cast<int>(x0); e <= static_cast<int>(x1); ++e) {
    const double x = X(std::pow(10, e));
    o += fmt::format(
        R"(<line x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}" stroke="#ddd"/><text x="{:.1f}" y="{}" text-anchor="middle">1e{}</text>)",
        x, Tm, x, Tm + ph, x, Tm + ph + 16, e);
  }
  for (int e = static_cast<int>(y0); e <= static_cast<int>(y1); ++e) {
    const double y = Y(std::pow(10, e));
    o += fmt::format(
        R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}" stroke="#ddd"/><text x="{}" y="{:.1f}" text-anchor="end">1e{}</text>)",
        L, y, L + pw, y, L - 6, y + 4, e);
  }
  o += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="black"/>)", L,
                   Tm, pw, ph);
  o += fmt::format(
      R"(<text x="{}" y="{}" text-anchor="middle">arithmetic intensity (FLOP per HBM byte, minimum bytes)</text>)",
      L + pw / 2, H - 20);
  o += fmt::format(
      R"(<text transform="translate(20,{}) rotate(-90) " text-anchor="middle">attained FLOP/s (op FLOPs / simulated time)</text>)",
      Tm + ph / 2);
  // Roofs: min(peak, I x bw) for bf16 tensor and fp32 vector.
  for (auto [p, name, dash] :
       {std::tuple{peak, "bf16 tensor", ""}, std::tuple{fp32, "fp32 vector", "6,4"}}) {
    const double ridge = p / bw;
    const double ia = std::pow(10, x0);
    o += fmt::format(
        R"(<polyline fill="none" stroke="black" stroke-width="2" stroke-dasharray="{}" points="{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}"/>)",
        dash, X(ia), Y(ia * bw), X(ridge), Y(p), X(std::pow(10, x1)), Y(p));
    o += fmt::format(R"(<text x="{:.1f}" y="{:.1f}">{} {:.0f} TFLOP/s</text>)", X(ridge) + 6,
                     Y(p) - 5, name, p / 1e12);
  }
  o += fmt::format(
      R"(<text x="{:.1f}" y="{:.1f}" transform="rotate(-33 {:.1f} {:.1f}) ">HBM {:.1f} TB/s</text>)",
      X(0.05), Y(0.05 * bw) - 8, X(0.05), Y(0.05 * bw) - 8, bw / 1e12);
  std::map<Category, int> seen;
  for (const auto& r : s.results) {
    for (const auto& p : r.roofline) {
      if (p.time_s <= 0 || p.flops <= 0) continue;
      const Category c = r.graph.op(p.op).category;
      seen[c]++;
      o += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}" fill-opacity="0.55"/>)",
                       X(p.intensity), Y(p.flops / p.time_s), colour(c));
    }
  }
  double ly = Tm + 10;
  for (const auto& [c, n] : seen) {
    o += fmt::format(
        R"(<circle cx="{}" cy="{:.1f}" r="5" fill="{}"/><text x="{}" y="{:.1f}">{} ({} kernels)</text>)",
        L + pw + 20, ly, colour(c), L + pw + 30, ly + 4, category_name(c), n);
    ly += 20;
  }
  o += "</svg>\n";
  return o;
}

std::string timeline_svg(const StudyResult& s) {
  const double W = 1100, L = 150, R = 20, lane = 26, gapw = 34;
  double y = 50;
  std::string body;
  double tmax = 0;
  for (const auto& r : s.results) tmax = std::max(tmax, r.exec.step_time_s);
  const double pw = W - L - R;
  auto X = [&](double t) { return L + t / tmax * pw; };
  for (const auto& r : s.results) {
    int streams = 1;
    for (std::size_t i = 0; i < r.graph.size(); ++i)
      streams = std::max(streams, r.graph.op(static_cast<int>(i)).stream + 1);
    body += fmt::format(R"(<text x="10" y="{:.1f}" font-weight="bold">{} — step {:.3f} ms</text>)",
                        y, svg_escape(r.spec.label), r.exec.step_time_s * 1e3);
    y += 8;
    const double host_y = y, stream_y = y + lane;
    body += fmt::format(R"(<text x="10" y="{:.1f}">host thread</text>)", host_y + 17);
    for (int st = 0; st < streams; ++st)
      body +=
          fmt::format(R"(<text x="10" y="{:.1f}">stream {}</text>)", stream_y + st * lane + 17, st);
    body += fmt::format(R"(<text x="10" y="{:.1f}">critical path</text>)",
                        stream_y + streams * lane + 17);
    for (std::size_t i = 0; i < r.graph.size(); ++i) {
      const OpNode& n = r.graph.op(static_cast<int>(i));
      const OpRecord& e = r.exec.ops[i];
      const bool cp = r.path.on_path[i] != 0;
      if (e.issue_s > e.host_begin_s) {
        body += fmt::format(R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}" fill="{}"/>)",
                            X(e.host_begin_s), host_y + 3,
                            std::max(0.3, X(e.issue_s) - X(e.host_begin_s)), lane - 6,
                            n.kind == NodeKind::kHost ? "#7f7f7f" : "#bbbbbb");
      }
      if ((n.kind == NodeKind::kKernel || n.kind == NodeKind::kCopy) && e.end_s > e.start_s)
        body += fmt::format(R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}" fill="{}"/>)",
                            X(e.start_s), stream_y + n.stream * lane + 3,
                            std::max(0.3, X(e.end_s) - X(e.start_s)), lane - 6, colour(n.category));
      (void)cp;
    }
    const double cy = stream_y + streams * lane;
    for (const auto& seg : r.path.segments) {
      const char* c = seg.cls == "idle"          ? "#eeeeee"
                      : seg.cls == "host_launch" ? "#bbbbbb"
                      : seg.op >= 0              ? colour(r.graph.op(seg.op).category)
                                                 : "#000";
      body +=
          fmt::format(R"(<rect x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{}" fill="{}"/>)",
                      X(seg.t0_s), cy + 3, std::max(0.3, X(seg.t1_s) - X(seg.t0_s)), lane - 6, c);
    }
    body += fmt::format(R"(<rect x="{}" y="{:.1f}" width="{:.1f}" height="3" fill="#e31a1c"/>)", L,
                        cy + lane - 2, pw);
    y = cy + lane + gapw;
  }
  const double H = y + 40;
  std::string o = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" width="{}" height="{:.0f}" font-family="sans-serif" font-size="12">)",
      W, H);
  o += fmt::format(R"(<rect width="{}" height="{:.0f}" fill="white"/>)", W, H);
  o += fmt::format(
      R"(<text x="{}" y="25" font-size="15" text-anchor="middle">{} on {}: host and stream lanes; below them the critical path (red rule), by class</text>)",
      W / 2,
      svg_escape(s.results.empty() ? "" : s.results.front().spec.label.substr(0, 0) + "step"),
      svg_escape(s.gpu.name));
  o += body;
  for (int k = 0; k <= 10; ++k) {
    const double t = tmax * k / 10;
    o += fmt::format(
        R"(<line x1="{:.1f}" y1="40" x2="{:.1f}" y2="{:.0f}" stroke="#ccc" stroke-dasharray="2,3"/><text x="{:.1f}" y="{:.0f}" text-anchor="middle">{:.2f} ms</text>)",
        X(t), X(t), y - 20, X(t), y - 5, t * 1e3);
  }
  double lx = L;
  for (Category c : {Category::kGemm, Category::kAttention, Category::kElementwise,
                     Category::kMemoryCopy, Category::kOptimizer, Category::kHost}) {
    o += fmt::format(
        R"(<rect x="{:.0f}" y="{:.0f}" width="12" height="12" fill="{}"/><text x="{:.0f}" y="{:.0f}">{}</text>)",
        lx, y + 8, colour(c), lx + 16, y + 18, category_name(c));
    lx += 120;
  }
  o += fmt::format(
      R"(<rect x="{:.0f}" y="{:.0f}" width="12" height="12" fill="#bbbbbb"/><text x="{:.0f}" y="{:.0f}">host launch</text>)",
      lx, y + 8, lx + 16, y + 18);
  o += "</svg>\n";
  return o;
}

}  // namespace ridge::workloads
