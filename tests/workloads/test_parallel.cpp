// Parallel training steps (workloads/parallel.hpp): Korthikanti et al. 2022 Table 5, the paper's
// activation-memory formulas, the 1F1B bubble, TP collective counts, bandwidth monotonicity and
// the `parallel:` block's errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "hw/config.hpp"
#include "hw/system_loader.hpp"
#include "tests/workloads/load_error.hpp"
#include "tests/workloads/megatron_gpt.hpp"
#include "workloads/parallel.hpp"
#include "workloads/study.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

using ridge::test::megatron_gpt;  // tests/workloads/megatron_gpt.hpp

struct Row {
  const char* name;
  long long h;
  int heads, layers, tp, pp, gpus;
  long long global_batch, micro_batch;
  const char* system;
  double full_s, seqsel_s;  // measured (REFERENCE.md 4.1, Korthikanti Table 5)
};
const Row kTable5[] = {
    {"22B", 6144, 64, 48, 8, 1, 8, 4, 4, "dgx-a100-superpod-32", 1.42, 1.10},
    {"175B", 12288, 96, 96, 8, 8, 64, 64, 1, "dgx-a100-superpod-32", 18.13, 13.75},
    {"530B", 20480, 128, 105, 8, 35, 280, 280, 1, "selene-64", 49.05, 37.83},
    {"1T", 25600, 160, 128, 8, 64, 512, 512, 1, "selene-64", 94.42, 71.49},
};

ParallelOptions table5_options(const Row& r, bool seqsel) {
  ParallelOptions o;
  o.system = r.system;
  o.gpus = r.gpus;
  o.tp = r.tp, o.pp = r.pp, o.dp = 1;
  o.micro_batch = r.micro_batch;
  o.global_batch = r.global_batch;
  o.seq = 2048;
  o.sequence_parallel = seqsel;
  o.recompute = seqsel ? Recompute::kSelective : Recompute::kFull;
  return o;
}

struct Table5Errors {
  std::vector<double> errors;  // predicted / measured - 1, full then seqsel per row
};

const Table5Errors& table5() {
  static const Table5Errors t = [] {
    Table5Errors e;
    for (const Row& r : kTable5) {
      const hw::SystemSpec sys = hw::find_system(r.system);
      const TransformerConfig m = megatron_gpt(r.h, r.heads, r.layers);
      for (bool seqsel : {false, true}) {
        const ParallelResult res =
            run_parallel(m, table5_options(r, seqsel), sys, TimingMode::kFast);
        const double measured = seqsel ? r.seqsel_s : r.full_s;
        e.errors.push_back(res.step_s / measured - 1);
      }
    }
    return e;
  }();
  return t;
}

}  // namespace

// The target: every row within 10%, the average |error| at most 5%. Measured (fast mode,
// full recompute / SP + selective): 22B -6.3% / -9.4%, 175B -0.8% / -3.8%, 530B -0.1% / -3.5%,
// 1T -2.6% / -3.8%; average 3.8%. Every row is short of the measurement, 22B most: there (one
// node, 4 x 2048 tokens, h 6144) TP communication is the largest share of the step, and Ridge
// overlaps Megatron-LM's asynchronous backward collectives with the GEMMs at the cost of the SMs
// NCCL holds only, not of the HBM bandwidth both pull.
TEST_CASE("Korthikanti Table 5: every row within 10%, average at most 5%", "[validation]") {
  const auto& t = table5();
  double sum = 0;
  for (std::size_t i = 0; i < t.errors.size(); ++i) {
    const Row& r = kTable5[i / 2];
    INFO(r.name << (i % 2 ? " seq-par + selective" : " full recompute") << ": error "
                << 100 * t.errors[i] << "%");
    CHECK(std::fabs(t.errors[i]) <= 0.10);
    sum += std::fabs(t.errors[i]);
  }
  INFO("average |error| " << 100 * sum / t.errors.size() << "%");
  CHECK(sum / t.errors.size() <= 0.05);
}

// Korthikanti et al. 2022 Table 2 against the paper's own per-GPU figures (REFERENCE.md 4.1,
// Fig. 1): 22B, t = 8, b = 4, s = 2048, h = 6144, a = 64, L = 48 on one stage:
//   no recompute: sbh (10 + 24/8 + 5as/(ht)) = 50331648 x (13 + 13.333) B x 48 = 59.25 GiB
//   SP + selective: 34 sbh / t x 48 = 34 x 6291456 x 48 = 9.56 GiB
// 1T, t = 8, p = 64, s = 2048, h = 25600, a = 160, L = 128: 1F1B's first stage holds p
// micro-batches of L/p layers, L layers' worth:
//   no recompute: sbh (13 + 8) x 128 = 131.25 GiB;  SP + selective: 34 sbh/8 x 128 = 26.56 GiB.
// The 175B and 530B figures assume the interleaved schedule's (1 + (p-1)/(pv)) factor (not built).
// Tolerance 0.01 GiB: the paper's figures are given to two decimals.
TEST_CASE("activation memory follows Korthikanti's formulas", "[analytic]") {
  const TransformerConfig m22 = megatron_gpt(6144, 64, 48);
  ParallelOptions o;
  o.tp = 8, o.pp = 1, o.dp = 1, o.micro_batch = 4, o.global_batch = 4, o.seq = 2048;
  CHECK(stage_memory(m22, o, 0, 0).activations / kGiB == Approx(59.25).margin(0.01));
  o.sequence_parallel = true, o.recompute = Recompute::kSelective;
  CHECK(stage_memory(m22, o, 0, 0).activations / kGiB == Approx(9.56).margin(0.01));
  o.sequence_parallel = false, o.recompute = Recompute::kFull;  // 2sbh per layer
  CHECK(stage_memory(m22, o, 0, 0).activations == Approx(2.0 * 2048 * 4 * 6144 * 48));

  const TransformerConfig m1t = megatron_gpt(25600, 160, 128);
  ParallelOptions p;
  p.tp = 8, p.pp = 64, p.dp = 1, p.micro_batch = 1, p.global_batch = 512, p.seq = 2048;
  const StageMemory first = stage_memory(m1t, p, 0, 0);
  CHECK(first.in_flight == 64);
  CHECK(first.activations / kGiB == Approx(131.25).margin(0.01));
  CHECK(stage_memory(m1t, p, 63, 0).in_flight == 1);
  p.sequence_parallel = true, p.recompute = Recompute::kSelective;
  CHECK(stage_memory(m1t, p, 0, 0).activations / kGiB == Approx(26.56).margin(0.01));
}

// Parameters + optimizer per GPU (REFERENCE.md 4.1: 175B 45.56 GiB): a middle stage of GPT-3 175B
// at t = 8, p = 8 holds 12 layers x 12h^2 / 8 parameters (+ 13h biases and norms per layer), at
// 2 + 4 + 12 = 18 B each: 18 x 12 x (12 x 12288^2 + 13 x 12288) / 8 B = 45.57 GiB.
TEST_CASE("weights, gradients and optimizer state per GPU", "[analytic]") {
  const TransformerConfig m = megatron_gpt(12288, 96, 96);
  ParallelOptions o;
  o.tp = 8, o.pp = 8, o.dp = 1, o.global_batch = 64;
  const double params = double(m.layer_parameter_count()) * 12 / 8;
  const StageMemory s = stage_memory(m, o, 3, params);
  CHECK((s.weights + s.grads + s.optimizer) / kGiB == Approx(45.56).margin(0.02));
  o.dp = 4, o.zero = 1;  // the distributed optimizer shards the 12 B of optimizer state over DP
  CHECK(stage_memory(m, o, 3, params).optimizer == Approx(12 * params / 4));
}

// 1F1B with p stages of equal forward F and backward B and free transfers: the first forward
// reaches the last stage after (p-1)F, the last backward leaves the first stage (p-1)B after the
// last stage's: the step is (m + p - 1)(F + B), the bubble (p-1)(F + B), (p-1)/m of the ideal
// m(F + B) (Narayanan et al. 2021 sec. 2.2). GPipe has the same bubble.
TEST_CASE("the 1F1B and GPipe bubbles are (p-1)/m of the ideal", "[analytic]") {
  for (auto sched : {PipeSchedule::kOneFOneB, PipeSchedule::kGpipe})
    for (int p : {2, 4, 8})
      for (int m : {1, 4, 16}) {
        const double F = 1.0, B = 2.0;
        const auto ops =
            simulate_pipeline(sched, m, std::vector<double>(p, F), std::vector<double>(p, B), 0.0);
        double end = 0;
        for (const auto& op : ops) end = std::max(end, op.end_s);
        const double ideal = m * (F + B);
        INFO(schedule_name(sched) << " p " << p << " m " << m);
        CHECK((end - ideal) / ideal == Approx(double(p - 1) / m).epsilon(1e-12));
      }
}

// Megatron's f and g operators (Shoeybi et al. 2019 fig. 3): one all-reduce after the attention
// projection and one after FC2 in forward, one for each region's input gradient in backward: 2 +
// 2 per layer; with sequence parallelism each all-reduce becomes its two halves, a reduce-scatter
// leaving the region and an all-gather entering the next (Korthikanti et al. 2022 fig. 5: g and
// g-bar), 4 per layer each way, and in backward Megatron-LM all-gathers each column-parallel
// GEMM's sharded input again for its weight gradient (2 more per layer). A middle stage (no
// embedding, no head) of 6 layers: 12 forward and 12 backward all-reduces, or 24 forward and 36
// backward collectives with SP.
TEST_CASE("TP collectives per layer: 2 forward, 2 backward", "[analytic]") {
  const hw::SystemSpec sys = hw::find_system("dgx-a100-superpod-32");
  const TransformerConfig m = megatron_gpt(6144, 64, 24);
  ParallelOptions o;
  o.tp = 8, o.pp = 4, o.dp = 1, o.global_batch = 4, o.seq = 2048;
  CollectiveTimes coll(sys);
  for (bool sp : {false, true}) {
    o.sequence_parallel = sp;
    const StageGraphs g = build_stage(m, o, 1, sys.node.gpu, coll, TimingMode::kFast);
    CHECK(g.tp_collectives_fwd == (sp ? 24 : 12));
    CHECK(g.tp_collectives_bwd == (sp ? 36 : 12));
    int ar = 0, ag = 0, rs = 0;
    for (std::size_t i = 0; i < g.forward.size(); ++i) {
      const auto& n = g.forward.op(static_cast<int>(i)).name;
      ar += n.find("all_reduce") != std::string::npos;
      ag += n.find("all_gather") != std::string::npos;
      rs += n.find("reduce_scatter") != std::string::npos;
    }
    CHECK(ar == (sp ? 0 : 12));
    CHECK(ag == (sp ? 12 : 0));
    CHECK(rs == (sp ? 12 : 0));
  }
}

// More NVLink or NIC bandwidth never makes the step slower (TP rides NVLink, PP and DP the NICs).
TEST_CASE("more NVLink or NIC bandwidth never slows a parallel step", "[property]") {
  const hw::SystemSpec base = hw::find_system("dgx-a100-superpod-32");
  const TransformerConfig m = megatron_gpt(6144, 64, 16);
  ParallelOptions o;
  o.gpus = 64, o.tp = 8, o.pp = 2, o.dp = 4, o.micro_batch = 1, o.global_batch = 16;
  o.seq = 1024;
  double prev_nv = 0, prev_nic = 0;
  for (double f : {0.5, 1.0, 2.0, 4.0}) {
    hw::SystemSpec nv = base, nic = base;
    nv.node.nvlink.bandwidth *= f;
    nic.node.nics.bandwidth *= f;
    const double t_nv = run_parallel(m, o, nv, TimingMode::kFast).step_s;
    const double t_nic = run_parallel(m, o, nic, TimingMode::kFast).step_s;
    if (prev_nv > 0) {
      CHECK(t_nv <= prev_nv * (1 + 1e-12));
      CHECK(t_nic <= prev_nic * (1 + 1e-12));
    }
    prev_nv = t_nv, prev_nic = t_nic;
  }
}

// DP overlap: with dp > 1 the bucketed reduction runs beside the last backward; only its tail is
// exposed, and it is never more than the whole reduction.
TEST_CASE("DP reduction is overlapped with the last backward", "[unit]") {
  const hw::SystemSpec sys = hw::find_system("dgx-a100-superpod-32");
  const TransformerConfig m = megatron_gpt(6144, 64, 16);
  ParallelOptions o;
  o.gpus = 64, o.tp = 8, o.pp = 1, o.dp = 8, o.global_batch = 16, o.seq = 1024;
  const ParallelResult r = run_parallel(m, o, sys, TimingMode::kFast);
  CHECK(r.dp_buckets >= 2);
  CHECK(r.dp_exposed_s > 0);
  CHECK(r.dp_exposed_s < r.dp_time_s);
  double sum = 0;
  for (const auto& [k, v] : r.critical_s) sum += v;
  CHECK(sum == Approx(r.step_s).epsilon(1e-9));
}

namespace {
std::string study_error(const std::string& text) {
  return ridge::test::load_error("test_parallel_bad.yaml", text,
                                 [](const std::string& p) { load_study(p); });
}
}  // namespace

TEST_CASE("bad parallel blocks are reported with file:line:col", "[config]") {
  const std::string head = "study:\n  model: gpt3-175b\n  parallel:\n";
  // 96 heads, 96 layers; dgx-a100-superpod-32 has 256 GPUs.
  std::string e = study_error(head +
                              "    system: dgx-a100-superpod-32\n    gpus: 64\n"
                              "    tp: 8\n    pp: 8\n    dp: 2\n");
  CHECK(e.find("test_parallel_bad.yaml:8:9: study.parallel.dp: tp x pp x dp = 8 x 8 x 2 = 128") !=
        std::string::npos);
  e = study_error(head + "    system: dgx-a100-superpod-32\n    gpus: 56\n    tp: 7\n    pp: 8\n");
  CHECK(e.find(":6:9: study.parallel.tp: tp 7 does not divide the model's 96 heads") !=
        std::string::npos);
  e = study_error(head + "    system: dgx-a100-superpod-32\n    gpus: 40\n    tp: 8\n    pp: 5\n");
  CHECK(e.find(":7:9: study.parallel.pp: pp 5 does not divide the model's 96 layers") !=
        std::string::npos);
  e = study_error(head +
                  "    system: dgx-a100-superpod-32\n    gpus: 64\n    tp: 8\n    dp: 8\n"
                  "    micro_batch: 2\n    global_batch: 20\n");
  CHECK(e.find(":9:19: study.parallel.global_batch: global_batch 20 is not divisible") !=
        std::string::npos);
  e = study_error(head +
                  "    system: dgx-a100-superpod-32\n    gpus: 8\n    tp: 8\n"
                  "    schedul: gpipe\n");
  CHECK(e.find("schedul") != std::string::npos);
  e = study_error(
      "study:\n  model: gpt3-175b\n  gpu: h100\n  parallel:\n    system: dgx-h100\n"
      "    tp: 8\n");
  CHECK(e.find(":3:8: study.gpu: not used with parallel:") != std::string::npos);
  e = study_error(head +
                  "    system: dgx-a100-superpod-32\n    gpus: 64\n    tp: 8\n    pp: 8\n"
                  "    global_batch: 12\n    schedule: interleaved\n    virtual_stages: 5\n");
  CHECK(e.find(":8:19: study.parallel.global_batch: the interleaved schedule needs micro-batches "
               "per pipeline (12) to be a multiple of pp (8)") != std::string::npos);
  CHECK(e.find(":10:21: study.parallel.virtual_stages: pp x virtual_stages = 8 x 5 does not "
               "divide the model's 96 layers") != std::string::npos);
}

// Doubling DP at a fixed per-GPU batch (global batch doubled) keeps every stage's compute and the
// pipeline as they were; only the DP collectives change.
TEST_CASE("doubling DP at fixed per-GPU batch changes only the DP collectives", "[property]") {
  const hw::SystemSpec sys = hw::find_system("dgx-a100-superpod-32");
  const TransformerConfig m = megatron_gpt(6144, 64, 16);
  ParallelOptions o;
  o.gpus = 32, o.tp = 8, o.pp = 2, o.dp = 2, o.global_batch = 16, o.seq = 1024;
  const ParallelResult a = run_parallel(m, o, sys, TimingMode::kFast);
  o.gpus = 64, o.dp = 4, o.global_batch = 32;
  const ParallelResult b = run_parallel(m, o, sys, TimingMode::kFast);
  for (int st = 0; st < 2; ++st) {
    CHECK(a.stages[st].fwd_exec.step_time_s == b.stages[st].fwd_exec.step_time_s);
    CHECK(a.stages[st].bwd_exec.step_time_s == b.stages[st].bwd_exec.step_time_s);
  }
  CHECK(a.pipeline_s == b.pipeline_s);
  // More ranks never shorten the reduction (with SHARP, CollNet, it may cost the same).
  CHECK(b.dp_time_s >= a.dp_time_s * (1 - 1e-12));
  CHECK(b.step_s - b.pipeline_s == Approx(b.dp_exposed_s + b.optimizer_s).epsilon(1e-9));
}

// What-ifs: removing TP communication or doubling NVLink never slows the step; Amdahl's closed
// form with f = TP's share of the critical path and time factor 0 is the step less that share.
TEST_CASE("parallel what-ifs re-simulate beside Amdahl", "[unit]") {
  const hw::SystemSpec sys = hw::find_system("dgx-a100-superpod-32");
  const TransformerConfig m = megatron_gpt(6144, 64, 16);
  ParallelOptions o;
  o.gpus = 32, o.tp = 8, o.pp = 2, o.dp = 2, o.global_batch = 16, o.seq = 1024;
  const ParallelResult base = run_parallel(m, o, sys, TimingMode::kFast);
  const auto tp0 =
      run_parallel_what_if(m, o, sys, TimingMode::kFast, base, parse_parallel_what_if("tp_comm*0"));
  CHECK(tp0.step_s < base.step_s);
  CHECK(tp0.fraction == Approx(base.critical_s.at("tp_comm") / base.step_s));
  CHECK(tp0.amdahl_s == Approx(base.step_s - base.critical_s.at("tp_comm")));
  const auto nv = run_parallel_what_if(m, o, sys, TimingMode::kFast, base,
                                       parse_parallel_what_if("nvlink_bandwidth*2"));
  CHECK(nv.step_s <= base.step_s);
  CHECK_THROWS_WITH(parse_parallel_what_if("nvlink*2"), Catch::Contains("unknown target 'nvlink'"));
  CHECK_THROWS_WITH(parse_parallel_what_if("tp_comm*-1"), Catch::Contains("must be >= 0"));
  CHECK_THROWS_WITH(parse_parallel_what_if("nic_bandwidth*0"), Catch::Contains("must be > 0"));
}

// The Perfetto trace: one process per simulated rank (stage) named after it, every micro-batch's
// forward and backward as a slice on its compute track (p stages x m micro-batches x 2), the
// slices of a stage never overlapping on that track.
TEST_CASE("parallel trace: one process per stage, one slice per forward and backward", "[unit]") {
  const hw::SystemSpec sys = hw::find_system("dgx-a100-superpod-32");
  const TransformerConfig m = megatron_gpt(6144, 64, 16);
  ParallelOptions o;
  o.gpus = 64, o.tp = 8, o.pp = 4, o.dp = 2, o.global_batch = 16, o.seq = 1024;
  const ParallelResult r = run_parallel(m, o, sys, TimingMode::kFast);
  const auto j = nlohmann::json::parse(parallel_trace_json(r));
  int processes = 0, slices = 0;
  std::map<int, double> last_end;
  bool overlap = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") ++processes;
    if (e["ph"] == "X" && e["tid"] == 0 && (e["cat"] == "forward" || e["cat"] == "backward")) {
      ++slices;
      const int pid = e["pid"];
      const double ts = e["ts"], dur = e["dur"];
      if (last_end.count(pid) && ts < last_end[pid] - 1e-6) overlap = true;
      last_end[pid] = ts + dur;
    }
  }
  CHECK(processes == 4);
  CHECK(slices == 4 * 8 * 2);  // m = 16 / (1 x 2) = 8
  CHECK_FALSE(overlap);
}

// DP with only the last bucket exposed: buckets become ready evenly over the last backward; when
// each bucket's reduction is shorter than the backward's time per bucket, the communication
// stream is idle when the last one becomes ready (at the backward's end), so what is exposed is
// exactly the last bucket's reduction (its size the remainder of the gradients over 25 MB).
TEST_CASE("DP exposes only the last bucket when the reduction keeps up", "[analytic]") {
  const hw::SystemSpec sys = hw::find_system("dgx-a100-superpod-32");
  const TransformerConfig m = megatron_gpt(4096, 32, 8);
  ParallelOptions o;
  o.gpus = 16, o.tp = 8, o.pp = 1, o.dp = 2, o.micro_batch = 4, o.global_batch = 8, o.seq = 2048;
  const ParallelResult r = run_parallel(m, o, sys, TimingMode::kFast);
  const double total = r.stages[0].params * o.grad_bytes, bucket = 25e6;
  const int n = static_cast<int>(std::ceil(total / bucket));
  REQUIRE(n == r.dp_buckets);
  std::vector<std::vector<int>> groups(8);
  for (int t = 0; t < 8; ++t) groups[t] = {place_rank(o, t, 0, 0), place_rank(o, t, 0, 1)};
  CollectiveTimes coll(sys);
  const double full = coll.concurrent_time(models::CollOp::kAllReduce, bucket, groups);
  const double last =
      coll.concurrent_time(models::CollOp::kAllReduce, total - (n - 1) * bucket, groups);
  const double per_bucket = r.stages[0].bwd_exec.step_time_s / n;
  REQUIRE(full < per_bucket);  // the premise: the reduction keeps up
  CHECK(r.dp_exposed_s == Approx(last).epsilon(1e-9));
}

// Interleaved 1F1B (Narayanan et al. 2021 sec. 2.2.2): each device holds v chunks of F/v and B/v;
// the fill and drain shrink to (p-1)(F + B)/v, so the bubble is (p-1)/(m v) of m(F + B).
TEST_CASE("the interleaved bubble is (p-1)/(m v) of the ideal", "[analytic]") {
  for (int p : {2, 4})
    for (int v : {2, 3})
      for (int m : {4, 8, 16}) {
        const double F = 1.0, B = 2.0;
        const auto ops =
            simulate_pipeline(PipeSchedule::kInterleaved, m, std::vector<double>(p * v, F / v),
                              std::vector<double>(p * v, B / v), 0.0, v);
        double end = 0;
        for (const auto& op : ops) end = std::max(end, op.end_s);
        const double ideal = m * (F + B);
        INFO("p " << p << " v " << v << " m " << m);
        CHECK(ops.size() == static_cast<std::size_t>(2 * p * v * m));
        CHECK((end - ideal) / ideal == Approx(double(p - 1) / (m * v)).epsilon(1e-9));
      }
}

// Korthikanti et al. 2022 sec. 4.2.3 and Fig. 1 (REFERENCE.md 4.1): with the interleaved schedule
// the first device holds L (1 + (p-1)/(pv)) layers' activations. 175B (t 8, p 8, v 3, b 1):
// sbh (13 + 10) x 96 x (1 + 7/24) = 66.84 GiB; 530B (t 8, p 35, v 3; a 128, h 20480):
// sbh (13 + 8) x 105 x (1 + 34/105) = 114.02 GiB (the paper's figures; 0.01 GiB: two decimals).
TEST_CASE("interleaved activation memory matches Korthikanti's 175B and 530B", "[analytic]") {
  ParallelOptions o;
  o.tp = 8, o.dp = 1, o.micro_batch = 1, o.seq = 2048;
  o.schedule = PipeSchedule::kInterleaved, o.virtual_stages = 3;
  o.pp = 8, o.global_batch = 64;
  CHECK(stage_memory(megatron_gpt(12288, 96, 96), o, 0, 0).activations / kGiB ==
        Approx(66.84).margin(0.01));
  o.pp = 35, o.global_batch = 280;
  CHECK(stage_memory(megatron_gpt(20480, 128, 105), o, 0, 0).activations / kGiB ==
        Approx(114.02).margin(0.01));
}
