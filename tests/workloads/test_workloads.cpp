#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/analysis.hpp"
#include "workloads/builder_util.hpp"
#include "workloads/e2e_compare.hpp"
#include "workloads/executor.hpp"
#include "workloads/study.hpp"
#include "workloads/transformer.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

const hw::GpuSpec& h200() {
  static const hw::GpuSpec g = hw::find_gpu("h200");
  return g;
}

// The H200 with free launches and no inter-kernel gap: what the seed's closed forms assume.
hw::GpuSpec ideal_gpu() {
  hw::GpuSpec g = h200();
  for (const char* k : {"host_launch_eager", "host_launch_cuda", "graph_launch_per_kernel",
                        "kernel_gap", "host_python_scale", "host_autograd_forward",
                        "host_autograd_kernel", "host_optimizer_base", "host_optimizer_tensor"})
    g.model[k] = 0;
  return g;
}

int fixed(Graph& g, const std::string& name, Category c, double seconds, int stream = 0,
          std::vector<int> deps = {}) {
  OpNode n;
  n.name = name;
  n.kind = NodeKind::kKernel;
  n.category = c;
  n.op = models::OpSpec::parse("elementwise", {"op=copy", "n=1"});
  n.fixed_time_s = seconds;
  n.stream = stream;
  return g.add(n, deps);
}

void sync(Graph& g) {
  g.add(host_node("sync", NodeKind::kSync));
}

// Seed 003 sec. 8: T_total ~= K T_denoiser + T_fixed, with 40 ms per denoiser call and 200 ms of
// fixed work (text encoder 20 ms, VAE 150 ms, copy-out 30 ms: any split summing to 200).
Graph seed_pipeline(int k) {
  Graph g;
  fixed(g, "text", Category::kGemm, 0.020);
  for (int i = 0; i < k; ++i) fixed(g, "denoiser", Category::kAttention, 0.040);
  fixed(g, "vae", Category::kGemm, 0.150);
  fixed(g, "copy_out", Category::kMemoryCopy, 0.030);
  sync(g);
  return g;
}

double sum_path(const CriticalPath& p) {
  double s = 0;
  for (const auto& [k, v] : p.by_class_s) s += v;
  return s;
}

}  // namespace

TEST_CASE("diffusion pipeline time is K T_denoiser + T_fixed (seed 003 sec. 8)", "[analytic]") {
  const hw::GpuSpec g = ideal_gpu();
  // K = 20: 20 x 40 + 200 = 1000 ms; K = 4: 4 x 40 + 200 = 360 ms; speed-up 1000/360 = 2.78x.
  const double t20 = execute(seed_pipeline(20), g).step_time_s;
  const double t4 = execute(seed_pipeline(4), g).step_time_s;
  const double t1 = execute(seed_pipeline(1), g).step_time_s;
  CHECK(t20 == Approx(1.000).epsilon(1e-9));
  CHECK(t4 == Approx(0.360).epsilon(1e-9));
  CHECK(t20 / t4 == Approx(2.78).margin(0.005));
  // K = 1: fixed work is 200 / 240 = 83% of the pipeline.
  CHECK(0.200 / t1 == Approx(0.8333).margin(0.001));
}

TEST_CASE("training memory of a 70B model from first principles (16 bytes per parameter)",
          "[analytic]") {
  // Llama-3 70B: embeddings 128256 x 8192 twice (untied) = 2.10e9; per layer q,o 2 x 8192^2, k,v
  // 2 x 8192 x 1024, SwiGLU 3 x 8192 x 28672, two RMSNorm weights: 855.6e6, x 80 = 68.45e9; with
  // the final norm 70.55e9 parameters.
  const TransformerConfig m = load_model_config("llama3-70b").transformer();
  const double P = double(m.parameter_count());
  CHECK(P == Approx(70.55e9).epsilon(0.001));
  TrainOptions o;
  o.micro_batch = 1;
  o.seq = 4096;
  const MemoryReport r = train_memory(m, o, PrecisionScheme::kMixed, 141e9);
  std::map<std::string, double> b;
  for (const auto& i : r.items) b[i.name] = i.bytes;
  // Seed 001 ("Where does the memory go?") holds for the weights: 70e9 x 2 B = 140 GB. It is wrong
  // on two counts: gradients of bf16 weights are bf16 too, 140 GB (it says 70 GB); Adam's m and v
  // in fp32 are 2 x 4 B x 70e9 = 560 GB (it says 140 GB). It also leaves out the fp32 master
  // weights mixed precision keeps, 280 GB. At 70e9 parameters: 140 + 140 + 560 + 280 = 1120 GB, not
  // 365 GB.
  CHECK(b["weights"] == Approx(2 * P));
  CHECK(b["gradients"] == Approx(2 * P));
  CHECK(b["optimizer state"] == Approx(8 * P));
  CHECK(b["master weights"] == Approx(4 * P));
  CHECK(b["weights"] / P * 70e9 == Approx(140e9));
  CHECK(b["gradients"] / P * 70e9 == Approx(140e9));
  CHECK(b["optimizer state"] / P * 70e9 == Approx(560e9));
  CHECK(b["master weights"] / P * 70e9 == Approx(280e9));
  CHECK_FALSE(r.fits);
  CHECK(r.over_bytes > 1000e9);
  CHECK_FALSE(r.suggestions.empty());
}

TEST_CASE("activation bytes follow Korthikanti et al. 2022 without the 5as/h term", "[analytic]") {
  // GPT-3 175B, s = 2048, b = 1, h = 12288: 34 sbh = 34 x 2048 x 12288 = 855.6 MB per layer.
  const TransformerConfig m = load_model_config("gpt3-175b").transformer();
  CHECK(layer_activation_bytes(m, 1, 2048, Recompute::kNone) == Approx(34.0 * 2048 * 12288));
  CHECK(layer_activation_bytes(m, 1, 2048, Recompute::kFull) == Approx(2.0 * 2048 * 12288));
}

TEST_CASE("critical-path times sum to the step time", "[property]") {
  const ModelConfig llama = load_model_config("llama3.2-1b");
  const ModelConfig gpt = load_model_config("gpt2-small");
  const ModelConfig dit = load_model_config("dit-xl2-image-e2e");
  std::vector<std::pair<const ModelConfig*, WorkloadSpec>> cases;
  WorkloadSpec w;
  w.kind = WorkloadKind::kDecode;
  cases.push_back({&llama, w});
  w.infer.cuda_graph = true;
  cases.push_back({&llama, w});
  w.kind = WorkloadKind::kPrefill;
  cases.push_back({&llama, w});
  w.kind = WorkloadKind::kTrain;
  w.train.micro_batch = 2;
  w.train.seq = 256;
  w.train.grad_accum = 2;
  cases.push_back({&gpt, w});
  w.kind = WorkloadKind::kDiffusion;
  w.diffusion.steps = 2;
  cases.push_back({&dit, w});
  for (const auto& [m, spec] : cases) {
    const Graph g = build_workload(*m, spec);
    const Execution ex = execute(g, h200());
    const CriticalPath p = critical_path(g, ex);
    CHECK(ex.step_time_s > 0);
    CHECK(sum_path(p) == Approx(ex.step_time_s).epsilon(1e-9));
    double seg = 0;
    for (const auto& s : p.segments) {
      CHECK(s.t1_s >= s.t0_s);
      seg += s.t1_s - s.t0_s;
    }
    CHECK(seg == Approx(ex.step_time_s).epsilon(1e-9));
  }
}

TEST_CASE("a what-if off the critical path changes nothing; one on it changes the step", "[unit]") {
  // Stream 0: a 10 ms GEMM; stream 1: a 1 ms copy beside it. The step is 10 ms; the copy is off
  // the critical path.
  Graph g;
  fixed(g, "gemm", Category::kGemm, 0.010, 0);
  OpNode c;
  c.name = "copy";
  c.kind = NodeKind::kCopy;
  c.category = Category::kMemoryCopy;
  c.op = models::OpSpec::parse("copy", {"bytes=1000", "direction=h2d"});
  c.fixed_time_s = 0.001;
  c.stream = 1;
  g.add(c);
  sync(g);
  const hw::GpuSpec gpu = ideal_gpu();
  const Execution base = execute(g, gpu);
  REQUIRE(base.step_time_s == Approx(0.010));
  const CriticalPath p = critical_path(g, base);
  CHECK(p.on_path[0] == 1);
  CHECK(p.on_path[1] == 0);
  const WhatIfResult off = run_what_if(g, gpu, {}, base, parse_what_if("memory_copy*2"));
  CHECK(off.step_s == Approx(base.step_time_s));
  // Amdahl, blind to overlap, still promises something: f = 1 ms / 10 ms = 0.1, S = 1/(0.9+0.05).
  CHECK(off.amdahl_speedup == Approx(1.0 / 0.95));
  const WhatIfResult on = run_what_if(g, gpu, {}, base, parse_what_if("gemm*2"));
  CHECK(on.step_s == Approx(0.005));
  CHECK(on.simulated_speedup == Approx(2.0));
}

TEST_CASE("eager decode is host-bound, a CUDA graph removes the launch gaps", "[unit]") {
  const ModelConfig m = load_model_config("llama3-8b");
  WorkloadSpec w;
  w.kind = WorkloadKind::kDecode;
  const Graph eager = build_workload(m, w);
  // Per layer: RMSNorm 8, q/k/v 3, RoPE 2 x 5, cache writes 2, SDPA 1, o-proj 1, residual 1,
  // RMSNorm 8, gate/silu/up/mul/down 5, residual 1 = 40 kernels; 32 layers = 1280; plus embedding
  // 1, cos/sin index_select + cast 4, final norm 8, LM head 1, argmax 1, token copy 1 = 1296.
  CHECK(eager.kernel_count() == 1296);
  const Execution e = execute(eager, h200());
  const CriticalPath pe = critical_path(eager, e);
  CHECK(pe.by_class_s.at("host_launch") > 0.5 * e.step_time_s);
  w.infer.cuda_graph = true;
  const Graph graph = build_workload(m, w);
  const Execution gr = execute(graph, h200());
  CHECK(gr.step_time_s < e.step_time_s);
  CHECK(gr.host_busy_s < 0.2 * e.host_busy_s);
}

TEST_CASE("host costs follow the code path that issues each op", "[unit]") {
  // Kernels of 1 ns: the host alone sets the step, so host busy time is the sum of the costs.
  const hw::GpuSpec& gpu = h200();
  Graph g;
  OpNode zero = host_node("zero_grad", NodeKind::kHost);  // over 10 tensors: host work only
  zero.host_tensors = 10;
  g.add(zero);
  const int fwd = fixed(g, "fwd", Category::kElementwise, 1e-9);
  g.op(fwd).host_path = HostPath::kAutogradForward;
  g.op(fwd).kernels = 3;  // an autocast Linear: two casts and the GEMM
  const int bwd = fixed(g, "bwd", Category::kGemm, 1e-9);
  g.op(bwd).host_path = HostPath::kAutogradBackward;
  g.op(bwd).kernels = 2;
  const int plain = fixed(g, "plain", Category::kElementwise, 1e-9);
  g.op(plain).host_views = 3;
  g.op(plain).host_splits = 2;
  const int cast = fixed(g, "cast", Category::kElementwise, 1e-9);
  g.op(cast).eager_call = EagerCall::kCast;
  const int mean = fixed(g, "mean", Category::kElementwise, 1e-9);
  g.op(mean).eager_call = EagerCall::kReduction;
  const int cat = fixed(g, "cat", Category::kElementwise, 1e-9);
  g.op(cat).eager_call = EagerCall::kCat;
  // scaled_dot_product_attention: plain, causal, and with fewer KV heads (GQA) even when causal.
  for (const char* variant : {"causal=false", "causal=true", "kv_heads=2"}) {
    const int a = fixed(g, variant, Category::kAttention, 1e-9);
    std::vector<std::string> tokens = {"heads=8", "seq_q=16", "head_dim=64", variant};
    if (tokens.back() == "kv_heads=2") tokens.push_back("causal=true");
    g.op(a).op = models::OpSpec::parse("attention", tokens);
  }
  sync(g);
  const Execution ex = execute(g, gpu);
  // zero_grad: 10 x host_optimizer_tensor; forward: 3 kernels x host_autograd_forward; backward:
  // 2 x host_autograd_kernel; then, each x host_python_scale, the plain elementwise op
  // (host_launch_eager + 3 views + 2 splits), the cast, mean and cat at their own costs, and the
  // three attention calls.
  const double expect =
      10 * gpu.param("host_optimizer_tensor") + 3 * gpu.param("host_autograd_forward") +
      2 * gpu.param("host_autograd_kernel") +
      (gpu.param("host_launch_eager") + 3 * gpu.param("host_eager_view") +
       2 * gpu.param("host_eager_split") + gpu.param("host_eager_cast") +
       gpu.param("host_eager_reduction") + gpu.param("host_eager_cat") +
       gpu.param("host_eager_attention") + gpu.param("host_eager_attention_causal") +
       gpu.param("host_eager_attention_gqa")) *
          gpu.param("host_python_scale");
  CHECK(ex.host_busy_s == Approx(expect).epsilon(1e-6));
  // The figures differ, so each call took its own path.
  CHECK(gpu.param("host_eager_cast") != gpu.param("host_launch_eager"));
  CHECK(gpu.param("host_eager_attention_gqa") != gpu.param("host_eager_attention_causal"));
}

TEST_CASE("a kernel replayed from a CUDA graph is charged graph_kernel_saving less", "[unit]") {
  // ridge-bench's launch suite: back-to-back empty kernels cost ~0.86 us more each on a stream
  // than in a graph replay; a captured kernel's time is its stream time less that.
  const hw::GpuSpec& gpu = h200();
  auto one = [&](bool captured) {
    Graph g;
    OpNode n;
    n.name = "add";
    n.category = Category::kElementwise;
    n.op = models::OpSpec::parse("elementwise", {"op=add", "n=1048576"});
    g.add(n);
    if (captured) g.captured_begin = 0, g.captured_end = 1;
    sync(g);
    return execute(g, gpu).ops[0].duration_s;
  };
  const double eager = one(false), replay = one(true);
  REQUIRE(eager > 2 * gpu.param("graph_kernel_saving"));
  CHECK(eager - replay == Approx(gpu.param("graph_kernel_saving")).epsilon(1e-6));
}

TEST_CASE("the Perfetto trace is well formed", "[unit]") {
  Study s;
  s.model_path = "llama3.2-1b";
  s.gpu_name = "h200";
  WorkloadSpec w;
  w.label = "decode";
  w.kind = WorkloadKind::kDecode;
  s.workloads.push_back(w);
  const StudyResult r = run_study(s);
  const nlohmann::json j = nlohmann::json::parse(trace_json(r));
  REQUIRE(j.contains("traceEvents"));
  CHECK(j.contains("metadata"));
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> tracks;
  int critical = 0, counters = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e.at("ph");
    if (ph == "X") {
      const double ts = e.at("ts"), dur = e.at("dur");
      CHECK(dur >= 0);
      // Microseconds: a 1.2B-parameter decode step lasts milliseconds, so no slice ends past 1 s.
      CHECK(ts + dur < 1e6);
      tracks[{e.at("pid").get<int>(), e.at("tid").get<int>()}].push_back({ts, ts + dur});
      if (e.at("args").value("on_critical_path", false)) ++critical;
    } else if (ph == "C") {
      ++counters;
    }
  }
  CHECK(critical > 0);
  CHECK(counters > 0);
  CHECK(tracks.size() >= 2);  // host thread and stream 0
  for (auto& [k, v] : tracks) {
    std::sort(v.begin(), v.end());
    for (std::size_t i = 1; i < v.size(); ++i) CHECK(v[i].first >= v[i - 1].second - 1e-3);
  }
}

TEST_CASE("a typo in a model file is reported at its position with a suggestion",
          "[config-errors]") {
  const std::string path = std::string(RIDGE_WORKLOADS_TEST_DATA) + "/bad_model.yaml";
  try {
    load_model_config(path);
    FAIL("expected a ConfigException");
  } catch (const hw::ConfigException& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg,
               Catch::Contains(
                   "bad_model.yaml:6:3: model.d_modle: unknown key (did you mean 'd_model'?)"));
  }
}

TEST_CASE("a typo in a study file is reported at its position with a suggestion",
          "[config-errors]") {
  const std::string path = std::string(RIDGE_WORKLOADS_TEST_DATA) + "/bad_study.yaml";
  try {
    load_study(path);
    FAIL("expected a ConfigException");
  } catch (const hw::ConfigException& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("bad_study.yaml:4:"));
    CHECK_THAT(msg,
               Catch::Contains("study.workload.recompte: unknown key (did you mean 'recompute'?)"));
  }
}

namespace {
// The e2e measurement runs used for validation (validate/data/h200/<run>/, one lease each; the
// command and the machine are in each run.log). All were made after 2026-11-29 14:15 UTC, when a
// torch.profiler session was found to leave every later eager call of its process ~28% slower on
// the host (validate/e2e/host_interleave.py --profile-between): since then no case is timed after
// a profile. The earlier runs (e2e, e2e_run2..e2e_run11) timed the diffusion stages after the text
// encoder's profile and GPT-2 medium after GPT-2 small's; they stay in the repository, superseded
// (validate/e2e/README.md).
//  - e2e_run12..16: the e2e scripts (run_all.sh), every case in its own stretch of the run;
//  - e2e_il1..4: host_interleave.py, the host-bound inference calls round-robin in one process,
//    so that every call sees the same host;
//  - e2e_il5..6: the same with the GPT-2 training steps in the rounds too;
//  - e2e_il7: as il1-4, measured after host_python_scale was fitted (held out).
// host_python_scale was fitted (ridge calibrate --e2e) on runs 12-16 and il1-4, training split.
const char* const kE2eRuns[] = {"e2e_run12", "e2e_run13", "e2e_run14", "e2e_run15",
                                "e2e_run16", "e2e_il1",   "e2e_il2",   "e2e_il3",
                                "e2e_il4",   "e2e_il5",   "e2e_il6",   "e2e_il7"};

// End-to-end rows of one run against the calibrated H200
// (configs/hw/h200-sxm-141gb.calibrated.yaml).
std::vector<ridge::workloads::E2eRow> e2e_rows(const std::string& run) {
  const std::string path =
      std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/" + run + "/e2e.json";
  std::ifstream in(path);
  REQUIRE(in);
  static const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  static E2eCache cache;  // the runs measured the same cases: simulate each once per process
  return compare_e2e(nlohmann::json::parse(in), g, &cache);
}

bool cuda_graph_case(const std::string& id) {
  return id.size() > 6 && id.compare(id.size() - 6, 6, "/graph") == 0;
}

bool interleaved_run(const std::string& run) {
  return run.rfind("e2e_il", 0) == 0;
}

// The predicted column of a pre-registered set's predictions.md (validate/prereg/SET), by case
// id, in seconds: the figures committed before the measurement, which later model changes must
// not move (the current model's rows come from e2e_rows).
std::map<std::string, double> preregistered(const std::string& set) {
  std::ifstream in(std::string(RIDGE_SOURCE_DIR) + "/validate/prereg/" + set + "/predictions.md");
  REQUIRE(in);
  std::map<std::string, double> out;
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find("| `"), b = line.find("` | ");
    if (a != 0 || b == std::string::npos) continue;
    const auto ms = line.find(" ms |", b);
    REQUIRE(ms != std::string::npos);
    out[line.substr(3, b - 3)] = std::stod(line.substr(b + 4, ms - b - 4)) * 1e-3;
  }
  return out;
}

// Each measured case of `run` against its pre-registered prediction: (id, error).
std::vector<std::pair<std::string, double>> preregistered_errors(const std::string& set,
                                                                 const std::string& run) {
  const auto pred = preregistered(set);
  std::vector<std::pair<std::string, double>> out;
  for (const auto& r : e2e_rows(run)) {
    if (r.id.rfind("e2e/diffusion/", 0) == 0) continue;  // the fitted cases, run alongside
    const auto it = pred.find(r.id);
    REQUIRE(it != pred.end());
    out.emplace_back(r.id, it->second / r.measured_s - 1.0);
  }
  return out;
}

std::vector<E2eRow> pooled_e2e_rows() {
  std::vector<ridge::workloads::E2eRun> runs;
  for (const char* run : kE2eRuns) runs.push_back({run, e2e_rows(run)});
  return ridge::workloads::pooled_rows(runs);
}
}  // namespace

// The budget on each case of each run. NOT MET everywhere (docs/e2e-validation.md): a
// serial run in a lease whose host ran slow for most of it leaves cases with fewer than 3 steps at
// nominal host speed, compared on all their steps (runs 12-16: down to -54%); the text encoder
// shares its process with the training steps in il5/il6 (-28%: the same call is 1.17x slower
// relative to the others there than in il1-4); K20 is +11.4% in il2 and K4 +10.4% in il7. Marked to
// fail: Catch reports it passed only while some case is outside 10%; when every case is within, the
// tag must come off.
TEST_CASE("end-to-end predictions hold within 10% of every H200 run", "[validation][!shouldfail]") {
  for (const char* run : kE2eRuns) {
    const auto rows = e2e_rows(run);
    REQUIRE_FALSE(rows.empty());
    for (const auto& r : rows) {
      INFO(run << " " << r.id << ": predicted " << r.predicted_s * 1e3 << " ms, measured "
               << r.measured_s * 1e3 << " ms");
      CHECK(std::fabs(r.error) <= 0.10);
    }
  }
}

// The budget against each case's median over the runs (pooled_rows: over the runs that measured it
// with at least 3 steps at nominal host speed, each host-bound step at the model's host speed).
// Measured: all 18 within 10%; worst -8.5% (GPT-2 medium training), -8.0% (VAE stage), -7.5% (8B
// graph decode, batch 16), +7.2% (K20).
TEST_CASE("end-to-end predictions hold within 10% of the median over the runs", "[validation]") {
  const auto rows = pooled_e2e_rows();
  REQUIRE(rows.size() == 18);
  for (const auto& r : rows) {
    INFO(r.id << ": predicted " << r.predicted_s * 1e3 << " ms, median of " << r.steps << " runs "
              << r.measured_s * 1e3 << " ms");
    CHECK(r.steps >= 3);
    CHECK(std::fabs(r.error) <= 0.10);
  }
}

// Host-bound inference steps on every interleaved run whose process held only the inference models
// (il1-il4, and il7 held out): Llama-3.2 1B and Llama-3 8B eager decode at batch 1 and 16, the 1B
// prefill, the text encoder, the DiT denoiser, and the pipeline at K = 1, 4, 20. Measured: within
// -8.6%..+9.2% except K20 in il2 (+11.4%) and K4 in il7 (+10.4%): the DiT pipelines sit a few
// per cent above the rest; K4 and K20 are held within 13% as the listed exceptions.
TEST_CASE("host-bound eager inference holds within 10% of every interleaved run", "[validation]") {
  int n = 0;
  for (const char* run : {"e2e_il1", "e2e_il2", "e2e_il3", "e2e_il4", "e2e_il7"}) {
    for (const auto& r : e2e_rows(run)) {
      INFO(run << " " << r.id << ": predicted " << r.predicted_s * 1e3 << " ms, measured "
               << r.measured_s * 1e3 << " ms");
      CHECK(r.bound == "host");
      CHECK(r.host_normalized);
      const bool k4_k20 =
          r.id == "e2e/diffusion/pipeline/K4" || r.id == "e2e/diffusion/pipeline/K20";
      CHECK(std::fabs(r.error) <= (k4_k20 ? 0.13 : 0.10));
      ++n;
    }
  }
  CHECK(n == 50);
}

// GPU-bound cases on every run that measured them at nominal host speed (CUDA-graph decode on every
// run: one launch replays the step, so the host's speed does not enter), and the training steps,
// which the interleaved runs il5/il6 measured with every round at the same host speed. Measured:
// graph decode -8.1%..+6.4%, 8B prefill +0.9%..+2.9%, VAE +6.1%, training -3.0%..-6.1% (runs
// 12, 14 and 16, il5, il6), 29 rows. Left out: GPT-2 medium in run 12 (-13.8% over its 3 nominal
// steps of 10: the serial run's lease ran slow; -3.0% and -3.8% interleaved), listed here.
TEST_CASE("GPU-bound steps and training hold within 10% of every run", "[validation]") {
  int n = 0;
  for (const char* run : kE2eRuns) {
    for (const auto& r : e2e_rows(run)) {
      if (r.bound != "GPU") continue;
      if (r.host_slowed && !cuda_graph_case(r.id)) continue;
      INFO(run << " " << r.id << ": predicted " << r.predicted_s * 1e3 << " ms, measured "
               << r.measured_s * 1e3 << " ms");
      if (std::string(run) == "e2e_run12" && r.id == "e2e/train/gpt2-medium/b8_s1024") {
        CHECK(std::fabs(r.error) <= 0.15);
        continue;
      }
      CHECK(std::fabs(r.error) <= 0.10);
      ++n;
    }
  }
  CHECK(n >= 29);  // 29 rows today
}

// Regression guard for everything else: kernel counts of the builders within 15% of the profiles
// (an op list that lost or doubled a layer's kernels would not be), every case of every run within
// 55% (host-slowed rows of the serial runs reach -53%), and the mean absolute error over the
// rows compared at nominal host speed within 6% (measured: 4.9%).
TEST_CASE("end-to-end predictions: today's accuracy does not regress", "[validation]") {
  double sum = 0;
  int n = 0;
  for (const char* run : kE2eRuns) {
    const auto rows = e2e_rows(run);
    REQUIRE(rows.size() >= (interleaved_run(run) ? 10u : 18u));
    for (const auto& r : rows) {
      INFO(run << " " << r.id << ": predicted " << r.predicted_s * 1e3 << " ms, measured "
               << r.measured_s * 1e3 << " ms");
      CHECK(std::fabs(r.error) <= 0.55);
      if (r.measured_kernels > 0) {
        CHECK(std::fabs(static_cast<double>(r.predicted_kernels - r.measured_kernels)) <=
              0.15 * r.measured_kernels);
      }
      if (r.host_slowed) continue;
      sum += std::fabs(r.error);
      ++n;
    }
  }
  CHECK(sum / n <= 0.06);
}

TEST_CASE("a GPT training step launches the loss and LayerNorm kernels the profiles show",
          "[unit]") {
  // validate/data/h200/e2e_run4/timelines.tar.gz, GPT-2 small b8 s1024: F.cross_entropy on bf16
  // logits runs log_softmax (bf16 in and out), a cast to fp32 and nll_loss forward; its backward
  // fills a zeroed fp32 gradient of the logits' size, scatters into it, casts it to bf16 and runs
  // log_softmax's backward. LayerNorm's weight/bias gradient is one 1024-thread block per 32
  // columns (grid 24 at d_model 768), and the fused QKV's input gradient starts with a cat of
  // dq, dk, dv.
  const TransformerConfig m = load_model_config("gpt2-small").transformer();
  TrainOptions o;
  o.micro_batch = 8;
  o.seq = 1024;
  const Graph g = build_train_step(m, o);
  std::vector<std::string> loss;
  const OpNode* gamma_beta = nullptr;
  int cats = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const OpNode& n = g.op(static_cast<int>(i));
    if (n.name.rfind("loss.", 0) == 0) loss.push_back(n.name);
    if (n.name == "layer0.ln1.bwd_dw") gamma_beta = &n;
    if (n.name.find("attn.qkv.grad_cat") != std::string::npos) ++cats;
  }
  CHECK(loss == std::vector<std::string>{"loss.log_softmax", "loss.to_fp32", "loss.nll",
                                         "loss.backward_seed", "loss.grad_zeros", "loss.nll.bwd",
                                         "loss.grad_to_bf16", "loss.log_softmax.bwd"});
  REQUIRE(gamma_beta != nullptr);
  CHECK(gamma_beta->op.i("grid") == 768 / 32);
  CHECK(gamma_beta->op.i("block") == 1024);
  CHECK(cats == m.layers);
  // The fill writes 4 bytes per logit and reads nothing.
  for (std::size_t i = 0; i < g.size(); ++i) {
    const OpNode& n = g.op(static_cast<int>(i));
    if (n.name != "loss.grad_zeros") continue;
    CHECK(n.op.f("bytes_read") == 0);
    CHECK(n.op.f("bytes_written") == 4.0 * 8 * 1024 * m.vocab);
  }
}

TEST_CASE("e2e runs with CPU probes are compared on the steps issued at nominal host speed",
          "[unit]") {
  // A run's fastest probe is 100 us, so a step counts as nominal when its probe took <= 125 us
  // (kNominalProbeRatio 1.25). Case A: steps of 10, 11, 12, 30, 31 us with probes 100, 110, 120,
  // 200, 210: the first three are kept, median 11 us (timing.median_us, 12 us, is not used).
  // Case B: probes 200, 210, 220: no nominal step, so it is compared on timing.median_us and
  // flagged. Case C: no probe data: timing.median_us, steps 0.
  auto rec = [](const std::string& id, std::vector<double> steps, std::vector<double> probes,
                double median) {
    nlohmann::json r = {{"id", id},
                        {"op", "e2e_stage"},
                        {"params", {{"stage", "vae_decode"}}},
                        {"timing", {{"median_us", median}, {"samples_us", steps}}}};
    if (!probes.empty()) r["cpu_probe"] = {{"samples_us", probes}};
    return r;
  };
  const nlohmann::json doc = {
      {"records",
       {rec("A", {10, 11, 12, 30, 31}, {100, 110, 120, 200, 210}, 12),
        rec("B", {50, 60, 70}, {200, 210, 220}, 60), rec("C", {5, 6, 7}, {}, 6)}}};
  const auto rows = compare_e2e(doc, h200());
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].measured_s == Approx(11e-6));
  CHECK(rows[0].steps == 5);
  CHECK(rows[0].steps_kept == 3);
  CHECK_FALSE(rows[0].host_slowed);
  CHECK(rows[1].measured_s == Approx(60e-6));
  CHECK(rows[1].steps_kept == 0);
  CHECK(rows[1].host_slowed);
  CHECK(rows[2].measured_s == Approx(6e-6));
  CHECK(rows[2].steps == 0);
  CHECK_FALSE(rows[2].host_slowed);
}

TEST_CASE("a host-bound case is compared at the model's host speed", "[unit]") {
  // The text encoder stage is host-bound in the simulation. The run's fastest probe is 200 us, so
  // probes up to 250 us count as nominal. Steps of 1000, 1100, 1200 us with probes of 200, 220,
  // 240 us each scale to 1000 x 197/200 = 985, 1100 x 197/220 = 985 and 1200 x 197/240 = 985 us
  // at host_probe_us = 197 us: median 985 us, where the unscaled median would be 1100 us. The
  // fourth step (probe 400 us) is not nominal.
  nlohmann::json r = {{"id", "te"},
                      {"op", "e2e_stage"},
                      {"params", {{"stage", "text_encoder"}}},
                      {"timing", {{"median_us", 1150}, {"samples_us", {1000, 1100, 1200, 2000}}}},
                      {"cpu_probe", {{"samples_us", {200, 220, 240, 400}}}}};
  const hw::GpuSpec g = h200();
  REQUIRE(g.param("host_probe_us") == Approx(197e-6));
  const auto rows = compare_e2e(nlohmann::json{{"records", {r}}}, g);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].bound == "host");
  CHECK(rows[0].host_normalized);
  CHECK(rows[0].steps_kept == 3);
  CHECK(rows[0].measured_s == Approx(985e-6));
  // A zero probe cannot scale a step: refused, naming it.
  r["cpu_probe"]["samples_us"] = {0, 220, 240, 400};
  try {
    compare_e2e(nlohmann::json{{"records", {r}}}, g);
    FAIL("expected an error");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) ==
          "records[0] (te): cpu_probe.samples_us[0]: expected a positive probe time, got 0");
  }
}

TEST_CASE("a malformed e2e record is refused with the record and the field named",
          "[config-errors]") {
  // compare_e2e reads measurement files users bring; each broken field below must stop it with a
  // message naming the record (index and id) and the field, not a library exception's text.
  auto doc = [](nlohmann::json timing, nlohmann::json probe) {
    nlohmann::json r = {{"id", "case/x"},
                        {"op", "e2e_stage"},
                        {"params", {{"stage", "vae_decode"}}},
                        {"timing", timing}};
    if (!probe.is_null()) r["cpu_probe"] = {{"samples_us", probe}};
    return nlohmann::json{{"records", {r}}};
  };
  auto message = [&](const nlohmann::json& d) {
    try {
      compare_e2e(d, h200());
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(message(doc({{"median_us", "12"}}, nullptr)) ==
        "records[0] (case/x): timing.median_us: expected a non-negative number, got \"12\"");
  CHECK(message(doc({{"median_us", 12}, {"samples_us", {1, 2}}}, {100, "x"})) ==
        "records[0] (case/x): cpu_probe.samples_us[1]: expected a non-negative number, got \"x\"");
  CHECK(message(doc({{"median_us", 12}, {"samples_us", {1, 2}}}, {100, 110, 120})) ==
        "records[0] (case/x): cpu_probe.samples_us has 3 values, timing.samples_us 2: expected "
        "one probe per timed call");
  CHECK(message(doc({{"median_us", -1}}, nullptr)).find("timing.median_us") != std::string::npos);
  CHECK(message(nlohmann::json{{"records", 5}}) ==
        "expected a \"records\" array (ridge.records/1) or an array");
  CHECK(message(doc({{"median_us", 12}, {"samples_us", {1, 2}}}, {100, 110})) == "accepted");
  // A model's sizes, in the ranges model and study files give the same keys: heads 0 divided
  // d_model by zero (SIGFPE in `ridge run --e2e-table`), 1e25 was converted unchecked.
  auto decode = [](nlohmann::json params) {
    return nlohmann::json{{"records",
                           {{{"id", "case/d"},
                             {"op", "e2e_decode"},
                             {"params", params},
                             {"timing", {{"median_us", 1000}}}}}}};
  };
  CHECK(message(decode({{"heads", 0}})) ==
        "records[0] (case/d): params.heads: expected an integer from 1 to 65536, got 0");
  CHECK(message(decode({{"batch", 1e25}})) ==
        "records[0] (case/d): params.batch: expected an integer from 1 to 1048576, got 1e+25");
  CHECK(message(decode({{"layers", 2.5}})).find("params.layers: expected an integer") !=
        std::string::npos);
  CHECK(message(decode({{"d_model", 1000}, {"heads", 3}})) ==
        "records[0] (case/d): params.heads: must divide d_model (1000 / 3 leaves 1), or give "
        "head_dim");
  CHECK(message(decode({{"heads", 32}, {"kv_heads", 5}})) ==
        "records[0] (case/d): params.kv_heads: must divide heads (32 % 5 = 2)");
}

// PyTorch's reduce_kernel launches as its profiler recorded them for the composed RMSNorm's
// mean(-1) over fp32 rows (validate/data/h200/e2e_prereg1 and e2e_prereg2, kernel lists of the
// prefill and eager decode steps): 16 rows of 1536, 3072 or 4096 on one block of 32 x 16
// threads; one row on one block of 256 (1536) or 512 (3072, 4096); 1024 rows on 64 such blocks.
TEST_CASE("row reductions launch as PyTorch's reduce_kernel did on the H200", "[unit]") {
  using ridge::workloads::torch_reduce_launch;
  for (long long cols : {1536LL, 3072LL, 4096LL}) {
    INFO("cols " << cols);
    const auto d16 = torch_reduce_launch(16, cols, 132);
    CHECK(d16.grid == 1);
    CHECK(d16.block == 512);
    CHECK(d16.loads_per_thread == cols / 4 / 32);  // a warp a row, four floats a load
    const auto d1 = torch_reduce_launch(1, cols, 132);
    CHECK(d1.grid == 1);
    CHECK(d1.block == (cols == 1536 ? 256 : 512));
    const auto p = torch_reduce_launch(1024, cols, 132);
    CHECK(p.grid == 64);
    CHECK(p.block == 512);
  }
  // Long rows split the input across the block's warps and then across blocks: at 4 rows of 2^20
  // a thread would otherwise load 8192 vectors.
  const auto wide = torch_reduce_launch(4, 1 << 20, 132);
  CHECK(wide.grid > 4);
  CHECK(wide.loads_per_thread <= 256);
}

// Pre-registered set e2e1 (validate/prereg/e2e1: predictions committed before the measurement):
// models no fit has seen. The GPU-bound steps (GPT-2 large and XL training, Llama-3.2 3B decode
// with CUDA graphs) meet issue 18's 10% target: measured -0.5%, -0.5%, +2.0%, -8.2%.
TEST_CASE("pre-registered e2e1: GPU-bound steps of unseen models within 10%", "[validation]") {
  int n = 0;
  for (const auto& r : e2e_rows("e2e_prereg1")) {
    if (r.id.rfind("e2e/diffusion/", 0) == 0) continue;  // the fitted cases, run alongside
    if (r.bound != "GPU" || r.id.find("/prefill/") != std::string::npos) continue;
    INFO(r.id << ": predicted " << r.predicted_s * 1e3 << " ms, measured " << r.measured_s * 1e3
              << " ms");
    CHECK(std::fabs(r.error) <= 0.10);
    ++n;
  }
  CHECK(n == 4);
}

// Run 2 of the same set (a second lease, the model and predictions unchanged), its decode script
// at nominal host speed: every step within 10%: -1.6%, -2.8% (training), -0.3% (prefill), +1.6%,
// +6.9% (eager decode), +1.4%, -8.0% (graph decode).
TEST_CASE("pre-registered e2e1 run 2: every step of the unseen models within 10%", "[validation]") {
  int n = 0;
  for (const auto& r : e2e_rows("e2e_prereg1_run2")) {
    if (r.id.rfind("e2e/diffusion/", 0) == 0) continue;  // the fitted cases, run alongside
    INFO(r.id << ": predicted " << r.predicted_s * 1e3 << " ms, measured " << r.measured_s * 1e3
              << " ms");
    CHECK(std::fabs(r.error) <= 0.10);
    ++n;
  }
  CHECK(n == 7);
}

// Pre-registered set e2e2 (validate/prereg/e2e2: predictions committed before the measurement,
// after the attention round): models no fit has seen. Scored on the committed predictions
// (predictions.md), not the current model: the PyTorch row-reduction launch (workloads/
// builder_util.cpp torch_reduce_launch) was modelled after these runs were read, so for the
// current model e2e2 is fit data. Every step but one within 10%: +1.0%, -2.2% (training at 2048
// and 4096 tokens), +1.6%, +5.4%, -3.0%, -1.2%, -9.9% (Llama-2 7B's shape), +9.3%, +7.9%, +2.8%,
// -4.7% (Qwen2.5-1.5B's).
TEST_CASE("pre-registered e2e2: every step of the unseen models but one within 10%",
          "[validation]") {
  int n = 0;
  for (const auto& [id, error] : preregistered_errors("e2e2", "e2e_prereg2")) {
    if (id == "e2e/decode/qwen2.5-1.5b-shape/b16_ctx1024/eager") continue;  // below
    INFO(id << ": error " << error * 100 << "%");
    CHECK(std::fabs(error) <= 0.10);
    ++n;
  }
  CHECK(n == 11);
}

// The one miss: Qwen2.5-1.5B's shape, eager decode at batch 16, -44.5%, host-bound and measured
// with none of its steps at nominal host speed (CPU probe median 320 us against 178-184 us in the
// cases beside it), so compared on all its steps by the rule fixed before the run.
TEST_CASE("pre-registered e2e2: the host-affected eager decode within 10% (target, not met)",
          "[validation][!shouldfail]") {
  int n = 0;
  for (const auto& [id, error] : preregistered_errors("e2e2", "e2e_prereg2")) {
    if (id != "e2e/decode/qwen2.5-1.5b-shape/b16_ctx1024/eager") continue;
    INFO(id << ": error " << error * 100 << "%");
    CHECK(std::fabs(error) <= 0.10);
    ++n;
  }
  REQUIRE(n == 1);
}

// Run 2 of e2e2 (a second lease; model and predictions unchanged), the decode script at nominal
// host speed: every step but one within 10%: +0.7%, -4.1%, +3.1%, -4.3%, -4.5%, -1.0%, +3.9%,
// +3.7%, +2.7%, +3.2%, -4.4%. The exception is below.
TEST_CASE("pre-registered e2e2 run 2: every step but one within 10%", "[validation]") {
  int n = 0;
  for (const auto& [id, error] : preregistered_errors("e2e2", "e2e_prereg2_run2")) {
    if (id == "e2e/decode/llama2-7b-shape/b16_ctx1024/graph") continue;  // below
    INFO(id << ": error " << error * 100 << "%");
    CHECK(std::fabs(error) <= 0.10);
    ++n;
  }
  CHECK(n == 11);
}

// Llama-2 7B's shape, CUDA-graph decode at batch 16: -9.9% in run 1 and -10.5% in run 2, a
// GPU-bound step at the edge of the target (validate/prereg/e2e2/README.md: the composed
// RMSNorm's mean on one 512-thread block, 8.7 us a call against the 2.1 us the model then gave,
// and the decode attention's K/V read, 3.9 TB/s measured against the model's 4.5).
TEST_CASE(
    "pre-registered e2e2 run 2: batch-16 graph decode of Llama-2 7B's shape within 10% "
    "(target, not met)",
    "[validation][!shouldfail]") {
  int n = 0;
  for (const auto& [id, error] : preregistered_errors("e2e2", "e2e_prereg2_run2")) {
    if (id != "e2e/decode/llama2-7b-shape/b16_ctx1024/graph") continue;
    INFO(id << ": error " << error * 100 << "%");
    CHECK(std::fabs(error) <= 0.10);
    ++n;
  }
  REQUIRE(n == 1);
}

// Pre-registered set e2e3 (validate/prereg/e2e3: predictions committed in e503f44 by the model
// of fa99191, before the measurement): OPT-2.7B and BLOOM-560M training shapes, Mistral 7B and
// Llama-2 13B prefill and decode. Run 1 is the test: every step but Mistral 7B's two eager decodes
// within 10% (-0.9%, -3.7%, +6.8%, +0.9%, -3.5%, -1.5%, +2.6%, +3.1%, -1.3%, -6.3%); run 3 (a
// replication; run 2's files were lost) the same ten within 10% again.
const char* const kE2e3HostSlowed[] = {"e2e/decode/mistral-7b-shape/b1_ctx1024/eager",
                                       "e2e/decode/mistral-7b-shape/b16_ctx1024/eager"};

bool e2e3_host_slowed(const std::string& id) {
  for (const char* h : kE2e3HostSlowed)
    if (id == h) return true;
  return false;
}

TEST_CASE("pre-registered e2e3: every step but the two host-slowed eager decodes within 10%",
          "[validation]") {
  for (const char* run : {"e2e_prereg3", "e2e_prereg3_run3"}) {
    int n = 0;
    for (const auto& [id, error] : preregistered_errors("e2e3", run)) {
      if (e2e3_host_slowed(id)) continue;  // below
      INFO(run << " " << id << ": error " << error * 100 << "%");
      CHECK(std::fabs(error) <= 0.10);
      ++n;
    }
    CHECK(n == 10);
  }
}

// The two misses of run 1 (-43.4%, -48.8%) and run 3 (-19.4%, -20.9%): Mistral 7B's eager decodes,
// host-bound, with none of their 30 steps at nominal host speed in either run (CPU probe medians
// 316-352 us against 180-199 us in the cases around them), so compared on all their steps by the
// rule fixed before the run.
TEST_CASE("pre-registered e2e3: Mistral 7B's eager decodes within 10% (target, not met)",
          "[validation][!shouldfail]") {
  int n = 0;
  for (const auto& [id, error] : preregistered_errors("e2e3", "e2e_prereg3")) {
    if (!e2e3_host_slowed(id)) continue;
    INFO(id << ": error " << error * 100 << "%");
    CHECK(std::fabs(error) <= 0.10);
    ++n;
  }
  REQUIRE(n == 2);
}

// Pre-registered set e2e4 (validate/prereg/e2e4: predictions committed in 001eb33 by the model of
// fa99191, before the measurement; the timing script's host-speed retry declared in the same
// commit): OPT-1.3B and BLOOM-1B1 training shapes, Qwen2.5-7B and Phi-3-mini prefill and decode.
// Run 1 is the test: every step within 10% (-0.6%, +1.0%, +3.2%, +6.0%, +5.7%, -0.7%, -5.4%,
// -1.2%, +4.4%, +5.0%, +0.1%, -8.4%); run 2, a replication in the same call, too (largest -8.4%).
TEST_CASE("pre-registered e2e4: every step of the unseen models within 10% in both runs",
          "[validation]") {
  for (const char* run : {"e2e_prereg4_run1", "e2e_prereg4_run2"}) {
    int n = 0;
    for (const auto& [id, error] : preregistered_errors("e2e4", run)) {
      INFO(run << " " << id << ": error " << error * 100 << "%");
      CHECK(std::fabs(error) <= 0.10);
      ++n;
    }
    CHECK(n == 12);
  }
}

// Run 1's Llama-3.2 3B prefill and eager decode miss the target, -43% to -44%, measured with the
// host ~1.6x slow through the whole decode script (CPU probes 307-324 us against 178-195 us
// elsewhere in the lease), which that run cannot tell from a model error (run 2 above can).
TEST_CASE(
    "pre-registered e2e1: host-affected prefill and eager decode within 10% (target, not "
    "met)",
    "[validation][!shouldfail]") {
  for (const auto& r : e2e_rows("e2e_prereg1")) {
    if (r.id.find("llama3.2-3b") == std::string::npos) continue;
    if (r.id.find("/graph") != std::string::npos) continue;
    INFO(r.id << ": error " << r.error * 100 << "%");
    CHECK(std::fabs(r.error) <= 0.10);
  }
}
