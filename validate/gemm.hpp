// GEMM through cuBLASLt (every precision) and cuBLAS (fp32 SGEMM), shared by the compute and gemm
// suites. Layout: row-major Y[m,n] = X[m,k] * W[n,k]^T, PyTorch's nn.Linear with m tokens, k input
// and n output features; cuBLAS (column-major) computes it as C[n,m] = op_T(W) op_N(X), the "TN"
// layout that FP8 requires on Hopper. Records say trans_a=false, trans_b=true (row-major terms).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <string>

#include "bench_common.hpp"

namespace ridge::validate {

[[noreturn]] void throw_cublas(const char* expr, cublasStatus_t s, const char* file, int line);

#define RIDGE_CUBLAS(expr)                                                  \
  do {                                                                      \
    cublasStatus_t ridge_s_ = (expr);                                       \
    if (ridge_s_ != CUBLAS_STATUS_SUCCESS)                                  \
      ::ridge::validate::throw_cublas(#expr, ridge_s_, __FILE__, __LINE__); \
  } while (0)

/// One GEMM problem: m tokens, n output features, k input features; `group` names its family.
struct GemmShape {
  std::int64_t m, n, k;
  std::string group;
};

class GemmRunner {
 public:
  /// Reserves an arena of up to `arena_bytes` (less when the device has less free).
  GemmRunner(Context& ctx, std::size_t arena_bytes);
  ~GemmRunner();
  GemmRunner(const GemmRunner&) = delete;
  GemmRunner& operator=(const GemmRunner&) = delete;

  /// Times one GEMM through cuBLASLt with its heuristic's first algorithm; appends a record.
  void run_lt(const GemmShape& s, Dtype d, const std::string& suite, bool fast_accum = false);
  /// fp32 through cublasSgemm with CUBLAS_DEFAULT_MATH (no TF32); appends a record.
  void run_sgemm(const GemmShape& s, const std::string& suite);

 private:
  struct Sets {
    int count;
    std::size_t stride;  // bytes between sets
    std::size_t a_off, b_off, c_off;
  };
  Sets plan(const GemmShape& s, Dtype in, Dtype out) const;
  void fill_inputs(const GemmShape& s, Dtype in, const Sets& sets);
  Json check(const GemmShape& s, Dtype in, Dtype out, double tol);
  unsigned char* arena() const { return static_cast<unsigned char*>(arena_.get()); }

  Context& ctx_;
  DeviceBuffer arena_;
  DeviceBuffer workspace_;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

}  // namespace ridge::validate
