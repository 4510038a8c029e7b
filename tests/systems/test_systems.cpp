// Systems: every shipped file loads with sources, derived figures by hand, and bad files fail
// with file:line:col messages (and `ridge system show` exits 2 on them).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <string>

#include "hw/system_loader.hpp"
#include "hw/units.hpp"
#include "tests/cli/harness.hpp"

using namespace ridge::hw;

namespace {

const std::string kDir = std::string(RIDGE_TEST_DATA_DIR) + "/systems/";

std::vector<std::string> load_errors(const std::string& name) {
  try {
    load_system_spec(kDir + name);
  } catch (const ConfigException& e) {
    std::vector<std::string> out;
    for (const auto& err : e.errors()) out.push_back(err.str());
    return out;
  }
  return {};
}

bool any_contains(const std::vector<std::string>& v, const std::string& part) {
  for (const auto& s : v)
    if (s.find(part) != std::string::npos) return true;
  return false;
}

int run_status(const std::string& args, std::string* out = nullptr) {
  const ridge::test::Run r = ridge::test::run_ridge(args);
  if (out) *out = r.output;
  return r.status;
}

}  // namespace

TEST_CASE("units: network line rates in bits", "[unit]") {
  // 400 Gb/s = 400e9 bits/s = 50e9 B/s; "GB/s" stays bytes.
  CHECK(parse_quantity("400 Gb/s", Dimension::kBandwidth).value == 50e9);
  CHECK(parse_quantity("200 Gbit/s", Dimension::kBandwidth).value == 25e9);
  CHECK(parse_quantity("400 GB/s", Dimension::kBandwidth).value == 400e9);
  CHECK(!parse_quantity("400 Gb", Dimension::kBandwidth).error.empty());
}

TEST_CASE("every shipped system loads, with a source for every figure", "[unit]") {
  const auto files = list_system_config_files();
  REQUIRE(files.size() >= 7);
  for (const auto& f : files) {
    INFO(f);
    const SystemSpec s = load_system_spec(f);
    CHECK(!s.name.empty());
    CHECK(s.total_gpus() >= 8);
    CHECK(!s.sources.empty());
    for (const auto& [path, src] : s.sources) CHECK(!src.empty());
  }
}

TEST_CASE("derived figures of DGX H100 and the 1024-GPU cluster", "[analytic]") {
  const SystemSpec one = find_system("dgx-h100");
  const SystemFigures f1 = derive_figures(one);
  // 8 GPUs x 450 GB/s NVLink per direction; bisection of a non-blocking switch: 4 x 450 GB/s.
  CHECK(f1.total_gpus == 8);
  CHECK(f1.nvlink_per_gpu == 450e9);
  CHECK(f1.bisection == Approx(1.8e12));
  // 8 NICs of 400 Gb/s = 50 GB/s each, one per GPU.
  CHECK(f1.scale_out_per_gpu == Approx(50e9));
  CHECK(f1.scale_out_per_node == Approx(400e9));

  const SystemSpec big = find_system("h100-1024");
  const SystemFigures f = derive_figures(big);
  CHECK(f.total_gpus == 1024);
  // 64-port leaves, non-blocking: 32 down (nodes), 32 up; 128 nodes -> 4 leaves per rail;
  // 8 rails x 4 leaves x 32 uplinks = 1024 spine ports -> 16 spines of 64 ports.
  CHECK(f.nodes_per_leaf == 32);
  CHECK(f.leaves_per_rail == 4);
  CHECK(f.spines == 16);
  // Bisection: 64 nodes x 400 GB/s of NICs send across the cut, oversubscription 1.
  CHECK(f.bisection == Approx(64 * 400e9));
}

TEST_CASE("GPU counts a system can hold", "[unit]") {
  const SystemSpec s = find_system("h100-1024");
  CHECK(check_gpu_count(s, 8).empty());
  CHECK(check_gpu_count(s, 4).empty());
  CHECK(check_gpu_count(s, 1024).empty());
  CHECK(check_gpu_count(s, 16).empty());
  CHECK(!check_gpu_count(s, 12).empty());    // past one node, whole nodes only
  CHECK(!check_gpu_count(s, 2048).empty());  // more than it has
  CHECK(!check_gpu_count(s, 0).empty());
}

TEST_CASE("config error: a system naming an unknown GPU", "[config-errors]") {
  const auto e = load_errors("unknown-gpu.yaml");
  REQUIRE(e.size() == 1);
  CHECK(e[0].find("unknown-gpu.yaml:4:10: system.node.gpu: unknown GPU 'h300'") !=
        std::string::npos);
  std::string out;
  CHECK(run_status("system show " + kDir + "unknown-gpu.yaml", &out) == 2);
  CHECK(out.find("unknown GPU 'h300'") != std::string::npos);
}

TEST_CASE("config error: more NICs than the PCIe lanes", "[config-errors]") {
  const auto e = load_errors("nic-lanes.yaml");
  REQUIRE(e.size() == 1);
  // 16 NICs x 16 lanes + 8 GPUs x 16 lanes = 384 > 256.
  CHECK(any_contains(e,
                     "nic-lanes.yaml:5:14: system.node.nics.count: 16 NICs x 16 lanes + 8 GPUs "
                     "x 16 lanes = 384 PCIe lanes, but the node has 256"));
}

TEST_CASE("config error: oversubscription below 1 and a misspelt network kind", "[config-errors]") {
  const auto e = load_errors("oversubscribed.yaml");
  REQUIRE(e.size() >= 2);  // every problem at once
  CHECK(any_contains(e,
                     "oversubscribed.yaml:4:23: system.network.oversubscription: value out of "
                     "range"));
  CHECK(any_contains(e,
                     "oversubscribed.yaml:5:11: system.network.kind: unknown value "
                     "'rail_fat_tre' (did you mean 'rail_fat_tree'?)"));
}

TEST_CASE("config error: figures without a source", "[config-errors]") {
  const auto e = load_errors("no-source.yaml");
  CHECK(any_contains(e, "system.node.nvlink.bandwidth: no source for this figure"));
  CHECK(any_contains(e, "system.node.gpus: no source for this figure"));
}

TEST_CASE("ridge collective: bad arguments exit 2, naming what was wrong", "[config-errors]") {
  std::string out;
  CHECK(run_status("collective all_reduce bytes=1GiB --system dgx-h200 --gpus 12", &out) == 2);
  CHECK(out.find("--gpus 12") != std::string::npos);
  CHECK(run_status("collective all_reduce bytes=1GiB --system dgx-h300", &out) == 2);
  CHECK(out.find("did you mean 'dgx-h100'") != std::string::npos);
  CHECK(run_status("collective all_reduce bytes=1XB --system dgx-h200", &out) == 2);
  CHECK(run_status("collective all_gather bytes=1GiB --system dgx-h200 --algo tree", &out) == 2);
  CHECK(out.find("tree runs all-reduce only") != std::string::npos);
  CHECK(run_status("collective all_reduce bytes=1GiB --system dgx-a100 --algo nvls", &out) == 2);
  CHECK(out.find("no NVLink multicast") != std::string::npos);
  CHECK(run_status("collective all_reduce --sweep 8GiB:8B --system dgx-h200", &out) == 2);
}

TEST_CASE("ridge compare reads nccl-tests' text output", "[unit]") {
  std::string out;
  // Two "#  Rank" lines: two ranks; three rows of all_reduce, compared on DGX H200.
  CHECK(run_status("compare " + kDir +
                       "nccl-tests-all_reduce.txt --system dgx-h200 --op "
                       "all_reduce --json",
                   &out) == 0);
  CHECK(out.find("\"series\": \"all_reduce/nccl-tests\"") != std::string::npos);
  CHECK(out.find("\"measured_us\": 38.0") != std::string::npos);
}

TEST_CASE("config error: a malformed nccl-tests output, every bad line at once",
          "[config-errors]") {
  std::string out;
  CHECK(run_status("compare " + kDir + "nccl-tests-bad.txt --system dgx-h200 --op all_reduce",
                   &out) == 2);
  CHECK(out.find("nccl-tests-bad.txt:4:1: size: size '2097152x' is not a byte count") !=
        std::string::npos);
  CHECK(out.find("nccl-tests-bad.txt:5:1: row: expected nccl-tests' columns") != std::string::npos);
  CHECK(out.find("nccl-tests-bad.txt:6:1: time: time '-3.0' is not a positive number of us") !=
        std::string::npos);
  // Without --op the collective is unknown.
  CHECK(run_status("compare " + kDir + "nccl-tests-all_reduce.txt --system dgx-h200", &out) == 2);
  CHECK(out.find("give --op") != std::string::npos);
}

// --ranks picks the group's GPUs. One GPU in each of 8 DGX H100 nodes (0:64:8): NCCL turns NVLS
// off when a node holds fewer than 2 of the group's GPUs (ncclNvlsInit, transport/nvls.cc), so
// neither NVLS nor NVLS-tree may be chosen; every byte crosses the GPU's one NIC, whose 400 Gb/s
// (50 GB/s) line rate bounds the algorithm bandwidth of an all-reduce without in-network
// reduction (ring: each rank sends 2(n-1)/n of the data through it).
TEST_CASE("ridge collective --ranks: one GPU per node rides the NICs, without NVLS", "[unit]") {
  std::string out;
  REQUIRE(run_status("collective all_reduce bytes=1GiB --system h100-1024 --ranks 0:64:8 "
                     "--no-nvls --json",
                     &out) == 0);
  const auto j = nlohmann::json::parse(out);
  CHECK(j["gpus"] == 8);
  CHECK(j["algo"].get<std::string>().find("nvls") == std::string::npos);
  CHECK(j["algbw_gbps"].get<double>() < 50.0 * 8 / (2.0 * 7));
  REQUIRE(run_status("collective all_reduce bytes=1GiB --system h100-1024 --ranks 0:64:8 --algo "
                     "nvls_tree",
                     &out) == 2);
  CHECK(out.find("NVLS needs 2 or more") != std::string::npos);
  CHECK(run_status("collective all_reduce bytes=1GiB --ranks 0,3,3", &out) == 2);
  CHECK(out.find("listed twice") != std::string::npos);
  CHECK(run_status("collective all_reduce bytes=1GiB --ranks 0:9", &out) == 2);
  CHECK(out.find("past the system's 8 GPUs") != std::string::npos);
  CHECK(run_status("collective all_reduce bytes=1GiB --ranks 4:2", &out) == 2);
  CHECK(run_status("collective all_reduce bytes=1GiB --ranks 1,2 --gpus 2", &out) != 0);
}
