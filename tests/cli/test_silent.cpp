// Issue 21, answers that were silently wrong: each input now gets an error at the file and line of
// the key that causes it (exit 2), or a report of what was left out.
#include <catch2/catch.hpp>

#include <string>

#include "hw/config.hpp"
#include "tests/cli/harness.hpp"

using namespace ridge::test;

namespace {
std::string model_overlay(const std::string& model, const std::string& keys) {
  return "base: " + std::string(RIDGE_SOURCE_DIR) + "/configs/models/" + model + ".yaml\n" + keys;
}
}  // namespace

TEST_CASE("silent: heads must divide d_model unless head_dim is given", "[config-errors]") {
  Scratch s;
  // 768 / 7 = 109.7: it ran with head_dim 109 (k = 763 in the attention GEMMs).
  s.write("m.yaml", model_overlay("gpt2-small", "model: {heads: 7}\n"));
  s.write("study.yaml", "study:\n  model: m.yaml\n  workload: {kind: decode, context: 8}\n");
  Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "m.yaml:2:16: model.heads: must divide d_model (768 / 7 leaves 5), "
                 "or give head_dim"));
  // With head_dim stated the model is what it says (as Gemma's 256 x 8 != 2048).
  s.write("m.yaml", model_overlay("gpt2-small", "model: {heads: 7, head_dim: 64}\n"));
  CHECK(run_ridge("run study.yaml", s.dir).status == 0);
}

TEST_CASE("silent: model sizes beyond 32-bit counts are refused", "[config-errors]") {
  Scratch s;
  s.write("m.yaml", model_overlay("gpt2-small", "model: {d_model: 1e12}\n"));
  s.write("study.yaml", "study:\n  model: m.yaml\n  workload: {kind: decode, context: 8}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "model.d_model: value out of range: 1000000000000 is not in [1, "
                 "1048576]"));
}

TEST_CASE("silent: a VAE channel count must be a whole number", "[config-errors]") {
  Scratch s;
  s.write("m.yaml", model_overlay("dit-xl2-image-e2e",
                                  "model:\n  vae:\n    stages: [[512abc, 512], [512, 256]]\n"));
  s.write("study.yaml", "study:\n  model: m.yaml\n  workload: {kind: diffusion, steps: 1}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);  // std::stoll read "512abc" as 512
  CHECK(contains(r.output,
                 "m.yaml:4:14: model.vae.stages: expected whole channel counts in "
                 "[1, 1048576], got [512abc, 512]"));
}

TEST_CASE("silent: decode context must fit the positions and the cache", "[config-errors]") {
  Scratch s;
  // Columns: the value after "    - {kind: prefill, prompt: " is at 31, after "... seq: " at 26.
  // GPT-2 small has 1024 positions; the cache holds max_len (default 2048) tokens. A decode step
  // adds one token to `context` cached ones, so it needs context + 1 of each.
  s.write("study.yaml",
          "study:\n  model: gpt2-small\n  workloads:\n"
          "    - {kind: decode, context: 1023}\n"
          "    - {kind: decode, context: 1024}\n"
          "    - {kind: decode, context: 500, max_len: 500}\n"
          "    - {kind: prefill, prompt: 1025}\n"
          "    - {kind: train, seq: 2048}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK_FALSE(contains(r.output, "workloads[0]"));  // 1023 + 1 = 1024 fits both
  CHECK(contains(r.output,
                 "study.yaml:5:31: study.workloads[1].context: 1024 cached tokens + "
                 "the one decoded is over the model's max_positions 1024"));
  CHECK(contains(r.output,
                 "study.yaml:6:31: study.workloads[2].context: 500 cached tokens + the "
                 "one decoded do not fit the KV cache's max_len 500"));
  CHECK(contains(r.output,
                 "study.yaml:7:31: study.workloads[3].prompt: 1025 is over the model's "
                 "max_positions 1024"));
  CHECK(contains(r.output, "study.yaml:8:26: study.workloads[4].seq: 2048 is over"));
  CHECK(contains(r.output, "4 problem(s)"));
}

TEST_CASE("silent: negative shared memory in occupancy is an error", "[config-errors]") {
  const Run r = run_ridge("occupancy --gpu h200 --threads 256 --registers 64 --shared '-48 KiB'");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "--shared: -48 KiB is negative"));
}

TEST_CASE("silent: an FP8 GEMM on an A100 is an error", "[config-errors]") {
  // The A100 has no FP8 tensor cores (A100 whitepaper, Table 1); it used the FP16 peak.
  Run r = run_ridge("kernel gemm m=4096 n=4096 k=4096 dtype=fp8_e4m3 --gpu a100");
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "A100-SXM4-80GB has no fp8 tensor cores (its tensor precisions: fp64, "
                 "tf32, fp16, bf16, int8)"));
  CHECK(run_ridge("roofline gemm m=4096 n=4096 k=4096 dtype=fp8_e4m3 --gpu a100").status == 2);
  CHECK(run_ridge("kernel gemm m=4096 n=4096 k=4096 dtype=fp8_e4m3 --gpu h100").status == 0);
  CHECK(run_ridge("kernel gemm m=4096 n=4096 k=4096 dtype=bf16 --gpu a100").status == 0);
}

TEST_CASE("silent: records compare leaves out are reported", "[config-errors]") {
  Scratch s;
  s.write("r.json", R"({"schema": "ridge.records/1", "records": [
    {"id": "a", "op": "gemm", "params": {"m": 64, "n": 64, "k": 64}, "timing": {"median_us": 5}},
    {"id": "b", "op": "gemmm", "params": {"m": 64}, "timing": {"median_us": 5}}]})");
  const Run r = run_ridge("compare r.json", s.dir);
  CHECK(r.status == 0);
  CHECK(
      contains(r.output, "not compared: 1 record(s): r.json: op 'gemmm' is not in the vocabulary"));
}

TEST_CASE("silent: an empty workload list is an error", "[config-errors]") {
  Scratch s;
  s.write("study.yaml", "study:\n  model: gpt2-small\n  workloads: []\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "study.yaml:3:14: study.workloads: expected at least one workload"));
}

TEST_CASE("errors in the study, model and GPU come out together", "[config-errors]") {
  Scratch s;
  s.write("m.yaml", model_overlay("gpt2-small", "model: {norm: rmsnrom}\n"));
  s.write("study.yaml",
          "study:\n  model: m.yaml\n  gpu: h2000\n  mode: fsat\n"
          "  workload: {kind: decode, context: 8}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "m.yaml:2:15: model.norm: expected layernorm or rmsnorm, got 'rmsnrom' "
                 "(did you mean 'rmsnorm'?)"));
  CHECK(contains(r.output, "study.yaml:3:8: study.gpu: no such GPU config"));
  CHECK(contains(r.output,
                 "study.yaml:4:9: study.mode: expected fast or detailed, got 'fsat' "
                 "(did you mean 'fast'?)"));
  CHECK(contains(r.output, "3 problem(s)"));
}

TEST_CASE("did-you-mean counts a swap of neighbours as one edit", "[unit]") {
  CHECK(ridge::hw::edit_distance("fsat", "fast") == 1);
  CHECK(ridge::hw::edit_distance("kitten", "sitting") == 3);  // the textbook Levenshtein case
  CHECK(ridge::hw::nearest_word("decod", {"train", "prefill", "decode", "diffusion"}) == "decode");
  CHECK(ridge::hw::nearest_word("zzz", {"train", "decode"}).empty());
}

TEST_CASE("silent: a what-if on nothing the workload has is an error", "[config-errors]") {
  Scratch s;
  s.write("study.yaml",
          "study:\n  model: gpt2-small\n  workloads:\n"
          "    - {label: one decode, kind: decode, context: 8}\n");
  // One GPU, no collective: communication*2 reported a 1.00x "speedup".
  Run r = run_ridge("run study.yaml --what-if 'communication*2'", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "what-if 'communication*2': the 'one decode' workload has no "
                 "communication op (it has: "));
  CHECK(run_ridge("run study.yaml --what-if 'conv2d*2'", s.dir).status == 2);
  CHECK(run_ridge("run study.yaml --what-if 'gemm*2'", s.dir).status == 0);
}
