#include "workloads/serving_config.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"

namespace ridge::workloads {

// ---- random numbers ----

namespace {
std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

Rng::Rng(std::uint64_t seed) {
  for (auto& s : s_) s = splitmix(seed);
}

std::uint64_t Rng::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Rng::exponential(double rate) {
  return -std::log1p(-uniform()) / rate;
}

double Rng::normal() {
  // Box-Muller, keeping the second value.
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  const double u1 = 1.0 - uniform(), u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1)), th = 2.0 * M_PI * u2;
  spare_ = r * std::sin(th);
  has_spare_ = true;
  return r * std::cos(th);
}

double Rng::gamma(double shape, double scale) {
  // Marsaglia and Tsang (2000), "A simple method for generating gamma variables"; shape < 1 by
  // the boost gamma(k) = gamma(k + 1) * U^(1/k).
  if (shape < 1) return gamma(shape + 1, scale) * std::pow(uniform() + 1e-300, 1.0 / shape);
  const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = normal();
      v = 1.0 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const double u = uniform();
    if (u < 1 - 0.0331 * x * x * x * x) return d * v * scale;
    if (std::log(u + 1e-300) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v * scale;
  }
}

// ---- traces ----

namespace {

struct TraceErrors {
  std::string file;
  std::vector<hw::ConfigError> errors;
  void add(int line, int col, std::string msg) {
    if (errors.size() < 50) errors.push_back({file, line, col, "trace", std::move(msg)});
  }
};

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r");
  const auto e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool parse_double(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

bool parse_int(const std::string& s, long long& out) {
  if (s.empty()) return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// Checks one parsed row; fills `r` and reports what is wrong.
void check_row(TraceErrors& E, int line, int col_a, int col_p, int col_o, Request& r,
               double prev_arrival, long long max_context) {
  if (r.arrival_s < 0) E.add(line, col_a, "arrival_s: expected a time >= 0 s");
  if (r.arrival_s >= 0 && r.arrival_s < prev_arrival)
    E.add(line, col_a,
          fmt::format("arrival_s: {} is before the previous row's {}: arrivals must be sorted",
                      r.arrival_s, prev_arrival));
  if (r.prompt_tokens < 1) E.add(line, col_p, "prompt_tokens: expected an integer >= 1");
  if (max_context > 0 && r.prompt_tokens > max_context)
    E.add(line, col_p,
          fmt::format("prompt_tokens: {} exceeds the model's context of {} tokens", r.prompt_tokens,
                      max_context));
  if (r.output_tokens < 1) E.add(line, col_o, "output_tokens: expected an integer >= 1");
}

std::vector<Request> load_csv(std::istream& in, TraceErrors& E, long long max_context) {
  std::vector<Request> out;
  std::string line;
  int ln = 0;
  std::vector<std::string> header;
  int ia = -1, ip = -1, io = -1, ipr = -1, ipi = -1, ipt = -1;
  double prev = 0;
  while (std::getline(in, line)) {
    ++ln;
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    std::vector<std::string> f;
    std::vector<int> cols;
    {
      std::size_t start = 0;
      for (;;) {
        const auto c = line.find(',', start);
        f.push_back(trim(line.substr(start, c == std::string::npos ? c : c - start)));
        cols.push_back(static_cast<int>(start) + 1);
        if (c == std::string::npos) break;
        start = c + 1;
      }
    }
    if (header.empty()) {
      header = f;
      for (int i = 0; i < static_cast<int>(f.size()); ++i) {
        if (f[i] == "arrival_s")
          ia = i;
        else if (f[i] == "prompt_tokens")
          ip = i;
        else if (f[i] == "output_tokens")
          io = i;
        else if (f[i] == "priority")
          ipr = i;
        else if (f[i] == "prefix_id")
          ipi = i;
        else if (f[i] == "prefix_tokens")
          ipt = i;
        else
          E.add(ln, cols[i],
                fmt::format("unknown column '{}' (expected arrival_s, prompt_tokens, "
                            "output_tokens, priority, prefix_id, prefix_tokens)",
                            f[i]));
      }
      if (ia < 0 || ip < 0 || io < 0) {
        E.add(ln, 1, "header: expected columns arrival_s, prompt_tokens, output_tokens");
        return out;
      }
      continue;
    }
    if (f.size() != header.size()) {
      E.add(ln, 1, fmt::format("expected {} fields, found {}", header.size(), f.size()));
      continue;
    }
    Request r;
    r.id = static_cast<std::int64_t>(out.size());
    bool ok = true;
    if (!parse_double(f[ia], r.arrival_s)) {
      E.add(ln, cols[ia], fmt::format("arrival_s: expected a number, found '{}'", f[ia]));
      ok = false;
    }
    if (!parse_int(f[ip], r.prompt_tokens)) {
      E.add(ln, cols[ip], fmt::format("prompt_tokens: expected an integer, found '{}'", f[ip]));
      ok = false;
    }
    if (!parse_int(f[io], r.output_tokens)) {
      E.add(ln, cols[io], fmt::format("output_tokens: expected an integer, found '{}'", f[io]));
      ok = false;
    }
    long long pr = 0;
    if (ipr >= 0 && !parse_int(f[ipr], pr)) {
      E.add(ln, cols[ipr], fmt::format("priority: expected an integer, found '{}'", f[ipr]));
      ok = false;
    }
    r.priority = static_cast<int>(pr);
    const auto opt_int = [&](int i, const char* name, long long& v) {
      if (i >= 0 && !parse_int(f[i], v)) {
        E.add(ln, cols[i], fmt::format("{}: expected an integer, found '{}'", name, f[i]));
        ok = false;
      }
    };
    opt_int(ipi, "prefix_id", r.prefix_id);
    opt_int(ipt, "prefix_tokens", r.prefix_tokens);
    if (ok && ipt >= 0 && r.prompt_tokens >= 1 &&
        (r.prefix_tokens < 0 || r.prefix_tokens > r.prompt_tokens)) {
      E.add(ln, cols[ipt], "prefix_tokens: expected 0 to prompt_tokens");
      ok = false;
    }
    if (!ok) {
      // Still hold later rows to this row's arrival (when it parsed), so unsorted rows after a
      // bad one are found too.
      double a = 0;
      if (parse_double(f[ia], a)) prev = std::max(prev, a);
      continue;
    }
    check_row(E, ln, cols[ia], cols[ip], cols[io], r, prev, max_context);
    prev = std::max(prev, r.arrival_s);
    out.push_back(r);
  }
  if (header.empty()) E.add(1, 1, "empty trace: expected a header and at least one row");
  return out;
}

std::vector<Request> load_jsonl(std::istream& in, TraceErrors& E, long long max_context) {
  std::vector<Request> out;
  std::string line;
  int ln = 0;
  double prev = 0;
  while (std::getline(in, line)) {
    ++ln;
    if (trim(line).empty()) continue;
    if (const std::string deep = hw::json_depth_error(line); !deep.empty()) {
      E.add(ln, 1, deep);
      continue;
    }
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
      E.add(ln, 1, "expected one JSON object per line");
      continue;
    }
    Request r;
    r.id = static_cast<std::int64_t>(out.size());
    bool ok = true;
    for (const auto& [k, v] : j.items())
      if (k != "arrival_s" && k != "prompt_tokens" && k != "output_tokens" && k != "priority" &&
          k != "prefix_id" && k != "prefix_tokens")
        E.add(ln, 1, fmt::format("unknown key '{}'", k));
    const auto num = [&](const char* k, double& d) {
      if (!j.contains(k) || !j[k].is_number()) {
        E.add(ln, 1, fmt::format("{}: expected a number", k));
        ok = false;
      } else {
        d = j[k].get<double>();
      }
    };
    const auto integer = [&](const char* k, long long& d, bool required) {
      if (!j.contains(k)) {
        if (required) {
          E.add(ln, 1, fmt::format("{}: expected an integer", k));
          ok = false;
        }
      } else if (!j[k].is_number_integer()) {
        E.add(ln, 1, fmt::format("{}: expected an integer, found {}", k, j[k].dump()));
        ok = false;
      } else {
        d = j[k].get<long long>();
      }
    };
    num("arrival_s", r.arrival_s);
    integer("prompt_tokens", r.prompt_tokens, true);
    integer("output_tokens", r.output_tokens, true);
    long long pr = 0;
    integer("priority", pr, false);
    r.priority = static_cast<int>(pr);
    integer("prefix_id", r.prefix_id, false);
    integer("prefix_tokens", r.prefix_tokens, false);
    if (ok && j.contains("prefix_tokens") && r.prompt_tokens >= 1 &&
        (r.prefix_tokens < 0 || r.prefix_tokens > r.prompt_tokens)) {
      E.add(ln, 1, "prefix_tokens: expected 0 to prompt_tokens");
      ok = false;
    }
    if (!ok) continue;
    check_row(E, ln, 1, 1, 1, r, prev, max_context);
    prev = std::max(prev, r.arrival_s);
    out.push_back(r);
  }
  if (out.empty() && E.errors.empty()) E.add(1, 1, "empty trace: expected at least one request");
  return out;
}

}  // namespace

std::vector<Request> parse_trace(const std::string& text, const std::string& path,
                                 long long max_context) {
  TraceErrors E{path, {}};
  std::istringstream in(text);
  const bool jsonl = path.size() >= 6 && (path.ends_with(".jsonl") || path.ends_with(".json"));
  auto out = jsonl ? load_jsonl(in, E, max_context) : load_csv(in, E, max_context);
  if (!E.errors.empty()) throw hw::ConfigException(E.errors);
  return out;
}

std::vector<Request> load_trace(const std::string& path, long long max_context) {
  std::string text;
  try {
    text = hw::read_input_file(path);  // a regular file within the input size limit
  } catch (const std::invalid_argument& e) {
    TraceErrors E{path, {}};
    E.add(0, 0, fmt::format("cannot read the trace file: {}", e.what()));
    throw hw::ConfigException(E.errors);
  }
  return parse_trace(text, path, max_context);
}

// ---- sources ----

namespace {

class ListSource : public RequestSource {
 public:
  explicit ListSource(std::vector<Request> r) : r_(std::move(r)) {}
  std::optional<Request> next() override {
    if (i_ >= r_.size()) return std::nullopt;
    return r_[i_++];
  }

 private:
  std::vector<Request> r_;
  std::size_t i_ = 0;
};

class ProcessSource : public RequestSource {
 public:
  ProcessSource(const ArrivalSpec& a, std::vector<Request> lengths, long long max_context)
      : a_(a), lengths_(std::move(lengths)), max_context_(max_context), rng_(a.seed) {}
  std::optional<Request> next() override {
    if (n_ >= a_.requests) return std::nullopt;
    Request r;
    r.id = n_;
    if (a_.process == ArrivalProcess::kGamma) {
      // Gamma inter-arrival times with mean 1/rate and the given CV: shape 1/cv^2.
      const double k = 1.0 / (a_.cv * a_.cv);
      t_ += rng_.gamma(k, 1.0 / (a_.rate_per_s * k));
    } else {
      t_ += rng_.exponential(a_.rate_per_s);
    }
    r.arrival_s = t_;
    if (!lengths_.empty()) {
      const auto& l = lengths_[rng_.next() % lengths_.size()];
      r.prompt_tokens = l.prompt_tokens;
      r.output_tokens = l.output_tokens;
      r.priority = l.priority;
      r.prefix_id = l.prefix_id;
      r.prefix_tokens = l.prefix_tokens;
    } else {
      r.prompt_tokens = a_.prompt_tokens;
      r.output_tokens = a_.output_tokens;
    }
    if (max_context_ > 0)
      r.output_tokens =
          std::max<long long>(1, std::min(r.output_tokens, max_context_ - r.prompt_tokens));
    ++n_;
    return r;
  }

 private:
  ArrivalSpec a_;
  std::vector<Request> lengths_;
  long long max_context_;
  Rng rng_;
  long long n_ = 0;
  double t_ = 0;
};

}  // namespace

std::unique_ptr<RequestSource> list_source(std::vector<Request> requests) {
  return std::make_unique<ListSource>(std::move(requests));
}

std::unique_ptr<RequestSource> make_source(const ArrivalSpec& a, std::vector<Request> lengths,
                                           long long max_context) {
  if (a.process == ArrivalProcess::kTrace) {
    if (max_context > 0)
      for (auto& r : lengths)
        r.output_tokens =
            std::max<long long>(1, std::min(r.output_tokens, max_context - r.prompt_tokens));
    if (a.requests > 0 && static_cast<long long>(lengths.size()) > a.requests)
      lengths.resize(static_cast<std::size_t>(a.requests));
    return list_source(std::move(lengths));
  }
  return std::make_unique<ProcessSource>(a, std::move(lengths), max_context);
}

// ---- the study file ----

namespace {

std::string resolve_relative(const std::string& study_path, const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path rel = fs::path(study_path).parent_path() / name;
  std::error_code ec;  // a name the file system refuses is a missing file, reported by the reader
  if (fs::exists(rel, ec)) return rel.lexically_normal().string();
  return name;
}

template <typename E>
E choose(hw::MapReader& m, const char* key, const char* fallback,
         std::initializer_list<std::pair<const char*, E>> choices, E dflt) {
  const std::string v = m.text(key, fallback);
  std::string names;
  for (const auto& [n, e] : choices) {
    if (v == n) return e;
    names += names.empty() ? n : std::string(", ") + n;
  }
  if (const auto* node = m.child(key, false))
    m.sink().add(*node, m.key_path(key), fmt::format("expected one of {}", names));
  return dflt;
}

}  // namespace

ServeStudy load_serve_study(const std::string& path) {
  const hw::LoadedConfig cfg = hw::load_config_file(path);
  hw::ErrorSink sink;
  ServeStudy s;
  s.files = cfg.files;
  hw::MapReader top(cfg.root, "", sink);
  const std::string kind = top.text("kind", "serve");
  if (kind != "serve")
    sink.add(*top.child("kind", false), "kind", "expected serve (`ridge run` takes other studies)");
  std::vector<Request> trace;
  const hw::ConfigNode* trace_node = nullptr;
  if (auto m = top.map("serve")) {
    s.question = m->text("question", "");
    s.model_path = resolve_study_model(path, m->text("model"));
    const bool gpu_given = m->has("gpu");
    s.gpu_name = m->text("gpu", "h200");
    s.tp = static_cast<int>(m->integer("tp", 1, 1, 512));
    s.system = m->text("system", "");
    if (s.tp > 1 && s.system.empty())
      sink.add(*m->child("tp", false), m->key_path("tp"),
               "tp > 1 needs `system:` (the GPUs and links the replica spans, e.g. dgx-h200)");
    if (!s.system.empty() && gpu_given)
      sink.add(*m->child("gpu", false), m->key_path("gpu"),
               "give either `gpu` or `system` (a system names its own GPU)");
    s.mode = choose<TimingMode>(*m, "mode", "fast",
                                {{"fast", TimingMode::kFast}, {"detailed", TimingMode::kDetailed}},
                                TimingMode::kFast);
    if (auto a = m->map("arrivals")) {
      auto& A = s.arrivals;
      A.process = choose<ArrivalProcess>(*a, "process", "poisson",
                                         {{"poisson", ArrivalProcess::kPoisson},
                                          {"gamma", ArrivalProcess::kGamma},
                                          {"trace", ArrivalProcess::kTrace}},
                                         ArrivalProcess::kPoisson);
      const bool proc = A.process != ArrivalProcess::kTrace;
      A.rate_per_s = a->quantity("rate_per_s", hw::Dimension::kCount,
                                 proc ? std::nullopt : std::optional<double>(1.0), 1e-9, 1e9);
      A.cv = a->quantity("cv", hw::Dimension::kCount, 1.0, 0.05, 100);
      A.seed = static_cast<std::uint64_t>(a->integer("seed", 1, 0, 1LL << 53));
      A.requests = a->integer("requests", proc ? 1000 : 0, 0, 1LL << 40);
      if (a->has("trace")) {
        trace_node = a->child("trace", false);
        A.trace_path = resolve_relative(path, trace_node->scalar);
      } else if (!proc) {
        a->child("trace", true);
      }
      A.prompt_tokens = a->integer(
          "prompt_tokens",
          A.trace_path.empty() && proc ? std::nullopt : std::optional<long long>(0), 0, 1 << 24);
      A.output_tokens = a->integer(
          "output_tokens",
          A.trace_path.empty() && proc ? std::nullopt : std::optional<long long>(0), 0, 1 << 24);
      a->finish();
    }
    if (auto c = m->map("scheduler", false)) {
      auto& S = s.scheduler;
      S.policy = choose<SchedulerPolicy>(*c, "policy", "chunked",
                                         {{"static", SchedulerPolicy::kStatic},
                                          {"prefill_first", SchedulerPolicy::kPrefillFirst},
                                          {"continuous", SchedulerPolicy::kContinuous},
                                          {"chunked", SchedulerPolicy::kChunked}},
                                         SchedulerPolicy::kChunked);
      S.max_num_seqs = c->integer("max_num_seqs", 256, 1, 1 << 20);
      S.max_batched_tokens = c->integer("max_batched_tokens", 8192, 1, 1 << 24);
      S.priority = choose<bool>(*c, "order", "fcfs", {{"fcfs", false}, {"priority", true}}, false);
      S.preemption =
          choose<Preemption>(*c, "preemption", "recompute",
                             {{"recompute", Preemption::kRecompute}, {"swap", Preemption::kSwap}},
                             Preemption::kRecompute);
      S.block_size = c->integer("block_size", 16, 1, 4096);
      S.gpu_memory_utilization =
          c->quantity("gpu_memory_utilization", hw::Dimension::kFraction, 0.9, 0.01, 1.0);
      S.num_blocks = c->integer("num_blocks", 0, 0, 1LL << 40);
      S.prefix_caching = c->boolean("prefix_caching", false);
      if (S.prefix_caching && S.preemption == Preemption::kSwap)
        c->sink().add(*c->child("prefix_caching", false), c->key_path("prefix_caching"),
                      "prefix caching with swap preemption is not modelled; use recompute");
      c->finish();
    }
    if (m->has("engine")) {
      if (auto e = m->map("engine")) {
        s.engine.cpu_overhead_s =
            e->quantity("cpu_overhead", hw::Dimension::kTime, s.engine.cpu_overhead_s, 0, 10);
        s.engine.cuda_graph = e->boolean("cuda_graph", true);
        for (double v : e->quantity_list("capture_sizes", hw::Dimension::kCount))
          s.engine.capture_sizes.push_back(static_cast<long long>(v));
        s.engine.bucketing = e->boolean("bucketing", true);
        const int engine_model =
            choose<int>(*e, "model", "vllm", {{"vllm", 0}, {"hf_eager", 1}, {"hf_graph", 2}}, 0);
        s.engine.hf_eager = engine_model != 0;
        s.engine.hf_graph = engine_model == 2;
        s.engine.graph_kv_window =
            e->integer("graph_kv_window", s.engine.graph_kv_window, 1, 1LL << 20);
        s.engine.row_move_s = e->quantity("row_move", hw::Dimension::kTime, 0.0, 0, 1.0);
        s.engine.row_shift_s = e->quantity("row_shift", hw::Dimension::kTime, 0.0, 0, 1.0);
        if ((s.engine.row_move_s > 0 || s.engine.row_shift_s > 0) && engine_model == 0)
          e->sink().add(*e->child("model", false), e->key_path("model"),
                        "row_move and row_shift describe the hf_eager/hf_graph loop; got vllm");
        if (s.engine.hf_eager && s.tp > 1)
          e->sink().add(*e->child("model", false), e->key_path("model"),
                        "hf_eager and hf_graph run one GPU; tp > 1 needs model: vllm");
        s.engine.sdpa_new_shape_decode_s =
            e->quantity("sdpa_new_shape_decode", hw::Dimension::kTime,
                        s.engine.sdpa_new_shape_decode_s, 0, 1e3);
        s.engine.sdpa_new_shape_prefill_s =
            e->quantity("sdpa_new_shape_prefill", hw::Dimension::kTime,
                        s.engine.sdpa_new_shape_prefill_s, 0, 1e3);
        s.engine.host_probe_s = e->quantity("host_probe", hw::Dimension::kTime, 0.0, 0, 1.0);
        s.engine.host_probe_share = e->quantity("host_probe_share", hw::Dimension::kFraction,
                                                s.engine.host_probe_share, 0, 1);
        s.engine.sdpa_build_probe_share =
            e->quantity("sdpa_build_probe_share", hw::Dimension::kFraction,
                        s.engine.sdpa_build_probe_share, 0, 1);
        const auto trace = e->quantity_list("host_probe_trace", hw::Dimension::kTime);
        if (!trace.empty()) {
          const auto bad = [&](const std::string& what) {
            e->sink().add(*e->child("host_probe_trace", false), e->key_path("host_probe_trace"),
                          what);
          };
          if (s.engine.host_probe_s > 0) bad("give host_probe or host_probe_trace, not both");
          if (trace.size() % 2 != 0) {
            bad("expected a flat list of (time, probe) pairs; got " + std::to_string(trace.size()) +
                " numbers, not a multiple of 2");
          } else {
            for (std::size_t i = 0; i < trace.size(); i += 2) {
              const double t = trace[i], p = trace[i + 1];
              if (!(t >= 0) || (i > 0 && t < trace[i - 2]) || !(p > 0) || p > 1.0) {
                bad("pair " + std::to_string(i / 2) +
                    ": expected time >= 0 and not before the pair before it, and 0 < probe <= 1 "
                    "s");
                s.engine.host_probe_trace.clear();
                break;
              }
              s.engine.host_probe_trace.emplace_back(t, p);
            }
          }
        }
        const auto seen = e->quantity_list("sdpa_seen_shapes", hw::Dimension::kCount);
        if (seen.size() % 3 != 0) {
          e->sink().add(*e->child("sdpa_seen_shapes", false), e->key_path("sdpa_seen_shapes"),
                        "expected a flat list of (batch, q_len, kv_len) triples; got " +
                            std::to_string(seen.size()) + " numbers, not a multiple of 3");
        } else {
          for (std::size_t i = 0; i < seen.size(); i += 3) {
            const std::array<long long, 3> t{static_cast<long long>(seen[i]),
                                             static_cast<long long>(seen[i + 1]),
                                             static_cast<long long>(seen[i + 2])};
            if (t[0] < 1 || t[1] < 1 || t[2] < t[1] || double(t[0]) != seen[i] ||
                double(t[1]) != seen[i + 1] || double(t[2]) != seen[i + 2]) {
              e->sink().add(*e->child("sdpa_seen_shapes", false), e->key_path("sdpa_seen_shapes"),
                            "triple " + std::to_string(i / 3) +
                                ": expected whole numbers batch >= 1, q_len >= 1, kv_len >= q_len");
              break;
            }
            s.engine.sdpa_seen_shapes.push_back(t);
          }
        }
        e->finish();
      }
    }
    if (s.engine.capture_sizes.empty())
      s.engine.capture_sizes = vllm_capture_sizes(s.scheduler.max_num_seqs);
    if (m->has("slo")) {
      if (auto o = m->map("slo")) {
        s.slo.ttft_s = o->quantity("ttft", hw::Dimension::kTime, 0.0, 0, 1e6);
        s.slo.tpot_s = o->quantity("tpot", hw::Dimension::kTime, 0.0, 0, 1e6);
        s.slo.e2e_s = o->quantity("e2e", hw::Dimension::kTime, 0.0, 0, 1e6);
        s.slo.percentile = o->quantity("percentile", hw::Dimension::kCount, 90, 1, 99.99);
        o->finish();
      }
    }
    if (m->has("disaggregated")) {
      if (auto d = m->map("disaggregated")) {
        s.disagg.enabled = true;
        s.disagg.prefill_gpus = static_cast<int>(d->integer("prefill_gpus", 1, 1, 4096));
        s.disagg.decode_gpus = static_cast<int>(d->integer("decode_gpus", 1, 1, 4096));
        s.disagg.link_bytes_per_s =
            d->quantity("link_bandwidth", hw::Dimension::kBandwidth, 0.0, 0, 1e15);
        s.disagg.link_latency_s = d->quantity("link_latency", hw::Dimension::kTime, 10e-6, 0, 1);
        if (s.tp > 1)
          d->sink().add(*m->child("disaggregated", false), m->key_path("disaggregated"),
                        "disaggregated pools with tp > 1 are not modelled");
        d->finish();
      }
    }
    if (m->has("capacity")) {
      if (auto c = m->map("capacity")) {
        s.capacity.enabled = true;
        s.capacity.requests = c->integer("requests", 2000, 10, 1LL << 30);
        s.capacity.target_rate_per_s =
            c->quantity("target_rate_per_s", hw::Dimension::kCount, 0.0, 0, 1e9);
        s.capacity.max_rate_per_s =
            c->quantity("max_rate_per_s", hw::Dimension::kCount, 1000.0, 1e-6, 1e9);
        if (s.slo.ttft_s <= 0 && s.slo.tpot_s <= 0 && s.slo.e2e_s <= 0)
          sink.add(*m->child("capacity", false), m->key_path("capacity"),
                   "capacity needs an slo (ttft, tpot or e2e)");
        c->finish();
      }
    }
    m->finish();
  }
  top.finish();
  sink.throw_if_any();
  return s;
}

}  // namespace ridge::workloads
