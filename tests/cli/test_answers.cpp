// Issue 21, answers a user would doubt: each was either wrong (fixed) or right but unexplained
// (now explained in the report); and kernel errors inside workloads name the file key that sized
// the op.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op.hpp"
#include "tests/cli/harness.hpp"
#include "workloads/study.hpp"

using namespace ridge;
using namespace ridge::test;

namespace {
std::string shipped(const std::string& rel) {
  return std::string(RIDGE_SOURCE_DIR) + "/configs/" + rel;
}
int count_suffix(const workloads::Graph& g, const std::string& suffix) {
  int n = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (g.op(static_cast<int>(i)).name.ends_with(suffix)) ++n;
  return n;
}
}  // namespace

TEST_CASE("answers: precision mixed and autocast build different training steps", "[unit]") {
  // Autocast over fp32 weights casts every Linear's weight (and bias) to bf16 in each forward and
  // casts its gradients back to fp32; bf16 weights with an fp32 master copy (mixed) do neither,
  // and write the master copy back to bf16 once after AdamW. Both gave the same step time.
  const auto model = workloads::load_model_config(shipped("models/gpt2-small.yaml"));
  workloads::TrainOptions o;
  o.seq = 128;
  const auto autocast = workloads::build_train_step(model.transformer(), o);
  o.bf16_weights = true;
  const auto mixed = workloads::build_train_step(model.transformer(), o);
  // GPT-2 small: 12 layers x 4 Linears (qkv, proj, up, down) + the tied LM head = 49 weights.
  CHECK(count_suffix(autocast, ".cast_w") == 49);
  CHECK(count_suffix(autocast, ".dW.to_fp32") == 49);
  CHECK(count_suffix(mixed, ".cast_w") == 0);
  CHECK(count_suffix(mixed, ".dW.to_fp32") == 0);
  CHECK(count_suffix(mixed, "optimizer.master_to_bf16") == 1);
  const auto gpu = hw::find_gpu("h200");
  const double t_autocast = workloads::execute(autocast, gpu).step_time_s;
  const double t_mixed = workloads::execute(mixed, gpu).step_time_s;
  // Fewer kernels and fewer bytes: mixed is faster, by less than the whole step.
  CHECK(t_mixed < t_autocast);
  CHECK(t_mixed > 0.5 * t_autocast);
}

TEST_CASE("answers: recompute selective says it adds no kernels", "[unit]") {
  Scratch s;
  s.write("study.yaml", "study:\n  model: " + shipped("models/gpt2-small.yaml") +
                            "\n  workloads:\n"
                            "    - {kind: train, seq: 128, recompute: none}\n"
                            "    - {kind: train, seq: 128, recompute: selective}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "note: recompute selective adds no kernels here"));
  // Said once: for the selective workload only.
  CHECK(r.output.find("note: recompute selective") == r.output.rfind("note: recompute selective"));
}

TEST_CASE("answers: a what-if that moves the step the wrong way says what changed", "[unit]") {
  // The default study's host-bound eager decode: a faster HBM made the step 1% slower. The kernel
  // plans chosen for the changed GPU launch a different number of kernels, each costing the host a
  // launch; the report now says so beside the number.
  const auto study = workloads::load_study(shipped("studies/default.yaml"));
  const auto model = workloads::load_model_config(study.model_path);
  const auto gpu = hw::find_gpu(study.gpu_name);
  const auto r = workloads::run_workload(model, gpu, study.workloads[0],
                                         {"hbm_bandwidth*1.5", "hbm_bandwidth*0.5", "gemm*2"},
                                         workloads::TimingMode::kFast);
  for (const auto& w : r.what_ifs) {
    INFO(w.what_if.text << " " << w.simulated_speedup << " " << w.note);
    const bool against = (w.what_if.factor > 1 && w.simulated_speedup < 1 - 1e-9) ||
                         (w.what_if.factor < 1 && w.simulated_speedup > 1 + 1e-9);
    if (against)
      CHECK(contains(w.note, "kernels launched"));
    else if (w.simulated_speedup == Approx(1.0).epsilon(1e-12))
      CHECK(contains(w.note, "changes nothing here"));
    else
      CHECK(w.note.empty());
  }
  // attention*2 there: the attention kernels run under the host's launches, off the critical path.
  const auto a = workloads::run_workload(model, gpu, study.workloads[0], {"attention*2"},
                                         workloads::TimingMode::kFast);
  CHECK(a.what_ifs[0].simulated_speedup == Approx(1.0).epsilon(1e-12));
  CHECK(a.what_ifs[0].note == "changes nothing here: the attention ops are off the critical path");
}

TEST_CASE("answers: a latency-bound kernel's roof fraction is of its nearest roof", "[unit]") {
  // B200, 8192-cubed bf16 GEMM: 1.1e12 FLOPs; the model makes it latency-bound (operand loads in
  // flight per SM), at ~1.6 PFLOP/s of the 2.25 PFLOP/s dense bf16 peak, and 0.6 TB/s of 8 TB/s
  // HBM. It was reported as "7.4% of the memory roof".
  const auto gpu = hw::find_gpu("b200");
  const auto op = models::OpSpec::parse("gemm", {"m=8192", "n=8192", "k=8192", "dtype=bf16"});
  const auto p = models::predict_kernel(gpu, op, models::Mode::kFast, models::Timing::kKernel);
  const double f_compute = p.achieved_flops_per_s / gpu.matmul_peak(hw::Precision::kBf16);
  const double f_hbm = p.achieved_bytes_per_s / gpu.memory.hbm_bandwidth;
  CHECK(p.roof == (f_compute >= f_hbm ? "compute" : "HBM"));
  CHECK(p.roof_fraction == Approx(std::max(f_compute, f_hbm)).epsilon(1e-9));
  CHECK(p.roof_fraction > 0.5);
  // The text names the roof and, for a latency bound, why.
  const Run r = run_ridge("kernel gemm m=8192 n=8192 k=8192 dtype=bf16 --gpu b200");
  REQUIRE(r.status == 0);
  if (p.bound == "latency") CHECK(contains(r.output, "why latency"));
  CHECK(contains(r.output, "of the " + p.roof + " roof"));
}

TEST_CASE("answers: a PCIe copy's bandwidth is labelled PCIe", "[unit]") {
  const auto gpu = hw::find_gpu("h200");
  const auto op = models::OpSpec::parse("copy", {"bytes=1073741824", "direction=h2d"});
  const auto p = models::predict_kernel(gpu, op, models::Mode::kFast, models::Timing::kKernel);
  CHECK(p.roof == "PCIe");
  // 1 GiB over PCIe Gen5 x16 (~55 GB/s achievable): well under 1 of the PCIe roof, far above 0.
  CHECK(p.roof_fraction > 0.05);
  CHECK(p.roof_fraction <= 1.0);
  const Run r = run_ridge("kernel copy bytes=1073741824 direction=h2d --gpu h200");
  REQUIRE(r.status == 0);
  CHECK(contains(r.output, "GB/s PCIe"));
  CHECK(contains(r.output, "of the PCIe roof"));
  CHECK(!contains(r.output, "GB/s HBM"));
}

TEST_CASE("answers: an op the kernel model refuses is reported at the keys that sized it",
          "[config-errors]") {
  Scratch s;
  // 1,048,576 x 8,192 tokens: the LM head's logits (m = 2^33, n = vocab 128,256, bf16) are
  // 2^33 x 128,256 x 2 B = 2.2e15 B, over the 2^50 B op limit. Reported at the model's vocab and
  // d_model and at the two workload keys whose product is m.
  s.write(
      "tokens.yaml",
      "study:\n  model: llama3-8b\n  workload: {kind: train, micro_batch: 1048576, seq: 8192}\n");
  Run r = run_ridge("run tokens.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "llama3-8b.yaml:9:12: model.d_model: 4096 sizes an op of workload "
                 "'train' that cannot run (lm_head: gemm"));
  CHECK(contains(r.output, "over the limit of 2^50 (1 PiB) per op"));
  CHECK(contains(r.output, "model.vocab: 128256 sizes that op too"));
  CHECK(contains(r.output, "tokens.yaml:3:40: study.workload.micro_batch: 1048576 sizes that op"));
  CHECK(contains(r.output, "tokens.yaml:3:54: study.workload.seq: 8192 sizes that op too"));
  // head_dim 1024 in an overlay: the decode attention kernel needs 2 x 2 x 64 x 1024 x 2 B of
  // K/V tiles and more, over the H200's 227 KiB of shared memory per block: reported first at the
  // overlay's head_dim (the key its author changed), then at the base's heads and kv_heads, and
  // not at layers: 32 (= heads: 32; layer counts size no op).
  s.write("hd.yaml", "base: " + shipped("models/llama3-8b.yaml") + "\nmodel: {head_dim: 1024}\n");
  s.write("hd-study.yaml", "study:\n  model: hd.yaml\n  workload: {kind: decode, context: 1024}\n");
  r = run_ridge("run hd-study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "hd.yaml:2:19: model.head_dim: 1024 sizes an op of workload 'decode' "
                 "that cannot run (layer0.attn.sdpa: attention"));
  CHECK(contains(r.output, "cannot launch on H200"));
  CHECK(!contains(r.output, "model.layers"));
}

TEST_CASE("answers: an overlay's change is reported at the overlay's line", "[config-errors]") {
  // The overlay sets d_model 770, which the base's 12 heads do not divide: the error stood only at
  // the base file's heads line.
  Scratch s;
  s.write("m.yaml", "base: " + shipped("models/gpt2-small.yaml") + "\nmodel:\n  d_model: 770\n");
  s.write("study.yaml", "study:\n  model: m.yaml\n  workload: {kind: decode, context: 8}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "m.yaml:3:12: model.d_model: 770 is not divisible by heads 12 ("));
  CHECK(contains(r.output,
                 "gpt2-small.yaml:10:10: model.heads: must divide d_model (770 / 12 "
                 "leaves 2), or give head_dim"));
}

TEST_CASE("crash: a graph file without kind is an error, not SIGSEGV", "[config-errors]") {
  // Found by fuzz_graph (an empty input): the kind check dereferenced the missing key's node.
  Scratch s;
  s.write("nk.yaml", "question: q\n");
  s.write("empty.yaml", "");
  for (const char* f : {"nk.yaml", "empty.yaml"}) {
    const Run r = run_ridge(std::string("export chakra ") + f + " --out o.et", s.dir);
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(contains(r.output, "kind: missing required key"));
    CHECK(!s.exists("o.et"));
  }
}

TEST_CASE("crash: two graph ops without a name are not a duplicate", "[config-errors]") {
  // Found by fuzz_graph: the duplicate check dereferenced the missing name's node (SIGSEGV).
  Scratch s;
  s.write("g.yaml", "kind: graph\nops:\n  - {time: 1 ms}\n  - {time: 2 ms}\n");
  const Run r = run_ridge("export chakra g.yaml --out o.et", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "ops[1].name: missing required key"));
  CHECK(!contains(r.output, "duplicate"));
}

TEST_CASE("a model name the file system refuses is a missing model", "[config-errors]") {
  // Found by fuzz_study: a 300-byte name made std::filesystem throw (ENAMETOOLONG): exit 1,
  // "filesystem error", no file or line. It is now the model loader's error about that file.
  Scratch s;
  s.write("study.yaml", "study:\n  model: " + std::string(300, 'x') +
                            "\n  workload: {kind: decode, context: 8}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(!contains(r.output, "filesystem error"));
  CHECK(contains(r.output, "problem(s) in the configuration"));
}

TEST_CASE("crash: a system's nics without count is a lanes error, not SIGSEGV", "[config-errors]") {
  // Found by the long fuzz_config run (UBSan: reference binding to a null pointer): the NIC-lanes
  // check pointed at the `count` key, which may be absent (0 NICs, the table's default). The
  // shipped DGX H100 without its NIC count and with 64 PCIe lanes: the 8 GPUs alone need
  // 8 x 16 = 128 lanes, more than 64.
  std::ifstream in(shipped("systems/dgx-h100.yaml"), std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto drop = text.find("      count: 8\n");
  REQUIRE(drop != std::string::npos);
  text.erase(drop, std::string("      count: 8\n").size());
  const auto lanes = text.find("      lanes: 256\n");
  REQUIRE(lanes != std::string::npos);
  text.replace(lanes, std::string("      lanes: 256\n").size(), "      lanes: 64\n");
  Scratch s;
  s.write("sys.yaml", text);
  const Run r = run_ridge("system show sys.yaml", s.dir);
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "sys.yaml:"));
  CHECK(contains(r.output,
                 "node.nics.count: 0 NICs x 16 lanes + 8 GPUs x 16 lanes = 128 PCIe "
                 "lanes, but the node has 64 (node.pcie.lanes)"));
}
