// The prediction's `detail` on request (models::Detail) and the tile search's per-GPU tables
// (models/op_library.cpp tile_occupancy): neither may change a predicted figure.
#include <catch2/catch.hpp>

#include <cstring>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op_library.hpp"

using namespace ridge;

namespace {

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

void check_same(const models::KernelPrediction& a, const models::KernelPrediction& b) {
  CHECK(same_bits(a.time_s, b.time_s));
  CHECK(same_bits(a.kernel_time_s, b.kernel_time_s));
  CHECK(same_bits(a.per_call_time_s, b.per_call_time_s));
  CHECK(a.kernels == b.kernels);
  CHECK(a.bound == b.bound);
  CHECK(same_bits(a.flops, b.flops));
  CHECK(same_bits(a.hbm_bytes, b.hbm_bytes));
  CHECK(same_bits(a.l2_bytes, b.l2_bytes));
  CHECK(same_bits(a.achieved_flops_per_s, b.achieved_flops_per_s));
  CHECK(same_bits(a.achieved_bytes_per_s, b.achieved_bytes_per_s));
  CHECK(same_bits(a.roof_fraction, b.roof_fraction));
  CHECK(a.roof == b.roof);
  CHECK(a.grid == b.grid);
  CHECK(a.block == b.block);
  CHECK(a.waves == b.waves);
  CHECK(a.occupancy.blocks_per_sm == b.occupancy.blocks_per_sm);
  CHECK(a.occupancy.warps_per_sm == b.occupancy.warps_per_sm);
  CHECK(a.kernel_name == b.kernel_name);
}

struct MemoOff {
  MemoOff() { models::set_kernel_memo(false); }
  ~MemoOff() { models::set_kernel_memo(true); }
};

}  // namespace

TEST_CASE("a prediction without detail has every other figure of the one with it", "[unit]") {
  MemoOff off;
  const std::vector<std::pair<std::string, std::vector<std::string>>> ops = {
      {"gemm", {"m=8192", "n=8192", "k=8192"}},
      {"gemm", {"m=256", "n=256", "k=65536"}},  // split-K: two kernels
      {"gemm", {"m=4096", "n=4096", "k=4096", "dtype=fp32"}},
      {"gemm", {"m=1", "n=4096", "k=4096", "dtype=fp32"}},  // gemv
      {"gemm", {"m=16", "n=8192", "k=8192", "dtype=fp8_e4m3"}},
      {"conv2d", {"batch=32", "h=56", "w=56", "c_in=64", "c_out=64", "r=3", "s=3"}},
      {"elementwise", {"op=add", "n=100000000"}},
      {"attention", {"heads=32", "seq_q=4096", "causal=true"}},
      {"copy", {"bytes=1000000000", "direction=h2d"}},
      {"torch_softmax", {"rows=4096", "cols=4096", "dtype=bf16"}},
  };
  for (const char* gpu_name : {"h200", "a100"}) {
    const hw::GpuSpec g = hw::find_gpu(gpu_name);
    for (const auto& [kind, params] : ops) {
      const auto op = models::OpSpec::parse(kind, params);
      for (auto timing : {models::Timing::kKernel, models::Timing::kPerCall}) {
        INFO(gpu_name << " " << op.str() << " " << models::timing_name(timing));
        const auto with =
            models::predict_kernel(g, op, models::Mode::kFast, timing, models::Detail::kBuild);
        const auto without =
            models::predict_kernel(g, op, models::Mode::kFast, timing, models::Detail::kSkip);
        check_same(with, without);
        CHECK(with.detail.is_object());
        CHECK(without.detail.is_null());
      }
    }
  }
  // Detailed mode too (a small GEMM: a few hundred blocks on the engine).
  const hw::GpuSpec g = hw::find_gpu("h200");
  const auto op = models::OpSpec::parse("gemm", {"m=512", "n=512", "k=512"});
  check_same(models::predict_kernel(g, op, models::Mode::kDetailed, models::Timing::kKernel,
                                    models::Detail::kBuild),
             models::predict_kernel(g, op, models::Mode::kDetailed, models::Timing::kKernel,
                                    models::Detail::kSkip));
}

TEST_CASE("the memo keeps predictions with and without detail apart", "[unit]") {
  models::clear_kernel_memo();
  const hw::GpuSpec g = hw::find_gpu("h200");
  const auto op = models::OpSpec::parse("gemm", {"m=3072", "n=1024", "k=4096"});
  const auto without = models::predict_kernel(g, op, models::Mode::kFast, models::Timing::kKernel,
                                              models::Detail::kSkip);
  const auto with = models::predict_kernel(g, op);  // after the detail-less entry: still has it
  CHECK(without.detail.is_null());
  REQUIRE(with.detail.is_object());
  CHECK(with.detail.contains("tile_m"));
  const auto again = models::predict_kernel(g, op, models::Mode::kFast, models::Timing::kKernel,
                                            models::Detail::kSkip);
  CHECK(again.detail.is_null());
  check_same(with, again);
}

TEST_CASE("the tile search's per-GPU table follows the SM it is asked about", "[unit]") {
  MemoOff off;
  const hw::GpuSpec h200 = hw::find_gpu("h200");
  // Same name, an SM whose blocks may use at most 48 KiB of shared memory: a bf16 tile of
  // stages x (m + n) x 64 (k step) x 2 B fits only for 4 x (16 + 64) x 128 = 40960 B (16x64 and
  // 64x16); every other tensor tile needs >= 4 x 128 x 128 = 65536 B. A table cached for the H200
  // (keyed by name alone) would pick a large tile.
  hw::GpuSpec small = h200;
  small.sm.max_shared_memory_per_block = 48 * 1024;
  const auto op = models::OpSpec::parse("gemm", {"m=8192", "n=8192", "k=8192"});
  const auto first = models::predict_kernel(h200, op);
  const auto narrow = models::predict_kernel(small, op);
  const auto tm = narrow.detail.at("tile_m").get<int>(), tn = narrow.detail.at("tile_n").get<int>();
  CHECK(((tm == 16 && tn == 64) || (tm == 64 && tn == 16)));
  CHECK(first.detail.at("tile_m").get<int>() * first.detail.at("tile_n").get<int>() > 16 * 64);
  // And back: the H200's answer unchanged.
  check_same(first, models::predict_kernel(h200, op));
  CHECK(first.detail == models::predict_kernel(h200, op).detail);
}

TEST_CASE("the pruned GEMM tile search picks what timing every candidate picks", "[property]") {
  // The search skips candidates whose floor (compute per wave, L2 bytes over the L2 bandwidth)
  // exceeds the best time so far; a floor that ever rose above its estimate (say after a change
  // of estimate_kernel) would pick another tile here.
  MemoOff off;
  struct PruningOff {
    PruningOff() { models::set_gemm_search_pruning(false); }
    ~PruningOff() { models::set_gemm_search_pruning(true); }
  };
  int compared = 0;
  for (const char* gpu_name : {"h200", "a100", "b200"}) {
    const hw::GpuSpec g = hw::find_gpu(gpu_name);
    std::vector<models::OpSpec> ops;
    for (const char* dt : {"bf16", "fp32", "fp8_e4m3"})
      for (int m : {1, 16, 100, 1024, 4096, 12288})
        for (int n : {16, 1000, 4096, 12288})
          for (int k : {64, 1000, 4096, 65536}) {
            if (std::string(dt) == "fp8_e4m3" && g.name.find("A100") != std::string::npos)
              continue;  // no fp8 tensor cores
            ops.push_back(models::OpSpec::parse(
                "gemm", {"m=" + std::to_string(m), "n=" + std::to_string(n),
                         "k=" + std::to_string(k), std::string("dtype=") + dt}));
          }
    ops.push_back(
        models::OpSpec::parse("gemm", {"m=4096", "n=4096", "k=4096", "batch=8", "dtype=bf16"}));
    ops.push_back(models::OpSpec::parse(
        "conv2d", {"batch=32", "h=56", "w=56", "c_in=64", "c_out=64", "r=3", "s=3"}));
    for (const auto& op : ops) {
      INFO(gpu_name << " " << op.str());
      const auto pruned = models::predict_kernel(g, op);
      models::KernelPrediction full;
      {
        PruningOff all;
        full = models::predict_kernel(g, op);
      }
      check_same(pruned, full);
      CHECK(pruned.detail == full.detail);
      ++compared;
    }
  }
  // 96 shapes x 3 dtypes + 2 on the H200 and the B200, x 2 dtypes (no fp8) + 2 on the A100.
  CHECK(compared == 2 * (96 * 3 + 2) + (96 * 2 + 2));
}
