// Parallel training steps beyond TP/PP/DP (workloads/parallel.hpp): mixture of experts and expert
// parallelism (the MoE model files against their published sizes, the all-to-all sizes and expert
// GEMM shapes derived by hand, expert memory and gradient groups, rank placement), context
// parallelism, ZeRO-2/3 and FSDP, the trace's per-stream detail, and the `parallel:` block's
// errors for them.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "hw/config.hpp"
#include "hw/system_loader.hpp"
#include "tests/workloads/load_error.hpp"
#include "workloads/model_config.hpp"
#include "workloads/parallel.hpp"
#include "workloads/study.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

// A small MoE model: 4 layers, hidden 1024, 16 heads, 8 experts of width 2048, top-2, SwiGLU.
TransformerConfig small_moe() {
  TransformerConfig m;
  m.name = "small-moe";
  m.style = "llama";
  m.layers = 4;
  m.d_model = 1024;
  m.heads = 16;
  m.kv_heads = 16;
  m.head_dim = 64;
  m.ffn = 2048;
  m.gated_mlp = true;
  m.activation = "silu";
  m.vocab = 32000;
  m.norm = NormType::kRmsNorm;
  m.bias = false;
  m.position = "rope";
  m.max_positions = 4096;
  m.experts = 8;
  m.top_k = 2;
  m.expert_ffn = 2048;
  m.shared_expert_ffn = 2048;
  return m;
}

// On one DGX H100 (8 GPUs): TP 2 with sequence parallelism, DP 4, EP 4; micro-batch 1 of 1024.
ParallelOptions small_options() {
  ParallelOptions o;
  o.system = "dgx-h100";
  o.gpus = 8;
  o.tp = 2, o.pp = 1, o.dp = 4, o.ep = 4;
  o.sequence_parallel = true;
  o.micro_batch = 1;
  o.global_batch = 4;
  o.seq = 1024;
  return o;
}

const OpNode* find_op(const Graph& g, const std::string& name) {
  for (std::size_t i = 0; i < g.size(); ++i)
    if (g.op(static_cast<int>(i)).name == name) return &g.op(static_cast<int>(i));
  return nullptr;
}

std::string study_error(const std::string& text) {
  return ridge::test::load_error("test_moe_bad.yaml", text,
                                 [](const std::string& p) { load_study(p); });
}

std::string model_error(const std::string& text) {
  return ridge::test::load_error("test_moe_model_bad.yaml", text,
                                 [](const std::string& p) { load_model_config(p); });
}

}  // namespace

// Mixtral 8x7B (h 4096, 32 layers, 32 heads of 128, 8 KV heads, 8 experts of width 14336, top-2,
// vocab 32000 untied): attention 2 x 4096 x 4096 + 2 x 4096 x 1024 = 41.9M, one expert
// 3 x 4096 x 14336 = 176.2M, router 8 x 4096, norms 2 x 4096 per layer; embeddings 2 x 32000 x
// 4096 = 262M: 46.70B in all, 12.88B with 2 of the 8 experts. Mistral AI: 46.7B and 12.9B.
// DeepSeek-V3 (MLA as GQA, see its file's header): 675B against DeepSeek's 671B (+0.6%).
// Tolerance: 0.5% for Mixtral (the published figures have 3 digits), 1% for DeepSeek-V3 (the
// stated approximation).
TEST_CASE("MoE model files match their published parameter counts", "[analytic]") {
  const TransformerConfig mix = load_model_config("mixtral-8x7b").transformer();
  CHECK(mix.is_moe());
  CHECK(mix.moe_layer_count() == 32);
  CHECK(double(mix.parameter_count()) == Approx(46.7e9).epsilon(0.005));
  const double active = double(mix.parameter_count()) - double(mix.moe_layer_count()) *
                                                            (mix.experts - mix.top_k) *
                                                            double(mix.expert_parameter_count());
  CHECK(active == Approx(12.9e9).epsilon(0.005));
  const TransformerConfig ds = load_model_config("deepseek-v3").transformer();
  CHECK(ds.moe_layer_count() == 58);
  CHECK(!ds.moe_layer(2));
  CHECK(ds.moe_layer(3));
  CHECK(double(ds.parameter_count()) == Approx(671e9).epsilon(0.01));
  // A dense model's count is what it was: experts = 0 leaves every layer dense.
  const TransformerConfig gpt = load_model_config("gpt3-175b").transformer();
  CHECK(gpt.moe_layer_count() == 0);
  CHECK(double(gpt.parameter_count()) == Approx(175e9).epsilon(0.01));
}

// Per rank, T = 1 x 1024 tokens, s/tp = 512 with SP; each routed to k = 2 experts of h = 1024 bf16
// values: the all-to-all's send buffer is 512 x 2 x 1024 x 2 B = 2,097,152 B, (ep-1)/ep = 3/4 of it
// leaving the GPU. After the all-to-all and the TP all-gather, each of the E/ep = 2 local experts
// takes ep x T x k / E = 4 x 1024 x 2 / 8 = 1024 tokens: its grouped FC1 is 1024 x (2 x 2048/2)
// x 1024 over a batch of 2. Each MoE layer runs 2 all-to-alls forward (dispatch, combine) and 2
// backward; their time is the EP groups' all-to-all on the node's fabric: default placement
// (tp, pp, ep, dp) puts (t, e) on GPU t + 2e, so the groups are {0,2,4,6} and {1,3,5,7}.
TEST_CASE("all-to-all size, tokens per expert and EP calls per layer", "[analytic]") {
  const TransformerConfig m = small_moe();
  const ParallelOptions o = small_options();
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  CollectiveTimes coll(sys);
  const StageGraphs sg = build_stage(m, o, 0, sys.node.gpu, coll, TimingMode::kFast);
  CHECK(sg.a2a_bytes == 2097152.0);
  CHECK(sg.a2a_bytes * (o.ep - 1) / o.ep == 1572864.0);
  CHECK(sg.tokens_per_expert == 1024.0);
  const OpNode* fc1 = find_op(sg.forward, "layer0.moe.expert.fc1");
  REQUIRE(fc1 != nullptr);
  CHECK(fc1->op.i("m") == 1024);
  CHECK(fc1->op.i("n") == 2048);
  CHECK(fc1->op.i("k") == 1024);
  CHECK(fc1->op.i("batch") == 2);
  CHECK(sg.ep_collectives_fwd == 2 * 4);
  CHECK(sg.ep_collectives_bwd == 2 * 4);
  CollectiveTimes fresh(sys);
  const double a2a =
      fresh.concurrent_time(models::CollOp::kAllToAll, 2097152.0, {{0, 2, 4, 6}, {1, 3, 5, 7}});
  CHECK(a2a > 0);
  CHECK(sg.ep_fwd_s == Approx(8 * a2a).epsilon(1e-12));
  CHECK(sg.ep_bwd_s == Approx(8 * a2a).epsilon(1e-12));
  // Capacity factor 1.25 (padded): both the all-to-all and the expert GEMMs grow by 1.25.
  ParallelOptions c = o;
  c.capacity_factor = 1.25;
  const StageGraphs sc = build_stage(m, c, 0, sys.node.gpu, coll, TimingMode::kFast);
  CHECK(sc.a2a_bytes == 1.25 * 2097152.0);
  CHECK(sc.tokens_per_expert == 1280.0);
}

// Rank placement: the default order (tp, pp, ep, dp) is the one before EP existed,
// t + tp (stage + pp d); Megatron-Core's (tp, ep, dp, pp) puts an EP group on consecutive GPUs.
TEST_CASE("rank placement orders", "[unit]") {
  ParallelOptions o;
  o.tp = 2, o.pp = 2, o.dp = 8, o.ep = 4;
  for (int t = 0; t < o.tp; ++t)
    for (int s = 0; s < o.pp; ++s)
      for (int d = 0; d < o.dp; ++d) CHECK(place_rank(o, t, s, d) == t + o.tp * (s + o.pp * d));
  o.placement = {"tp", "ep", "dp", "pp"};
  // (t, e, j, s) -> t + 2 (e + 4 (j + 2 s)): EP ranks of t = 0, j = 0, s = 0 are 0, 2, 4, 6.
  CHECK(place_rank(o, 0, 0, 1) == 2);
  CHECK(place_rank(o, 1, 0, 3) == 7);
  CHECK(place_rank(o, 0, 0, 4) == 8);   // d = 4: e = 0, j = 1
  CHECK(place_rank(o, 0, 1, 0) == 16);  // the next stage after tp x dp = 16 GPUs
}

// EP all-to-alls inside a node ride NVLink; spread over nodes they cross the NICs (on the H100
// cluster 8 x 50 GB/s per node against 450 GB/s NVLink per GPU): the same all-to-all is slower.
TEST_CASE("EP inside a node is faster than EP across nodes", "[property]") {
  TransformerConfig m = small_moe();
  ParallelOptions o;
  o.system = "dgx-h100-cluster-128";
  o.gpus = 64;
  o.tp = 1, o.pp = 1, o.dp = 64, o.ep = 8;
  o.micro_batch = 1, o.global_batch = 64, o.seq = 1024;
  const hw::SystemSpec sys = hw::find_system("dgx-h100-cluster-128");
  CollectiveTimes coll(sys);
  // Default placement: EP rank e is DP rank e, GPU e: one node.
  const StageGraphs inside = build_stage(m, o, 0, sys.node.gpu, coll, TimingMode::kFast);
  o.placement = {"tp", "pp", "dp", "ep"};  // EP outermost: GPU j + 8e, one per node
  const StageGraphs across = build_stage(m, o, 0, sys.node.gpu, coll, TimingMode::kFast);
  CHECK(inside.a2a_bytes == across.a2a_bytes);
  CHECK(inside.ep_fwd_s < across.ep_fwd_s);
  CHECK(inside.fwd_exec.step_time_s < across.fwd_exec.step_time_s);
}

// Expert memory per GPU: the stage's MoE layers x experts / ep x one expert / tp. Small model,
// tp 2, ep 4: 4 layers x 2 experts x 3 x 1024 x 2048 / 2 = 25,165,824 parameters. Optimizer state
// with ZeRO-1: 12 B of the dense part over dp = 4, of the experts over dp / ep = 1.
TEST_CASE("expert parameters, memory and gradient groups", "[analytic]") {
  const TransformerConfig m = small_moe();
  ParallelOptions o = small_options();
  o.zero = 1;
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  const ParallelResult r = run_parallel(m, o, sys, TimingMode::kFast);
  REQUIRE(r.stages.size() == 1);
  CHECK(r.stages[0].expert_params == 25165824.0);
  const double P = r.stages[0].params, X = 25165824.0;
  CHECK(r.memory[0].weights == 2 * P);
  CHECK(r.memory[0].grads == 4 * P);
  CHECK(r.memory[0].optimizer == Approx(12 * (P - X) / 4 + 12 * X / 1).epsilon(1e-12));
  CHECK(r.expert_buckets == 0);  // ep = dp: every expert is on one rank of the DP group
  // ep 2: 4 experts per GPU (twice the parameters), their gradients reduced over dp / ep = 2.
  o.ep = 2;
  const ParallelResult r2 = run_parallel(m, o, sys, TimingMode::kFast);
  CHECK(r2.stages[0].expert_params == 2 * X);
  CHECK(r2.expert_buckets >= 1);
  CHECK(r2.memory[0].optimizer ==
        Approx(12 * (r2.stages[0].params - 2 * X) / 4 + 12 * 2 * X / 2).epsilon(1e-12));
}

// The all-to-alls run on the compute stream between the kernels that produce and consume their
// tokens: removing them (ep_comm*0) takes their whole time off a GPU-bound step (micro-batch 8:
// 8192 tokens, so kernels, not launches, bound it), as Amdahl says. DP (ep = dp) has no expert
// buckets, and its dense buckets' exposed tail is the last one's either way (they keep up).
TEST_CASE("ep_comm what-if re-simulates without the all-to-alls", "[unit]") {
  const TransformerConfig m = small_moe();
  ParallelOptions o = small_options();
  o.micro_batch = 8, o.global_batch = 32;
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  const ParallelResult base = run_parallel(m, o, sys, TimingMode::kFast);
  const double ep = base.critical_s.at("ep_comm");
  CHECK(ep > 0);
  const ParallelWhatIfResult w =
      run_parallel_what_if(m, o, sys, TimingMode::kFast, base, parse_parallel_what_if("ep_comm*0"));
  // Each removed call also takes its launch off the path (the executor's ~1 us per kernel on
  // the host): allowed 1.1 us per call.
  const int calls = base.stages[0].ep_collectives_fwd + base.stages[0].ep_collectives_bwd;
  CHECK(w.step_s == Approx(base.step_s - ep).margin(1.1e-6 * calls));
  CHECK(w.step_s < base.step_s - ep);
  CHECK(w.amdahl_s == Approx(base.step_s - ep).epsilon(1e-9));
}

TEST_CASE("bad MoE parallel blocks and model files are reported with file:line:col", "[config]") {
  const std::string head = "study:\n  model: mixtral-8x7b\n  parallel:\n    system: dgx-h100\n";
  std::string e = study_error(head + "    dp: 8\n    ep: 3\n");
  CHECK(e.find("test_moe_bad.yaml:6:9: study.parallel.ep: ep 3 does not divide dp 8") !=
        std::string::npos);
  e = study_error(head + "    dp: 1\n    tp: 2\n    pp: 4\n");
  CHECK(e.find("needs sequence_parallel: true") != std::string::npos);
  e = study_error(head + "    tp: 1\n    dp: 8\n    ep: 8\n    placement: [tp, pp, dp]\n");
  CHECK(e.find(":8:16: study.parallel.placement: expected an order of tp, pp, ep and dp") !=
        std::string::npos);
  e = study_error(
      "study:\n  model: gpt3-175b\n  parallel:\n    system: dgx-h100\n    tp: 8\n    ep: 2\n");
  CHECK(e.find(":6:9: study.parallel.ep: ep 2 needs a mixture-of-experts model") !=
        std::string::npos);
  e = study_error(head + "    tp: 1\n    pp: 1\n    dp: 8\n    ep: 8\n");
  CHECK(e.empty());
  // 8 experts: ep 16 does not divide them (dgx-h100-cluster-128, 16 GPUs).
  e = study_error(
      "study:\n  model: mixtral-8x7b\n  parallel:\n    system: dgx-h100-cluster-128\n"
      "    gpus: 16\n    dp: 16\n    ep: 16\n");
  CHECK(e.find(":7:9: study.parallel.ep: ep 16 does not divide the model's 8 experts") !=
        std::string::npos);
  const std::string model =
      "model:\n  name: x\n  source: test\n  layers: 2\n  d_model: 64\n  heads: 4\n  ffn: 256\n"
      "  vocab: 100\n  max_positions: 64\n";
  e = model_error(model + "  experts: 4\n  top_k: 5\n");
  CHECK(e.find(":11:10: model.top_k: top_k 5 is more than the 4 experts") != std::string::npos);
  e = model_error(model + "  top_k: 2\n");
  CHECK(e.find(":10:10: model.top_k: needs experts:") != std::string::npos);
}

// ---- Context parallelism ----

namespace {
// The small model made dense (4 layers, h 1024, 16 heads of 64), on one DGX H100: CP 4 x DP 2,
// sequences of 4096 tokens.
ParallelOptions cp_options() {
  ParallelOptions o;
  o.system = "dgx-h100";
  o.gpus = 8;
  o.tp = 1, o.pp = 1, o.dp = 2, o.cp = 4;
  o.micro_batch = 1;
  o.global_batch = 2;
  o.seq = 4096;
  return o;
}
TransformerConfig small_dense() {
  TransformerConfig m = small_moe();
  m.experts = 0, m.top_k = 0;
  return m;
}
long long count_ops(const Graph& g, const std::string& suffix) {
  long long n = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const std::string& name = g.op(static_cast<int>(i)).name;
    n += name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return n;
}
}  // namespace

// Each rank holds s / cp = 1024 tokens; a ring step moves its K and V block: 2 x 1024 tokens x
// 16 x 64 wide x 2 B = 4,194,304 B (backward: K, V and their gradients, twice that). A layer's
// attention is cp = 4 blocks of 1024 x 1024 scores (QK^T per block m = n = 1024, k = 64 over 16
// heads) with cp - 1 = 3 ring transfers in the forward and 3 in the backward; all ranks together
// compute cp x cp blocks of (s/cp)^2 = the s^2 of the unsplit sequence. The default placement
// (tp, cp, pp, ep, dp) puts CP rank c of DP rank d on GPU c + 4d: rings {0,1,2,3} and {4,5,6,7}.
TEST_CASE("ring attention: block size, transfers and work per rank", "[analytic]") {
  const TransformerConfig m = small_dense();
  const ParallelOptions o = cp_options();
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  CollectiveTimes coll(sys);
  const StageGraphs sg = build_stage(m, o, 0, sys.node.gpu, coll, TimingMode::kFast);
  CHECK(sg.cp_block_bytes == 4194304.0);
  CHECK(sg.cp_transfers_fwd == 3 * 4);
  CHECK(sg.cp_transfers_bwd == 3 * 4);
  CHECK(count_ops(sg.forward, "attn.qk") == 4 * 4);
  const OpNode* qk = find_op(sg.forward, "layer0.attn.qk");
  REQUIRE(qk != nullptr);
  CHECK(qk->op.i("m") == 1024);
  CHECK(qk->op.i("n") == 1024);
  CHECK(qk->op.i("batch") == 16);
  CollectiveTimes fresh(sys);
  const double fwd =
      fresh.concurrent_time(models::CollOp::kSendRecv, 4194304.0, {{0, 1, 2, 3}, {4, 5, 6, 7}});
  const double bwd =
      fresh.concurrent_time(models::CollOp::kSendRecv, 8388608.0, {{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(sg.cp_fwd_s == Approx(12 * fwd).epsilon(1e-12));
  CHECK(sg.cp_bwd_s == Approx(12 * bwd).epsilon(1e-12));
  // The QKV GEMM runs on the rank's 1024 tokens.
  const OpNode* qkv = find_op(sg.forward, "layer0.attn.qkv");
  REQUIRE(qkv != nullptr);
  CHECK(qkv->op.i("m") == 1024);
}

// On NVLink a 4 MB block moves in ~10 us, a block's attention (16 heads of 1024 x 1024) takes
// longer: the ring hides behind it, so no CP transfer is on the critical path and removing them
// (cp_comm*0) changes the step by less than 0.1% (their launches). Micro-batch 4, so kernels
// rather than launches bound the step.
TEST_CASE("ring transfers hide behind the attention blocks", "[property]") {
  const TransformerConfig m = small_dense();
  ParallelOptions o = cp_options();
  o.micro_batch = 4, o.global_batch = 8;
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  const ParallelResult r = run_parallel(m, o, sys, TimingMode::kFast);
  CHECK(r.stages[0].cp_fwd_s > 0);
  CHECK(r.critical_s.count("cp_comm") == 0);
  const ParallelWhatIfResult w =
      run_parallel_what_if(m, o, sys, TimingMode::kFast, r, parse_parallel_what_if("cp_comm*0"));
  CHECK(w.step_s == Approx(r.step_s).epsilon(1e-3));
}

// Activation memory with CP: Korthikanti's selective-recompute bytes (34 sbh per layer, no
// s^2 term) are linear in the tokens a rank holds, so CP 2 keeps half of CP 1's. Without
// recompute the scores keep s/cp queries x s keys: 5 a (s/cp) s b per layer, the formula's
// 5 a (s/cp)^2 b term x cp. ZeRO-1 shards the optimizer over DP x CP.
TEST_CASE("activation and optimizer memory with CP", "[analytic]") {
  const TransformerConfig m = small_dense();
  ParallelOptions o = cp_options();
  o.recompute = Recompute::kSelective;
  o.cp = 1, o.dp = 8, o.global_batch = 8;
  const double one = stage_memory(m, o, 0, 1e9).activations;
  o.cp = 2, o.dp = 4;
  CHECK(stage_memory(m, o, 0, 1e9).activations == Approx(one / 2).epsilon(1e-12));
  o.recompute = Recompute::kNone;
  const double sl = 2048, s = 4096, h = 1024, a = 16;
  const double per_layer = sl * h * (34 + 5 * a * sl / h) + 5 * a * sl * sl;  // b = 1, t = 1
  CHECK(per_layer == Approx(sl * h * 34 + 5 * a * sl * s));
  CHECK(stage_memory(m, o, 0, 1e9).activations == Approx(4 * per_layer).epsilon(1e-12));
  o.zero = 1;
  CHECK(stage_memory(m, o, 0, 1e9).optimizer == Approx(12e9 / 8).epsilon(1e-12));
}

TEST_CASE("bad CP parallel blocks are reported with file:line:col", "[config]") {
  const std::string head = "study:\n  model: llama3-8b\n  parallel:\n    system: dgx-h100\n";
  std::string e = study_error(head + "    tp: 2\n    cp: 2\n    dp: 1\n");
  CHECK(e.find(":7:9: study.parallel.dp: tp x cp x pp x dp = 2 x 2 x 1 x 1 = 4 GPUs, but 8") !=
        std::string::npos);
  e = study_error(head + "    tp: 1\n    cp: 8\n    seq: 2040\n");
  CHECK(e.find(":7:10: study.parallel.seq: seq 2040 is not divisible by 2 x cp = 16") !=
        std::string::npos);
  e = study_error(head + "    tp: 2\n    cp: 4\n    seq: 4096\n");
  CHECK(e.empty());
}

// ---- ZeRO-2/3 and FSDP ----

// Memory per parameter over N = dp x cp ranks: ZeRO-1 shards the 12 B of fp32 master weights and
// Adam moments, ZeRO-2 the 4 B of fp32 gradients too, ZeRO-3 / FSDP the 2 B of bf16 weights too:
// 18 B / N in all, plus the layer being computed and the one prefetched held whole, 2 x 2 B each.
TEST_CASE("ZeRO-2 and ZeRO-3 memory per GPU", "[analytic]") {
  const TransformerConfig m = small_dense();
  ParallelOptions o;
  o.dp = 8, o.global_batch = 8;
  const double P = 1e9, L = 1e8;
  o.zero = 2;
  StageMemory z = stage_memory(m, o, 0, P, 0, L);
  CHECK(z.weights == 2 * P);
  CHECK(z.grads == Approx(4 * P / 8));
  CHECK(z.optimizer == Approx(12 * P / 8));
  o.zero = 3;
  z = stage_memory(m, o, 0, P, 0, L);
  CHECK(z.weights + z.grads + z.optimizer == Approx(18 * P / 8 + 4 * L));
  o.zero = 0, o.fsdp = true;  // FSDP full shard: the same
  const StageMemory f = stage_memory(m, o, 0, P, 0, L);
  CHECK(f.weights + f.grads + f.optimizer == Approx(18 * P / 8 + 4 * L));
  o.fsdp = false, o.zero = 3, o.cp = 2;  // over DP x CP = 16
  z = stage_memory(m, o, 0, P, 0, L);
  CHECK(z.weights + z.grads + z.optimizer == Approx(18 * P / 16 + 4 * L));
}

// FSDP on one DGX H100 (DP 8, the small dense model, 4 layers, micro-batch 8 of 1024 tokens): per
// layer one all-gather of its bf16 parameters before the forward, one before the backward, one
// fp32 reduce-scatter after the backward: 4 / 8 calls. Each is the collective model's time on the
// 8 GPUs. With one layer prefetched only the first gather is exposed: the forward is at most the
// unsharded forward plus that gather (and the waits' launches: 1 us each allowed).
TEST_CASE("FSDP gathers and reduce-scatters per layer, prefetched", "[analytic]") {
  const TransformerConfig m = small_dense();
  ParallelOptions o;
  o.system = "dgx-h100";
  o.gpus = 8, o.dp = 8, o.micro_batch = 8, o.global_batch = 64, o.seq = 1024;
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  CollectiveTimes coll(sys);
  const StageGraphs plain = build_stage(m, o, 0, sys.node.gpu, coll, TimingMode::kFast);
  o.fsdp = true;
  const StageGraphs sg = build_stage(m, o, 0, sys.node.gpu, coll, TimingMode::kFast);
  CHECK(sg.fsdp_calls_fwd == 4);
  CHECK(sg.fsdp_calls_bwd == 8);
  const double layer = double(m.layer_parameter_count());
  const std::vector<std::vector<int>> all = {{0, 1, 2, 3, 4, 5, 6, 7}};
  const double ag = coll.concurrent_time(models::CollOp::kAllGather, 2 * layer, all);
  const double rs = coll.concurrent_time(models::CollOp::kReduceScatter, 4 * layer, all);
  CHECK(sg.fsdp_fwd_s == Approx(4 * ag));
  CHECK(sg.fsdp_bwd_s == Approx(4 * ag + 4 * rs));
  CHECK(sg.fwd_exec.step_time_s > plain.fwd_exec.step_time_s);
  CHECK(sg.fwd_exec.step_time_s <= plain.fwd_exec.step_time_s + ag + 4e-6);
  // The whole step: no DP buckets at the end (the reduce-scatters ran in the backward).
  const ParallelResult r = run_parallel(m, o, sys, TimingMode::kFast);
  CHECK(r.dp_buckets == 0);
  CHECK(r.param_gather_s == 0);
}

TEST_CASE("fsdp with another ZeRO stage is an error", "[config]") {
  const std::string e = study_error(
      "study:\n  model: llama3-8b\n  parallel:\n    system: dgx-h100\n    dp: 8\n    zero: 1\n"
      "    fsdp: true\n");
  CHECK(e.find(":7:11: study.parallel.fsdp: fsdp: true shards like zero: 3, but zero: 1") !=
        std::string::npos);
}

// The Perfetto trace's op-level detail: per simulated rank, a track per stream holding micro-batch
// 0's forward and the last micro-batch's backward op by op. With CP (the ring on stream 1) and
// FSDP (gathers on stream 2, reduce-scatters on 3) every stream has a track; ops on one stream
// never overlap (a stream runs its ops in order), and the forward's detail lies inside its
// pipeline slice.
TEST_CASE("parallel trace: a track per stream with the ops of one forward and backward", "[unit]") {
  const TransformerConfig m = small_dense();
  ParallelOptions o = cp_options();
  o.fsdp = true;
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  const ParallelResult r = run_parallel(m, o, sys, TimingMode::kFast);
  const auto j = nlohmann::json::parse(parallel_trace_json(r));
  std::map<int, int> per_tid;
  std::map<int, double> last_end;
  bool overlap = false;
  double fwd_start = -1, fwd_end = -1, first_detail = 1e30;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const int tid = e["tid"];
    const double ts = e["ts"], dur = e["dur"];
    if (tid == 0 && e["cat"] == "forward" && e["name"] == "F 0") fwd_start = ts, fwd_end = ts + dur;
    if (tid < 10) continue;
    ++per_tid[tid];
    first_detail = std::min(first_detail, ts);
    if (last_end.count(tid) && ts < last_end[tid] - 1e-6) overlap = true;
    last_end[tid] = std::max(last_end[tid], ts + dur);
  }
  CHECK(per_tid.size() == 4);
  CHECK(per_tid[12] == 4 + 4);      // 4 layers' gathers in the forward, 4 in the backward
  CHECK(per_tid[13] == 4);          // 4 layers' reduce-scatters
  CHECK(per_tid[11] == 3 * 4 * 2);  // cp - 1 ring transfers per layer, forward and backward
  CHECK_FALSE(overlap);
  CHECK(first_detail >= fwd_start);  // the graph's first op, after its launch
  CHECK(first_detail < fwd_end);
}

// Interleaving: virtual stage k runs on device k mod pp, so its CP rings, EP groups and ZeRO-3
// groups are that device's. Before this was placed by device, virtual stage 2 of 4 on 8 GPUs
// (pp 2 x cp 2 x dp 2) asked for ranks 8-15 and the run threw out_of_range. Here virtual stages 0
// and 2 both run on device 0, hold one layer each (4 layers / 4) and ring over the same ranks, so
// their CP transfer times are equal.
TEST_CASE("interleaved virtual stages use their device's CP and ZeRO-3 groups", "[unit]") {
  const TransformerConfig m = small_dense();
  const hw::SystemSpec sys = hw::find_system("dgx-h100");
  ParallelOptions o = cp_options();
  o.pp = 2, o.dp = 2, o.cp = 2, o.global_batch = 4;
  o.schedule = PipeSchedule::kInterleaved, o.virtual_stages = 2;
  ParallelOptions ov = o;
  ov.pp = 4;  // virtual stages, as run_parallel builds them
  CollectiveTimes coll(sys);
  const StageGraphs s0 = build_stage(m, ov, 0, sys.node.gpu, coll, TimingMode::kFast, 2);
  const StageGraphs s2 = build_stage(m, ov, 2, sys.node.gpu, coll, TimingMode::kFast, 2);
  CHECK(s0.cp_fwd_s > 0);
  CHECK(s2.cp_fwd_s == s0.cp_fwd_s);
  CHECK_NOTHROW(run_parallel(m, o, sys, TimingMode::kFast));
  o.cp = 1, o.zero = 3;
  CHECK_NOTHROW(run_parallel(m, o, sys, TimingMode::kFast));
}
