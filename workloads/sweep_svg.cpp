// SVG charts of a sweep: a line plot of every step-time column against the one swept key, or a
// heatmap of the first step-time column over a two-key grid. Axis labels use the keys' own text
// (figures in base units, shown with SI prefixes).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hw/units.hpp"
#include "workloads/svg_text.hpp"
#include "workloads/sweep.hpp"

namespace ridge::workloads {
namespace {

std::string ms(double s) {
  return fmt::format("{:.4g}", s * 1e3);
}

constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"};

std::string line_plot(const Sweep& s, const std::vector<std::vector<double>>& r) {
  const double W = 640, H = 400, L = 80, R = 170, T = 40, B = 60;
  std::vector<std::size_t> cols;
  for (std::size_t c = 0; c < s.columns.size(); ++c)
    if (s.columns[c].ends_with("step_s")) cols.push_back(c);
  std::vector<double> xs;
  bool numeric = true;
  for (const auto& p : s.points) {
    double x = p.values[0].number;
    if (p.values[0].node.kind == hw::ConfigNode::Kind::kScalar && x == 0) {
      const hw::ParsedQuantity q = hw::parse_quantity(p.values[0].text, hw::Dimension::kCount);
      if (q.error.empty())
        x = q.value;
      else
        numeric = false;
    }
    xs.push_back(x);
  }
  const std::size_t n = xs.size();
  if (!numeric)
    for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<double>(i);
  double x0 = *std::min_element(xs.begin(), xs.end()), x1 = *std::max_element(xs.begin(), xs.end());
  const bool logx = numeric && x0 > 0 && x1 / x0 >= 16;
  auto fx = [&](double x) {
    if (x1 == x0) return L + (W - L - R) / 2;
    const double t = logx ? std::log(x / x0) / std::log(x1 / x0) : (x - x0) / (x1 - x0);
    return L + t * (W - L - R);
  };
  double y1 = 0;
  for (const auto& row : r)
    for (std::size_t c : cols) y1 = std::max(y1, row[c]);
  if (y1 <= 0) y1 = 1;
  auto fy = [&](double y) { return H - B - y / y1 * (H - T - B); };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"{0}\" height=\"{1}\" "
      "fill=\"white\"/>\n<text x=\"{2}\" y=\"22\" font-size=\"14\">{3}</text>\n",
      W, H, L, svg_escape("step time against " + s.keys[0]));
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n<line x1=\"{0}\" "
      "y1=\"{3}\" x2=\"{0}\" y2=\"{1}\" stroke=\"black\"/>\n",
      L, H - B, W - R, T);
  for (int i = 0; i <= 4; ++i) {
    const double y = y1 * i / 4;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>\n<text "
        "x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        L, fy(y), W - R, L - 6, fy(y) + 4, ms(y));
  }
  svg += fmt::format(
      "<text x=\"18\" y=\"{0}\" transform=\"rotate(-90 18 {0})\" text-anchor=\"middle\">step "
      "time (ms)</text>\n",
      (T + H - B) / 2);
  // x ticks: every point when few, else about eight.
  const std::size_t every = std::max<std::size_t>(1, n / 8);
  for (std::size_t i = 0; i < n; i += every)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", fx(xs[i]),
                       H - B + 16, svg_escape(sweep_value_text(s, 0, s.points[i].values[0])));
  svg +=
      fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", (L + W - R) / 2,
                  H - B + 40, svg_escape(s.keys[0]), logx ? " (log scale)" : "");
  for (std::size_t k = 0; k < cols.size(); ++k) {
    const char* c = kColours[k % 8];
    std::string pts;
    for (std::size_t i = 0; i < n; ++i)
      pts += fmt::format("{:.1f},{:.1f} ", fx(xs[i]), fy(r[i][cols[k]]));
    svg += fmt::format("<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"2\" points=\"{}\"/>\n",
                       c, pts);
    for (std::size_t i = 0; i < n; ++i)
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", fx(xs[i]),
                         fy(r[i][cols[k]]), c);
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" fill=\"{}\"/>\n<text x=\"{}\" "
        "y=\"{}\">{}</text>\n",
        W - R + 12, T + 18 * k, c, W - R + 30, T + 18 * k + 10, svg_escape(s.columns[cols[k]]));
  }
  return svg + "</svg>\n";
}

std::string heatmap(const Sweep& s, const std::vector<std::vector<double>>& r) {
  const std::size_t ny = s.grid_shape[0], nx = s.grid_shape[1];
  std::size_t col = 0;
  for (std::size_t c = 0; c < s.columns.size(); ++c)
    if (s.columns[c].ends_with("step_s")) {
      col = c;
      break;
    }
  const double L = 110, T = 40, cw = std::max(40.0, 480.0 / nx), ch = std::max(22.0, 320.0 / ny);
  const double W = L + cw * nx + 120, H = T + ch * ny + 60;
  double lo = r[0][col], hi = r[0][col];
  for (const auto& row : r) lo = std::min(lo, row[col]), hi = std::max(hi, row[col]);
  auto colour = [&](double v) {
    const double t = hi > lo ? (v - lo) / (hi - lo) : 0;  // 0: fastest (light), 1: slowest
    const int R = static_cast<int>(255 - t * (255 - 8)), G = static_cast<int>(245 - t * (245 - 48)),
              B = static_cast<int>(220 - t * (220 - 107));
    return fmt::format("#{:02x}{:02x}{:02x}", R, G, B);
  };
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"{0:.0f}\" height=\"{1:.0f}\" "
      "fill=\"white\"/>\n<text x=\"{2}\" y=\"22\" font-size=\"14\">{3}</text>\n",
      W, H, L, svg_escape(s.columns[col] + " (ms) over " + s.keys[0] + " x " + s.keys[1]));
  for (std::size_t y = 0; y < ny; ++y) {
    svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", L - 6,
                       T + ch * y + ch / 2 + 4,
                       svg_escape(sweep_value_text(s, 0, s.points[y * nx].values[0])));
    for (std::size_t x = 0; x < nx; ++x) {
      const double v = r[y * nx + x][col];
      const double t = hi > lo ? (v - lo) / (hi - lo) : 0;
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"/>\n<text "
          "x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\">{}</text>\n",
          L + cw * x, T + ch * y, cw, ch, colour(v), L + cw * x + cw / 2, T + ch * y + ch / 2 + 4,
          t > 0.5 ? "white" : "black", ms(v));
    }
  }
  for (std::size_t x = 0; x < nx; ++x)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                       L + cw * x + cw / 2, T + ch * ny + 16,
                       svg_escape(sweep_value_text(s, 1, s.points[x].values[1])));
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n",
                     L + cw * nx / 2, T + ch * ny + 38, svg_escape(s.keys[1]));
  svg += fmt::format(
      "<text x=\"12\" y=\"{:.1f}\" transform=\"rotate(-90 12 {:.1f})\" "
      "text-anchor=\"middle\">{}</text>\n",
      T + ch * ny / 2, T + ch * ny / 2, svg_escape(s.keys[0]));
  return svg + "</svg>\n";
}

}  // namespace

// "4.8e+12" (a figure in base units) as "4.80 TB/s"; parameters as written.
std::string sweep_value_text(const Sweep& s, std::size_t key, const SweepValue& v) {
  const std::string& k = s.keys[key];
  hw::Dimension d = hw::Dimension::kCount;
  if (k.ends_with("*")) return "x" + v.text;
  if (k.find("bandwidth") != std::string::npos)
    d = hw::Dimension::kBandwidth;
  else if (k == "l2_size")
    d = hw::Dimension::kBytes;
  else if (k == "clock")
    d = hw::Dimension::kFrequency;
  else if (k.rfind("tensor.", 0) == 0)
    d = hw::Dimension::kFlopRate;
  else
    return v.text;
  return hw::format_quantity(v.number, d);
}

std::string sweep_svg(const Sweep& s, const std::vector<std::vector<double>>& results) {
  if (results.empty() || results.size() != s.points.size()) return "";
  if (s.keys.size() == 1) return line_plot(s, results);
  if (s.keys.size() == 2 && s.grid_shape.size() == 2) return heatmap(s, results);
  return "";
}

}  // namespace ridge::workloads
