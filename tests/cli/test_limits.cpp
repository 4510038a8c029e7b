// Issue 21, limits and silently wrong answers: each limit of `ridge describe limits` refused with
// a clear error, and inputs that used to give a wrong answer without a word.
#include <catch2/catch.hpp>

#include <filesystem>
#include "hw/config.hpp"
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

namespace {
// parse_yaml's error for `text`, as "file:line:col: path: message" ("" when it parses).
std::string yaml_error(const std::string& text) {
  try {
    (void)ridge::hw::parse_yaml(text, "x.yaml");
  } catch (const ridge::hw::ConfigException& e) {
    return e.errors().size() == 1 ? e.errors()[0].str() : e.what();
  }
  return "";
}
std::string bomb_levels(int levels) {  // the alias bomb of the test above, `levels` lines
  std::string bomb =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  const std::string names = "abcdefghi";
  for (int i = 1; i < levels; ++i) {
    bomb += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 9; ++k) bomb += std::string(k ? "," : "") + "*" + names[i - 1];
    bomb += "]\n";
  }
  return bomb;
}
long long count_nodes(const ridge::hw::ConfigNode& n) {
  long long c = 1;
  for (const auto& e : n.entries) c += count_nodes(e.second);
  for (const auto& i : n.items) c += count_nodes(i);
  return c;
}
const std::string kTooMany =
    ": (top): more than 200000 YAML nodes with aliases expanded (the limit; an alias bomb?)";
}  // namespace

TEST_CASE("limits: YAML limits are found without expanding aliases, where expanding meets them",
          "[config-errors]") {
  // Node counts (map values and list items, as the tree holds them): a = 1 + 9 = 10, b = 1 + 9a
  // = 91, c = 820, d = 7381, e = 66430, f = 597871; the root map 1. In file order the root, a..e
  // make 74,733; f's list 74,734; its first *e 141,164; the second would pass 200,000, so the
  // count goes into it (e's list 141,165), then 7 of its *d (192,832), into the 8th (192,833),
  // 8 *c (199,393), into the 9th (199,394), 6 *b (199,940), into the 7th (199,941), 5 *a
  // (199,991), into the 6th (199,992): its 9 "lol" are 199,993..200,001. The 200,001st is a's
  // 9th "lol", on line 1 at column 7 + 6 x 8 + 1 = 56.
  CHECK(yaml_error(bomb_levels(9)) == "x.yaml:1:56" + kTooMany);
  // Five levels (up to e): 1 + 10 + 91 + 820 + 7381 + 66430 = 74,733 nodes, all built.
  const auto tree = ridge::hw::parse_yaml(bomb_levels(5), "x.yaml");
  CHECK(count_nodes(tree) == 74733);
  // A duplicate key before the node limit is reached is reported first, one after it is not.
  CHECK(yaml_error("z: 1\nz: 2\n" + bomb_levels(9)) == "x.yaml:2:1: z: duplicate key");
  CHECK(yaml_error(bomb_levels(9) + "a: 1\n") == "x.yaml:1:56" + kTooMany);
  // A duplicate inside an aliased map, at its first expansion: "a: &a {x: 1, " is 13 columns.
  CHECK(yaml_error("a: &a {x: 1, x: 2}\nb: [*a, *a]\n") == "x.yaml:1:14: x: duplicate key");
  // 130 nested lists: the 130th, at column 130, is at depth 129, beyond the 128 levels.
  CHECK(yaml_error(std::string(130, '[') + std::string(130, ']')) ==
        "x.yaml:1:130: (top): nested more than 128 levels deep (the limit)");
  CHECK(yaml_error(std::string(129, '[') + std::string(129, ']')).empty());
  // Exactly at the limit: root 1 + a (1 + 270) + b (1 + 737 x 271) = 2 + 738 x 271 = 200,000
  // nodes are accepted; one more key's value is the 200,001st, refused at "c: 1"'s value.
  std::string exact = "a: &a [";
  for (int k = 0; k < 270; ++k) exact += k ? ",1" : "1";
  exact += "]\nb: [";
  for (int k = 0; k < 737; ++k) exact += k ? ",*a" : "*a";
  exact += "]\n";
  CHECK(yaml_error(exact).empty());
  CHECK(yaml_error(exact + "c: 1\n") == "x.yaml:3:4" + kTooMany);
}
