// The occupancy calculator against the CUDA occupancy API on the H200: every kernel that
// validate/ridge-bench compiled and asked cudaOccupancyMaxActiveBlocksPerMultiprocessor about
// (validate/data/h200/occupancy.json, and the own kernels in kernels.json) must agree exactly.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include "hw/gpu_loader.hpp"
#include "models/occupancy.hpp"

using namespace ridge;

namespace {
nlohmann::json load(const std::string& name) {
  std::ifstream in(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/" + name);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}
}  // namespace

TEST_CASE("occupancy calculator equals the CUDA occupancy API on every measured kernel",
          "[validation][occupancy]") {
  const hw::GpuSpec g = hw::find_gpu("h200");
  int checked = 0;
  const nlohmann::json file = load("occupancy.json");
  for (const auto& r : file["records"]) {
    if (r["op"] != "occupancy") continue;
    const auto& p = r["params"];
    const int threads = p["threads"], regs = p["registers_per_thread"];
    const double smem = p["shared_bytes"].get<double>();
    const int expected = r["blocks_per_sm"];
    const auto o = models::occupancy(g.sm, {threads, regs, smem});
    INFO(r["id"].get<std::string>()
         << ": threads " << threads << ", registers " << regs << ", shared " << smem);
    CHECK(o.blocks_per_sm == expected);
    ++checked;
  }
  CHECK(checked >= 30);
}
