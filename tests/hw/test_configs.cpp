// The shipped GPU configs load, carry a source for every figure, and agree with their datasheets'
// own arithmetic (peak rates = SMs x lanes x 2 x clock; overlays change only what they state).
#include <catch2/catch.hpp>

#include "hw/gpu_loader.hpp"

using namespace ridge::hw;

TEST_CASE("every shipped GPU config loads with a source for every figure", "[unit][configs]") {
  const auto files = list_gpu_config_files();
  REQUIRE(files.size() >= 4);
  for (const auto& f : files) {
    INFO(f);
    const GpuSpec g = load_gpu_spec(f);  // throws on any missing source or bad value
    CHECK(g.sources.size() > 40);
    for (const auto& [path, src] : g.sources) CHECK_FALSE(src.empty());
  }
}

TEST_CASE("names and aliases find the shipped GPUs", "[unit][configs]") {
  CHECK(find_gpu("h200").name == "H200-SXM-141GB");
  CHECK(find_gpu("H100").name == "H100-SXM5-80GB");
  CHECK(find_gpu("a100-sxm4-80gb").name == "A100-SXM4-80GB");
  CHECK(find_gpu("b200").name == "B200");
  CHECK_THROWS_AS(find_gpu("h300"), ConfigException);
}

TEST_CASE("datasheet arithmetic: FP32 peak = SMs x lanes x 2 x boost clock",
          "[analytic][configs]") {
  // H100 SXM5: 132 x 128 x 2 x 1.98e9 = 66.9e12 (whitepaper 66.9); A100: 108 x 64 x 2 x 1.41e9 =
  // 19.49e12 (datasheet 19.5). Within 0.5%: the datasheets round.
  for (const char* name : {"h100", "a100", "b200"}) {
    INFO(name);
    const GpuSpec g = find_gpu(name);
    const double derived = g.sm.count * g.sm.fp32_lanes_per_sm * 2.0 * g.clocks.boost_hz;
    CHECK(derived == Approx(g.compute.vector.at(Precision::kFp32)).epsilon(0.005));
  }
}

TEST_CASE("the H200 overlay is the H100 with HBM3e", "[unit][configs]") {
  const GpuSpec h100 = find_gpu("h100"), h200 = find_gpu("h200");
  CHECK(h200.sm.count == h100.sm.count);
  CHECK(h200.compute.tensor_dense == h100.compute.tensor_dense);
  CHECK(h200.memory.hbm_bandwidth == 4.8e12);
  CHECK(h200.memory.hbm_size == 141e9);
  CHECK(h200.files.size() == 2);  // base then overlay
  // Dense is half of sparse for every tensor precision both list.
  for (const auto& [p, v] : h200.compute.tensor_sparse)
    CHECK(h200.compute.tensor_dense.at(p) * 2 == Approx(v).epsilon(1e-3));
}
