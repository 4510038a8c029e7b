// Issue 21, limits and silently wrong answers: each limit of `ridge describe limits` refused with
// a clear error, and inputs that used to give a wrong answer without a word.
#include <catch2/catch.hpp>

#include <filesystem>
#include "hw/limits.hpp"
#include "workloads/graph.hpp"

#include "tests/cli/harness.hpp"

using namespace ridge::test;

TEST_CASE("limits: JSON depth pre-scan counts brackets outside strings", "[unit]") {
  using ridge::hw::json_depth_error;
  const std::string ok = std::string(128, '[') + std::string(128, ']');
  CHECK(json_depth_error(ok).empty());
  const std::string deep = std::string(129, '[') + std::string(129, ']');
  CHECK(json_depth_error(deep) == "byte 128: JSON nested more than 128 levels deep (the limit)");
  // Brackets inside strings, escaped quotes included, do not count.
  const std::string in_string =
      "[\"" + std::string(500, '[') + "\\\"" + std::string(500, '{') + "\"]";
  CHECK(json_depth_error(in_string).empty());
}

namespace {
std::string model_overlay(const std::string& model, const std::string& keys) {
  return "base: " + std::string(RIDGE_SOURCE_DIR) + "/configs/models/" + model + ".yaml\n" + keys;
}
}  // namespace

TEST_CASE("limits: a YAML alias bomb is refused quickly", "[config-errors]") {
  Scratch s;
  // Nine levels of nine aliases: 9^9 = 387 M leaves from 342 bytes (billion laughs).
  std::string bomb =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  const std::string names = "abcdefghi";
  for (std::size_t i = 1; i < names.size(); ++i) {
    bomb += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 9; ++k) bomb += std::string(k ? "," : "") + "*" + names[i - 1];
    bomb += "]\n";
  }
  s.write("bomb.yaml", bomb);
  s.write("over.yaml", "base: bomb.yaml\n");
  for (const char* args : {"run bomb.yaml", "predict bomb.yaml", "hw show over.yaml"}) {
    INFO(args);
    const Run r = run_ridge(args, s.dir);
    CHECK(r.status == 2);
    CHECK(contains(r.output, "more than 200000 YAML nodes with aliases expanded"));
  }
}

TEST_CASE("limits: only regular files of at most 64 MiB are read", "[config-errors]") {
  Scratch s;
  s.write("zero.yaml", "base: /dev/zero\n");
  Run r = run_ridge("hw show zero.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "zero.yaml:1:7: base: cannot read base file: /dev/zero: not a regular file"));
  // A sparse file of 64 MiB + 1 byte: refused by its size, before a byte is read.
  s.write("big.yaml", "");
  std::filesystem::resize_file(s.dir / "big.yaml", (64ULL << 20) + 1);
  r = run_ridge("run big.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(
      contains(r.output, "big.yaml:0:0: (top): 67108865 bytes is over the input limit of 64 MiB"));
  s.write("big.json", "");
  std::filesystem::resize_file(s.dir / "big.json", (64ULL << 20) + 1);
  r = run_ridge("compare big.json", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "big.json: 67108865 bytes is over the input limit of 64 MiB"));
}

TEST_CASE("limits: a file that is not a Ridge config is never echoed", "[config-errors]") {
  Scratch s;
  // Lines ending in ':' parse as YAML keys: /etc/shadow's did, and were printed as unknown keys.
  s.write("secret", "root:$6$secrethash:19000:0:99999:7:::\nbin:*:19000:0:99999:7:::\n");
  s.write("over.yaml", "base: secret\n");
  Run r = run_ridge("hw show over.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "over.yaml:1:7: base: 'secret' is not a valid config"));
  CHECK_FALSE(contains(r.output, "secrethash"));
  CHECK_FALSE(contains(r.output, "bin:"));
  r = run_ridge("run secret", s.dir);
  CHECK(r.status == 2);
  CHECK_FALSE(contains(r.output, "secrethash"));
}

TEST_CASE("limits: products of op sizes are checked before use", "[config-errors]") {
  // m = n = k = 2^40: A and C hold 2^80 elements, 2^81 bytes in bf16, over 2^50 bytes; it printed
  // "2 us, grid 0".
  Run r = run_ridge("kernel gemm m=1099511627776 n=1099511627776 k=1099511627776");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "gemm: sizes: "));
  CHECK(contains(r.output, "over the limit of 2^50 (1 PiB) per op"));
  CHECK(run_ridge("roofline gemm m=1099511627776 n=1099511627776 k=1099511627776").status == 2);
  // 2^20 cubed: 2^61 = 2.3e18 FLOPs and 3 x 2^41 B = 6.6 TB, inside both limits: answered.
  CHECK(run_ridge("kernel gemm m=1048576 n=1048576 k=1048576").status == 0);
}

TEST_CASE("limits: detailed mode refuses work over its block budget", "[config-errors]") {
  // 2^20 cubed in tiles of at most 256x256: at least (2^20 / 256)^2 = 1.7e7 blocks > 1e7.
  const Run r = run_ridge("kernel gemm m=1048576 n=1048576 k=1048576 --mode detailed");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "detailed mode would simulate"));
  CHECK(contains(r.output, "over the budget of 1e+07"));
  CHECK(contains(r.output, "the fast-mode answer is"));
}

TEST_CASE("limits: steps, grad_accum and layers are bounded", "[config-errors]") {
  Scratch s;
  s.write("steps.yaml",
          "study:\n  model: wan2.1-t2v-1.3b\n  workload: {kind: diffusion, steps: 100000}\n");
  Run r = run_ridge("run steps.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "study.workload.steps: value out of range: 100000 is not in [1, 1000]"));
  s.write("accum.yaml",
          "study:\n  model: gpt2-small\n  workload: {kind: train, grad_accum: 4096}\n");
  r = run_ridge("run accum.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(
      contains(r.output, "study.workload.grad_accum: value out of range: 4096 is not in [1, 512]"));
  s.write("deep.yaml", model_overlay("gpt2-small", "model: {layers: 100000}\n"));
  s.write("deep-study.yaml", "study:\n  model: deep.yaml\n  workload: {kind: decode}\n");
  r = run_ridge("run deep-study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "model.layers: value out of range: 100000 is not in [1, 1024]"));
  // Inside each bound but too big together (1024 layers x 512 micro-batches): the graph's op
  // count stops it as it is built (next test; building 500,000 ops takes seconds).
}

TEST_CASE("limits: describe limits lists every limit from the constants", "[unit]") {
  const Run r = run_ridge("describe limits");
  CHECK(r.status == 0);
  for (const auto& l : ridge::hw::limits_table()) {
    INFO(l.name);
    CHECK(contains(r.output, std::string(l.name)));
    CHECK(contains(r.output, l.value));
  }
  CHECK(contains(r.output, "0.01 .. 100"));
  CHECK(contains(r.output, "64 MiB"));
}

TEST_CASE("limits: a workload graph stops at 500,000 ops", "[unit]") {
  ridge::workloads::Graph g;
  for (long long i = 0; i < ridge::hw::kMaxGraphOps; ++i) g.add(ridge::workloads::OpNode{});
  CHECK(static_cast<long long>(g.size()) == ridge::hw::kMaxGraphOps);
  CHECK_THROWS_WITH(g.add(ridge::workloads::OpNode{}),
                    Catch::Contains("graph has more than 500000 ops (the limit"));
}
