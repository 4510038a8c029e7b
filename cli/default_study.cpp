// `ridge` with no arguments: the README's default study.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "models/op_cost.hpp"
#include "models/roofline.hpp"

namespace ridge::cli {

// Question: is one decode step of Llama-3 8B on an H200 bound by memory or compute, and from what
// batch size on do its GEMMs reach the compute roof? (Shapes: d_model 4096, 32 query heads and
// 8 KV heads of 128, FFN 14336, vocabulary 128256; Meta's Llama 3 model card.)
int run_default_study() {
  const hw::GpuSpec g = hw::find_gpu("h200");
  struct Shape { const char* name; long long n, k; };
  const Shape shapes[] = {{"qkv projection", 6144, 4096}, {"attention output", 4096, 4096},
                          {"MLP gate+up", 28672, 4096},   {"MLP down", 4096, 14336},
                          {"LM head", 128256, 4096}};
  std::string text = fmt::format(
      "Llama-3 8B decode on {}: roofline of the per-layer GEMMs against batch size (bf16)\n", g.name);
  Table t({"GEMM", "batch", "FLOP/B", "attainable", "time at roof", "bound"});
  nlohmann::json rows = nlohmann::json::array();
  for (const Shape& s : shapes) {
    for (long long m : {1LL, 16LL, 64LL, 256LL, 1024LL}) {
      const auto op = models::OpSpec::parse("gemm", {fmt::format("m={}", m), fmt::format("n={}", s.n),
                                                     fmt::format("k={}", s.k), "dtype=bf16"});
      const auto r = models::roofline(g, models::op_cost(op));
      t.row({s.name, fmt::format("{}", m), fmt::format("{:.1f}", r.intensity), fmt_rate(r.attainable_flops),
             fmt_time(r.time_s), r.compute_bound ? "compute" : "memory"});
      rows.push_back({{"gemm", s.name}, {"m", m}, {"n", s.n}, {"k", s.k}, {"intensity", r.intensity},
                      {"attainable_flops_per_s", r.attainable_flops}, {"time_s", r.time_s},
                      {"bound", r.compute_bound ? "compute" : "memory"}});
    }
  }
  text += t.str();
  text += fmt::format("\nridge point (bf16 tensor / HBM): {:.0f} FLOP/B; a GEMM with m tokens has about m FLOP/B,\n"
                      "so decode is memory-bound below a batch of about {:.0f}.\n",
                      g.matmul_peak(hw::Precision::kBf16) / g.memory.hbm_bandwidth,
                      g.matmul_peak(hw::Precision::kBf16) / g.memory.hbm_bandwidth);
  text += "\n" + provenance_text(g.files);
  emit(false, text, rows);
  return 0;
}

}  // namespace ridge::cli
