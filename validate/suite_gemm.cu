// Suite "gemm": cuBLASLt GEMMs over square, skinny and LLM-layer shapes in fp32, tf32, fp16, bf16
// and fp8_e4m3, each with the heuristic's first algorithm (recorded).
#include <algorithm>
#include <vector>

#include "gemm.hpp"
#include "suites.hpp"

namespace ridge::validate {
namespace {

std::vector<GemmShape> gemm_shapes(bool quick) {
  std::vector<GemmShape> v;
  if (quick) {
    return {{4096, 4096, 4096, "square"},
            {16, 4096, 4096, "skinny"},
            {4096, 14336, 4096, "llama3-8b-gate-up"}};
  }
  for (std::int64_t s : {256, 512, 1024, 2048, 4096, 8192, 16384}) v.push_back({s, s, s, "square"});
  for (std::int64_t nk : {4096, 8192}) {
    for (std::int64_t m : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}) {
      v.push_back({m, nk, nk, "skinny"});
    }
  }
  // Llama-3 8B layers: (n output, k input) per layer; m = tokens.
  const struct {
    std::int64_t n, k;
    const char* group;
  } llama[] = {{6144, 4096, "llama3-8b-qkv"},
               {4096, 4096, "llama3-8b-o"},
               {14336, 4096, "llama3-8b-gate-up"},
               {4096, 14336, "llama3-8b-down"},
               {128256, 4096, "llama3-8b-lm-head"}};
  for (const auto& l : llama) {
    for (std::int64_t m : {1, 16, 512, 4096, 8192}) v.push_back({m, l.n, l.k, l.group});
  }
  // GPT-3 175B: qkv 12288->36864, fc1 12288->49152, fc2 49152->12288.
  const struct {
    std::int64_t n, k;
    const char* group;
  } gpt3[] = {{36864, 12288, "gpt3-175b-qkv"},
              {49152, 12288, "gpt3-175b-fc1"},
              {12288, 49152, "gpt3-175b-fc2"}};
  for (const auto& l : gpt3) {
    for (std::int64_t m : {2048, 4096}) v.push_back({m, l.n, l.k, l.group});
  }
  // A shape that two families share (Llama's o projection at m=4096 is the 4096^3 square) is
  // measured once, with both group names.
  std::vector<GemmShape> unique;
  for (const auto& s : v) {
    auto it = std::find_if(unique.begin(), unique.end(), [&](const GemmShape& u) {
      return u.m == s.m && u.n == s.n && u.k == s.k;
    });
    if (it == unique.end()) {
      unique.push_back(s);
    } else {
      it->group += "," + s.group;
    }
  }
  return unique;
}

}  // namespace

void suite_gemm(Context& ctx) {
  GemmRunner runner(ctx, ctx.quick() ? (2ull << 30) : (8ull << 30));
  const auto shapes = gemm_shapes(ctx.quick());
  for (Dtype d : {Dtype::kBF16, Dtype::kF16, Dtype::kF8E4M3, Dtype::kTF32, Dtype::kF32}) {
    for (const auto& s : shapes) runner.run_lt(s, d, "gemm");
  }
}

}  // namespace ridge::validate
