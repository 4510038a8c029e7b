// One bad config per error kind: the loader's message (file:line:col: key.path: message), and the
// `ridge` command's exit code (2) and stderr for the same file. Every error is reported at once.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <array>
#include <cstdio>
#include <string>

#include "hw/gpu_loader.hpp"

using namespace ridge::hw;

namespace {

const std::string kDir = std::string(RIDGE_TEST_DATA_DIR) + "/config-errors/";

std::vector<std::string> load_errors(const std::string& name) {
  try {
    load_gpu_spec(kDir + name);
  } catch (const ConfigException& e) {
    std::vector<std::string> out;
    for (const auto& err : e.errors()) out.push_back(err.str());
    return out;
  }
  return {};
}

struct Run {
  int status;
  std::string output;
};

Run run_ridge(const std::string& args) {
  const std::string cmd = std::string(RIDGE_BIN) + " " + args + " 2>&1";
  Run r{-1, {}};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.output += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("config error: unknown key, with did-you-mean", "[config-errors]") {
  const auto e = load_errors("unknown_key.yaml");
  REQUIRE(e.size() == 1);
  CHECK(e[0] ==
        kDir + "unknown_key.yaml:4:5: gpu.memory.l2_sise: unknown key (did you mean 'l2_size'?)");
  const Run r = run_ridge("hw show " + kDir + "unknown_key.yaml");
  CHECK(r.status == 2);
  CHECK(contains(
      r.output, "unknown_key.yaml:4:5: gpu.memory.l2_sise: unknown key (did you mean 'l2_size'?)"));
}

TEST_CASE("config error: missing keys, all listed", "[config-errors]") {
  const auto e = load_errors("missing_key.yaml");
  REQUIRE(e.size() == 5);
  CHECK(contains(e[0], "missing_key.yaml:2:3: gpu.sm: missing required key"));
  CHECK(contains(e[4], "gpu.interconnect: missing required key"));
  CHECK(run_ridge("hw show " + kDir + "missing_key.yaml").status == 2);
}

TEST_CASE("config error: wrong type", "[config-errors]") {
  const auto e = load_errors("wrong_type.yaml");
  REQUIRE(e.size() == 1);
  CHECK(contains(
      e[0], "wrong_type.yaml:4:12: gpu.sm.count: wrong type: expected an integer, got 'many'"));
  CHECK(run_ridge("hw show " + kDir + "wrong_type.yaml").status == 2);
}

TEST_CASE("config error: value without a unit", "[config-errors]") {
  const auto e = load_errors("no_unit.yaml");
  REQUIRE(e.size() == 1);
  CHECK(contains(e[0], "gpu.memory.hbm_bandwidth: value without a unit"));
  CHECK(run_ridge("hw show " + kDir + "no_unit.yaml").status == 2);
}

TEST_CASE("config error: unit of the wrong kind", "[config-errors]") {
  const auto e = load_errors("wrong_unit_kind.yaml");
  REQUIRE(e.size() == 1);
  CHECK(contains(e[0], "gpu.memory.l2_size: unknown unit 'GHz'"));
}

TEST_CASE("config error: value out of range", "[config-errors]") {
  const auto e = load_errors("out_of_range.yaml");
  REQUIRE(e.size() == 1);
  CHECK(contains(e[0], "gpu.sm.max_blocks_per_sm: value out of range: 0 is not in [1, 256]"));
  CHECK(run_ridge("hw show " + kDir + "out_of_range.yaml").status == 2);
}

TEST_CASE("config error: YAML syntax", "[config-errors]") {
  const auto e = load_errors("yaml_syntax.yaml");
  REQUIRE(e.size() == 1);
  CHECK(contains(e[0], "yaml_syntax.yaml:3:6:"));
  CHECK(contains(e[0], "YAML syntax"));
  CHECK(run_ridge("hw show " + kDir + "yaml_syntax.yaml").status == 2);
}

TEST_CASE("config error: several problems reported at once, in file order", "[config-errors]") {
  const auto e = load_errors("multiple.yaml");
  REQUIRE(e.size() == 3);
  CHECK(contains(e[0], ":4:12: gpu.clocks.boost: value without a unit"));
  CHECK(contains(e[1], ":6:23: gpu.memory.hbm_size: unknown unit 'GB/s'"));
  CHECK(contains(e[2], ":7:3: gpu.interconect: unknown key (did you mean 'interconnect'?)"));
  const Run r = run_ridge("hw show " + kDir + "multiple.yaml --json");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "3 problem(s)"));
  CHECK_FALSE(contains(r.output, "\"gpu\""));  // nothing printed as a result
}

TEST_CASE("config error: unreadable base file", "[config-errors]") {
  const auto e = load_errors("bad_base.yaml");
  REQUIRE(e.size() == 1);
  CHECK(contains(e[0], "bad_base.yaml:1:7: base: cannot read base file"));
}

TEST_CASE("config error: a figure without a source", "[config-errors]") {
  const auto e = load_errors("no_source.yaml");
  REQUIRE(e.size() == 1);
  CHECK(contains(e[0], "gpu.memory.hbm_bandwidth: no source for this figure"));
}

TEST_CASE("CLI errors: unknown GPU and bad op parameters exit 2", "[config-errors]") {
  CHECK(run_ridge("hw show h300").status == 2);
  const Run r = run_ridge("roofline gemm m=8 n=8 --gpu h200");
  CHECK(r.status == 2);
  CHECK(contains(r.output, "gemm: k: missing required parameter"));
}
