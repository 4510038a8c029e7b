#include "workloads/e2e_compare.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "hw/json_number.hpp"
#include "models/records.hpp"
#include "workloads/analysis.hpp"
#include "workloads/diffusion.hpp"
#include "workloads/executor.hpp"
#include "workloads/file_keys.hpp"
#include "workloads/transformer.hpp"

namespace ridge::workloads {
namespace {

// p[k], or `fallback` when absent or null; integers through hw::json_integer_at (a float beyond
// the type, or with a fraction, is nlohmann's type_error, not a silently converted value).
template <typename T>
T get(const nlohmann::json& p, const char* k, T fallback) {
  if (!p.contains(k) || p[k].is_null()) return fallback;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
    return hw::json_integer_at<T>(p[k]);
  else
    return p[k].get<T>();
}

// An integer params key of a record at `at`, in the range the same key has in model or study
// files (workloads/file_keys.cpp), or `fallback` when absent or null: an error naming the record
// and the key otherwise (heads 0 divided d_model by zero: SIGFPE).
long long count(const nlohmann::json& p, const std::string& at, const char* key,
                const FileKey& range, long long fallback) {
  if (!p.contains(key) || p[key].is_null()) return fallback;
  const auto v = hw::json_integer<long long>(p[key]);
  if (!v || *v < range.lo || *v > range.hi)
    throw std::invalid_argument(
        fmt::format("{}: params.{}: expected an integer from {} to {}, got {}", at, key, range.lo,
                    range.hi, p[key].dump()));
  return *v;
}
long long model_count(const nlohmann::json& p, const std::string& at, const char* key,
                      const char* model_key, long long fallback) {
  return count(p, at, key, file_key(model_keys(), fmt::format("model.{}", model_key)), fallback);
}
long long study_count(const nlohmann::json& p, const std::string& at, const char* key,
                      const char* study_key, long long fallback) {
  return count(p, at, key, file_key(study_keys(), fmt::format("study.workloads[].{}", study_key)),
               fallback);
}

TransformerConfig transformer_from(const nlohmann::json& p, bool llama, const std::string& at) {
  TransformerConfig m;
  m.name = get<std::string>(p, "model", "e2e");
  m.style = llama ? "llama" : "gpt";
  m.layers = static_cast<int>(model_count(p, at, "layers", "layers", 1));
  m.d_model = model_count(p, at, "d_model", "d_model", 768);
  m.heads = static_cast<int>(model_count(p, at, "heads", "heads", 12));
  m.kv_heads = static_cast<int>(model_count(p, at, "kv_heads", "kv_heads", m.heads));
  const bool explicit_head_dim = p.contains("head_dim") && !p["head_dim"].is_null();
  if (!explicit_head_dim && m.d_model % m.heads != 0)
    throw std::invalid_argument(
        fmt::format("{}: params.heads: must divide d_model ({} / {} leaves {}), or give head_dim",
                    at, m.d_model, m.heads, m.d_model % m.heads));
  if (m.heads % m.kv_heads != 0)
    throw std::invalid_argument(fmt::format("{}: params.kv_heads: must divide heads ({} % {} = {})",
                                            at, m.heads, m.kv_heads, m.heads % m.kv_heads));
  m.head_dim = static_cast<int>(model_count(p, at, "head_dim", "head_dim", m.d_model / m.heads));
  m.ffn = model_count(p, at, "ffn", "ffn", 4 * m.d_model);
  m.vocab = model_count(p, at, "vocab", "vocab", 50304);
  m.tied_embeddings = get<bool>(p, "tied_embeddings", !llama);
  m.gated_mlp = llama;
  m.activation = llama ? "silu" : "gelu_tanh";
  m.norm = llama ? NormType::kRmsNorm : NormType::kLayerNorm;
  m.bias = !llama;
  m.position = llama ? "rope" : "learned";
  m.max_positions = model_count(p, at, "max_len", "max_positions",
                                model_count(p, at, "seq", "max_positions", 1024));
  return m;
}

// Where a record sits, for error messages: "records[3] (e2e/train/gpt2-small/b8_s1024)".
std::string where(std::size_t i, const nlohmann::json& r) {
  return r.contains("id") && r["id"].is_string()
             ? fmt::format("records[{}] ({})", i, r["id"].get<std::string>())
             : fmt::format("records[{}]", i);
}

// A finite, non-negative number at `v`, or an error naming the record and the field.
double number(const nlohmann::json& v, const std::string& at, const std::string& field) {
  if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0)
    throw std::invalid_argument(
        fmt::format("{}: {}: expected a non-negative number, got {}", at, field, v.dump()));
  return v.get<double>();
}

// An array of such numbers at r[a][b] (empty if absent).
std::vector<double> numbers(const nlohmann::json& r, const char* a, const char* b,
                            const std::string& at) {
  std::vector<double> out;
  if (!r.contains(a) || !r[a].is_object() || !r[a].contains(b)) return out;
  const nlohmann::json& v = r[a][b];
  const std::string field = std::string(a) + "." + b;
  if (!v.is_array())
    throw std::invalid_argument(fmt::format("{}: {}: expected an array of numbers", at, field));
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(number(v[i], at, fmt::format("{}[{}]", field, i)));
  return out;
}

// The run's fastest CPU probe (0 if it has none).
double fastest_probe(const nlohmann::json& recs) {
  double best = 0;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    for (double x : numbers(recs[i], "cpu_probe", "samples_us", where(i, recs[i])))
      if (x > 0 && (best == 0 || x < best)) best = x;
  }
  return best;
}

// The measured step time of record `r` (see E2eRow and kNominalProbeRatio), into `row`. With
// `probe_ref_us` > 0 (a host-bound case), each nominal step counts at the model's host speed:
// its time x probe_ref_us / its probe.
void measure(const nlohmann::json& r, const std::string& at, double fastest, double probe_ref_us,
             E2eRow& row) {
  row.measured_s = number(r["timing"]["median_us"], at, "timing.median_us") * 1e-6;
  const std::vector<double> probes = numbers(r, "cpu_probe", "samples_us", at);
  if (fastest <= 0 || probes.empty()) return;
  const std::vector<double> steps = numbers(r, "timing", "samples_us", at);
  if (steps.size() != probes.size())
    throw std::invalid_argument(fmt::format(
        "{}: cpu_probe.samples_us has {} values, timing.samples_us {}: expected one probe per "
        "timed call",
        at, probes.size(), steps.size()));
  std::vector<double> kept;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (probes[i] > kNominalProbeRatio * fastest) continue;
    if (probes[i] <= 0)
      throw std::invalid_argument(
          fmt::format("{}: cpu_probe.samples_us[{}]: expected a positive probe time, got {}", at, i,
                      probes[i]));
    kept.push_back(probe_ref_us > 0 ? steps[i] * probe_ref_us / probes[i] : steps[i]);
  }
  row.steps = static_cast<int>(steps.size());
  row.steps_kept = static_cast<int>(kept.size());
  if (kept.size() >= 3) {  // linear-interpolated, as validate/e2e/e2e_common.py's percentile
    row.measured_s = models::percentile(std::move(kept), 50) * 1e-6;
    row.host_normalized = probe_ref_us > 0;
  } else {
    row.host_slowed = true;
  }
}

std::string bound_of(const Graph& g, const Execution& ex) {
  const CriticalPath cp = critical_path(g, ex);
  const double host = cp.by_class_s.count("host_launch") ? cp.by_class_s.at("host_launch") : 0.0;
  return host > 0.5 * ex.step_time_s ? "host" : "GPU";
}

// The DiT model of the e2e diffusion records, loaded when a record first needs it; null when its
// model file is missing.
class E2eDit {
 public:
  const DiffusionConfig* get() {
    if (!tried_) {
      tried_ = true;
      try {
        cfg_ = load_model_config("dit-xl2-image-e2e").diffusion();
      } catch (const std::exception&) {
      }
    }
    return cfg_ ? &*cfg_ : nullptr;
  }

 private:
  bool tried_ = false;
  std::optional<DiffusionConfig> cfg_;
};

// The workload graph of record `r` (index `ri`), rebuilt from its op and params, or nullopt for an
// op compare_e2e does not model (and the DiT stages when the dit-xl2-image-e2e model file is
// missing). Throws std::invalid_argument naming the record and the key.
std::optional<Graph> record_graph(const nlohmann::json& r, std::size_t ri, E2eDit& dits) {
  const std::string op = r["op"];
  const nlohmann::json& p = r.contains("params") ? r["params"] : nlohmann::json::object();
  const std::string at = where(ri, r);
  if (op == "e2e_train") {
    TrainOptions o;
    o.micro_batch = study_count(p, at, "micro_batch", "micro_batch", 1);
    o.seq = study_count(p, at, "seq", "seq", 1024);
    o.grad_accum = static_cast<int>(study_count(p, at, "grad_accum", "grad_accum", 1));
    return build_train_step(transformer_from(p, false, at), o);
  }
  if (op == "e2e_prefill" || op == "e2e_decode") {
    InferenceOptions o;
    o.batch = study_count(p, at, "batch", "batch", 1);
    o.prompt = study_count(p, at, "prompt_len", "prompt", 1024);
    o.context = study_count(p, at, "context", "context", 1024);
    o.max_len = study_count(p, at, "max_len", "max_len", 2048);
    o.cuda_graph = get<bool>(p, "graph", false);
    const TransformerConfig m = transformer_from(p, true, at);
    return op == "e2e_prefill" ? build_prefill(m, o) : build_decode_step(m, o);
  }
  if (op != "e2e_diffusion" && op != "e2e_stage") return std::nullopt;
  const DiffusionConfig* dit = dits.get();
  if (!dit) return std::nullopt;
  if (op == "e2e_diffusion") {
    DiffusionOptions o;
    o.steps = static_cast<int>(study_count(p, at, "K", "steps", 20));
    return build_diffusion_pipeline(*dit, o);
  }
  const std::string stage = get<std::string>(p, "stage", "");
  if (stage == "denoiser") return build_denoiser_call(*dit);
  if (stage == "text_encoder") return build_text_encoder_call(*dit);
  if (stage == "vae_decode") return build_vae_decode_call(*dit);
  return std::nullopt;
}

// The records array of a records file (ridge.records/1) or a bare array.
const nlohmann::json& records_of(const nlohmann::json& doc) {
  const nlohmann::json& recs = doc.is_object() && doc.contains("records") ? doc["records"] : doc;
  if (!recs.is_array())
    throw std::invalid_argument("expected a \"records\" array (ridge.records/1) or an array");
  return recs;
}

// A record compare_e2e compares: an op and a measured median.
bool comparable(const nlohmann::json& r) {
  return r.contains("op") && r.contains("timing") && r["timing"].contains("median_us");
}

// Calls fn(record, index) for every record compare_e2e compares, in order. A field of the wrong
// JSON type (a string for `graph`, a number for `stage`) is nlohmann's type_error: reported with
// the record it is in.
template <class Fn>
void each_record(const nlohmann::json& recs, Fn&& fn) {
  std::size_t ri = 0;
  try {
    for (; ri < recs.size(); ++ri)
      if (comparable(recs[ri])) fn(recs[ri], ri);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("{}: {}", where(ri, recs[ri]), e.what()));
  }
}

}  // namespace

std::vector<E2eRow> compare_e2e(const nlohmann::json& doc, const hw::GpuSpec& gpu,
                                E2eCache* cache) {
  std::vector<E2eRow> rows;
  const nlohmann::json& recs = records_of(doc);
  const double fastest = fastest_probe(recs);
  const double probe_ref_us = gpu.param("host_probe_us") * 1e6;
  E2eDit dit;
  each_record(recs, [&](const nlohmann::json& r, std::size_t ri) {
    const std::string op = r["op"];
    const nlohmann::json& p = r.contains("params") ? r["params"] : nlohmann::json::object();
    E2eRow row;
    row.id = get<std::string>(r, "id", op);
    row.op = op;
    if (r.contains("profile") && r["profile"].is_object())
      row.measured_kernels = get<long long>(r["profile"], "kernel_launches", -1);
    const std::string key = op + " " + p.dump();
    // Measured once the simulation says whether the case is host-bound: its nominal steps then
    // count at the model's host speed.
    auto finish = [&](E2eRow& x) {
      measure(r, where(ri, r), fastest, x.bound == "host" ? probe_ref_us : 0, x);
      x.error = (x.predicted_s - x.measured_s) / x.measured_s;
      rows.push_back(x);
    };
    if (cache) {
      if (auto it = cache->entries.find(key); it != cache->entries.end()) {
        const E2eCache::Entry& c = it->second;
        row.predicted_s = c.step_s;
        row.predicted_kernels = c.kernels;
        row.bound = c.bound;
        row.dispatches = c.dispatches;
        row.host_busy_s = c.host_busy_s;
        finish(row);
        return;
      }
    }
    const std::optional<Graph> built = record_graph(r, ri, dit);
    if (!built) return;
    const Graph& g = *built;
    const Execution ex = execute(g, gpu);
    row.predicted_s = ex.step_time_s;
    row.predicted_kernels = ex.kernels;
    row.bound = bound_of(g, ex);
    row.dispatches = g.captured_end > g.captured_begin ? 0 : g.dispatch_count();
    row.host_busy_s = ex.host_busy_s;
    if (cache)
      cache->entries[key] = {row.predicted_s, row.host_busy_s, row.predicted_kernels,
                             row.dispatches, row.bound};
    finish(row);
  });
  return rows;
}

std::vector<Graph> e2e_graphs(const nlohmann::json& doc) {
  std::vector<Graph> out;
  const nlohmann::json& recs = records_of(doc);
  const double fastest = fastest_probe(recs);
  E2eDit dit;
  each_record(recs, [&](const nlohmann::json& r, std::size_t ri) {
    std::optional<Graph> g = record_graph(r, ri, dit);
    if (!g) return;
    E2eRow row;
    measure(r, where(ri, r), fastest, 0, row);
    out.push_back(std::move(*g));
  });
  return out;
}

std::vector<E2eRow> pooled_rows(const std::vector<E2eRun>& runs) {
  std::vector<E2eRow> out;
  if (runs.empty()) return out;
  for (const auto& r0 : runs.front().rows) {
    std::vector<double> nominal, all;
    for (const auto& run : runs) {
      for (const auto& x : run.rows) {
        if (x.id != r0.id) continue;
        all.push_back(x.measured_s);
        if (x.steps > 0 && !x.host_slowed) nominal.push_back(x.measured_s);
      }
    }
    const std::vector<double>& use = nominal.size() >= 3 ? nominal : all;
    if (use.empty()) continue;
    E2eRow p = r0;
    p.measured_s = models::percentile(use, 50);
    p.error = (p.predicted_s - p.measured_s) / p.measured_s;
    p.steps = static_cast<int>(use.size());
    p.steps_kept = p.steps;
    p.host_slowed = false;
    out.push_back(p);
  }
  return out;
}

std::string e2e_markdown(const std::vector<E2eRun>& runs, const std::string& gpu_name,
                         double host_python_scale, double probe_ref_us) {
  std::string cmd = "ridge run";
  for (const auto& r : runs) cmd += " --e2e-table " + r.source;
  std::string o = fmt::format(
      "# End-to-end validation on {}\n\nGenerated by `{} --gpu {} --out "
      "docs/e2e-validation.md` (do not edit by hand).\nPredicted: Ridge's builders (workloads/) "
      "executed on the simulator in fast mode; measured: median CUDA-event time per call "
      "(validate/e2e), one column per run (a lease of the lent H200); in runs with CPU probes, "
      "the median of the steps issued at nominal host speed (see below), and for a case the "
      "simulation finds host-bound each such step at the model's host speed: its time x "
      "host_probe_us ({:.0f} us) / its probe.\n\n",
      gpu_name, cmd, gpu_name, probe_ref_us);
  o += "| case | predicted | bound |";
  std::string rule = "|---|---:|---|";
  for (std::size_t k = 0; k < runs.size(); ++k) {
    o += fmt::format(" run {} | error |", k + 1);
    rule += "---:|---:|";
  }
  o += " median of runs | error | spread | kernels measured | kernels predicted |\n" + rule +
       "---:|---:|---:|---:|---:|\n";
  const std::vector<E2eRow> pooled = pooled_rows(runs);
  double pooled_sum = 0;
  int pooled_within = 0;
  for (const auto& p : pooled) {
    pooled_sum += std::fabs(p.error);
    if (std::fabs(p.error) <= 0.10) ++pooled_within;
  }
  std::vector<double> sum(runs.size(), 0.0);
  std::vector<int> n(runs.size(), 0);
  if (runs.empty()) return o;
  for (const auto& r0 : runs.front().rows) {
    o += fmt::format("| `{}` | {:.3f} ms | {} |", r0.id, r0.predicted_s * 1e3, r0.bound);
    std::vector<double> seen;
    long long kernels = -1;
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const E2eRow* r = nullptr;
      for (const auto& x : runs[k].rows)
        if (x.id == r0.id) r = &x;
      if (!r) {
        o += " - | - |";
        continue;
      }
      o += fmt::format(" {:.3f} ms | {:+.1f}% |", r->measured_s * 1e3, 100 * r->error);
      sum[k] += std::fabs(r->error);
      ++n[k];
      seen.push_back(r->measured_s);
      if (r->measured_kernels >= 0) kernels = r->measured_kernels;
    }
    std::sort(seen.begin(), seen.end());
    const double med = seen.empty() ? 0 : seen[seen.size() / 2];
    const E2eRow* pr = nullptr;
    for (const auto& p : pooled)
      if (p.id == r0.id) pr = &p;
    o += pr ? fmt::format(" {:.3f} ms | {:+.1f}% |", pr->measured_s * 1e3, 100 * pr->error)
            : std::string(" - | - |");
    o += fmt::format(" {} | {} | {} |\n",
                     seen.size() > 1 && med > 0
                         ? fmt::format("{:.0f}%", 100 * (seen.back() - seen.front()) / med)
                         : std::string("-"),
                     kernels >= 0 ? std::to_string(kernels) : "-", r0.predicted_kernels);
  }
  o += "\nMean absolute error:";
  double all = 0;
  int all_n = 0;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (n[k] == 0) continue;
    o += fmt::format(" run {} ({}) {:.1f}% over {} cases;", k + 1, runs[k].source,
                     100 * sum[k] / n[k], n[k]);
    all += sum[k];
    all_n += n[k];
  }
  if (all_n > 0) o += fmt::format(" all runs {:.1f}%.\n", 100 * all / all_n);
  if (!pooled.empty())
    o += fmt::format(
        "\nMedian of runs: each case's median over the runs with CPU probes that measured it at "
        "nominal host speed (at least 3 steps), where at least 3 runs did; else over all runs. "
        "Against it: {} of {} cases within 10%, mean absolute error {:.1f}%.\n",
        pooled_within, pooled.size(), 100 * pooled_sum / static_cast<double>(pooled.size()));
  for (std::size_t k = 0; k < runs.size(); ++k) {
    int steps = 0, kept = 0;
    std::string slowed;
    for (const auto& r : runs[k].rows) {
      steps += r.steps;
      kept += r.steps_kept;
      if (r.host_slowed) slowed += fmt::format(" `{}` ({} of {})", r.id, r.steps_kept, r.steps);
    }
    if (steps == 0) continue;
    o += fmt::format(
        "\nRun {}: {} of {} timed steps issued at nominal host speed (CPU probe <= {:g} x the "
        "run's fastest; validate/e2e/e2e_common.py) and compared; {}.\n",
        k + 1, kept, steps, kNominalProbeRatio,
        slowed.empty() ? "every case had at least 3 such steps"
                       : "compared on all their steps, with fewer than 3 such steps:" + slowed);
  }
  o += fmt::format(
      "\nSpread: (largest - smallest) / median of the runs' measurements of a case: how well the "
      "measurement itself repeats across leases. Host-bound eager cases are priced with the "
      "host_* costs of hw/model_params.cpp (tight-loop measurements) times host_python_scale = "
      "{:.3g} (fitted by `ridge calibrate --e2e` on the runs' training split); CUDA-graph cases "
      "carry no eager host cost: their error is the kernel model's and graph_kernel_saving's.\n",
      host_python_scale);
  return o;
}

}  // namespace ridge::workloads
