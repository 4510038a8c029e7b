#include "gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "cublaslt_names.hpp"

namespace ridge::validate {

void throw_cublas(const char* expr, cublasStatus_t s, const char* file, int line) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s:%d: %s failed: %s", file, line, expr,
                cublasGetStatusString(s));
  throw BenchError(buf);
}

namespace {

constexpr std::size_t kWorkspace = 64ull << 20;
constexpr std::size_t kAlign = 256;

std::size_t align_up(std::size_t x) {
  return (x + kAlign - 1) / kAlign * kAlign;
}

cudaDataType_t cuda_type(Dtype d) {
  switch (d) {
    case Dtype::kF32:
    case Dtype::kTF32:
      return CUDA_R_32F;
    case Dtype::kF16:
      return CUDA_R_16F;
    case Dtype::kBF16:
      return CUDA_R_16BF;
    case Dtype::kF8E4M3:
      return CUDA_R_8F_E4M3;
    case Dtype::kF8E5M2:
      return CUDA_R_8F_E5M2;
    case Dtype::kF64:
      return CUDA_R_64F;
  }
  return CUDA_R_32F;
}

/// Output type: fp8 GEMMs write bf16 (as PyTorch's scaled_mm usually does), others their input.
Dtype out_type(Dtype in) {
  return in == Dtype::kF8E4M3 || in == Dtype::kF8E5M2 ? Dtype::kBF16 : in;
}

double tolerance(Dtype d) {
  switch (d) {
    case Dtype::kF32:
      return 1e-4;
    case Dtype::kTF32:
      return 5e-3;
    default:
      return 1.5e-2;
  }
}

template <typename T>
T algo_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t a) {
  T v{};
  size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, a, &v, sizeof v, &written) !=
      CUBLAS_STATUS_SUCCESS) {
    return T{};
  }
  return v;
}

Json algo_json(const cublasLtMatmulHeuristicResult_t& r, int returned) {
  Json j = Json::object();
  j["name"] = "cublasLt";
  j["algo_id"] = algo_attr<int32_t>(r.algo, CUBLASLT_ALGO_CONFIG_ID);
  const auto tile = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
  j["tile_id"] = tile;
  j["tile"] = cublaslt_tile_name(tile);
  const auto stages = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  j["stages_id"] = stages;
  j["stages"] = cublaslt_stages_name(stages);
  j["splitk"] = algo_attr<int32_t>(r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  j["reduction_scheme"] = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  j["cta_swizzling"] = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  j["custom_option"] = algo_attr<uint32_t>(r.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  j["inner_shape_id"] = algo_attr<uint16_t>(r.algo, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  const auto cluster = algo_attr<uint16_t>(r.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  j["cluster_shape_id"] = cluster;
  j["cluster_shape"] = cublaslt_cluster_name(cluster);
  j["workspace_bytes"] = static_cast<unsigned long long>(r.workspaceSize);
  j["waves_count"] = r.wavesCount;
  j["heuristic_results"] = returned;
  return j;
}

std::string shape_id(const GemmShape& s) {
  return "m" + std::to_string(s.m) + "_n" + std::to_string(s.n) + "_k" + std::to_string(s.k);
}

}  // namespace

GemmRunner::GemmRunner(Context& ctx, std::size_t arena_bytes) : ctx_(ctx) {
  size_t free_b = 0, total_b = 0;
  RIDGE_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t keep = 4ull << 30;
  arena_bytes = std::min(arena_bytes, free_b > keep ? free_b - keep : free_b / 2);
  arena_ = DeviceBuffer(arena_bytes);
  workspace_ = DeviceBuffer(kWorkspace);
  RIDGE_CUBLAS(cublasLtCreate(&lt_));
  RIDGE_CUBLAS(cublasCreate(&blas_));
  RIDGE_CUBLAS(cublasSetStream(blas_, ctx.stream()));
  RIDGE_CUBLAS(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH));
  RIDGE_CUBLAS(cublasSetWorkspace(blas_, workspace_.get(), kWorkspace));
}

GemmRunner::~GemmRunner() {
  if (lt_) cublasLtDestroy(lt_);
  if (blas_) cublasDestroy(blas_);
}

GemmRunner::Sets GemmRunner::plan(const GemmShape& s, Dtype in, Dtype out) const {
  Sets p{};
  const std::size_t ib = dtype_bytes(in), ob = dtype_bytes(out);
  const std::size_t a = align_up(static_cast<std::size_t>(s.n * s.k) * ib);  // W
  const std::size_t b = align_up(static_cast<std::size_t>(s.m * s.k) * ib);  // X
  const std::size_t c = align_up(static_cast<std::size_t>(s.m * s.n) * ob);  // Y
  p.a_off = 0;
  p.b_off = a;
  p.c_off = a + b;
  p.stride = a + b + c;
  if (p.stride > arena_.bytes()) {
    throw BenchError("GEMM " + shape_id(s) + " needs " + std::to_string(p.stride) +
                     " bytes, arena has " + std::to_string(arena_.bytes()));
  }
  const int fit = static_cast<int>(arena_.bytes() / p.stride);
  p.count = std::min(rotation_sets(p.stride, ctx_.l2_bytes(), 64), fit);
  return p;
}

void GemmRunner::fill_inputs(const GemmShape& s, Dtype in, const Sets& sets) {
  for (int i = 0; i < sets.count; ++i) {
    unsigned char* base = arena() + static_cast<std::size_t>(i) * sets.stride;
    fill_uniform(base + sets.a_off, static_cast<std::size_t>(s.n * s.k), in, 100 + 2 * i, -1.f, 1.f,
                 ctx_.stream());
    fill_uniform(base + sets.b_off, static_cast<std::size_t>(s.m * s.k), in, 101 + 2 * i, -1.f, 1.f,
                 ctx_.stream());
  }
  RIDGE_CUDA(cudaStreamSynchronize(ctx_.stream()));
}

Json GemmRunner::check(const GemmShape& s, Dtype in, Dtype out, double tol) {
  // 16 sampled outputs of set 0 against a float64 dot product of the same stored inputs.
  const Sets p = plan(s, in, out);
  const std::size_t ib = dtype_bytes(in), ob = dtype_bytes(out);
  std::vector<double> got, ref;
  for (int t = 0; t < 16; ++t) {
    const std::int64_t i = (t * 7919 + 13) % s.m;    // token (row of Y)
    const std::int64_t j = (t * 104729 + 31) % s.n;  // output feature
    auto x = to_host_double(arena() + p.b_off + static_cast<std::size_t>(i * s.k) * ib,
                            static_cast<std::size_t>(s.k), in);
    auto w = to_host_double(arena() + p.a_off + static_cast<std::size_t>(j * s.k) * ib,
                            static_cast<std::size_t>(s.k), in);
    double acc = 0;
    for (std::int64_t l = 0; l < s.k; ++l) acc += x[l] * w[l];
    auto y = to_host_double(arena() + p.c_off + static_cast<std::size_t>(j + i * s.n) * ob, 1, out);
    got.push_back(y[0]);
    ref.push_back(acc);
  }
  return check_json(max_rel_err(got, ref), tol, "float64 dot products of 16 sampled outputs");
}

void GemmRunner::run_lt(const GemmShape& s, Dtype d, const std::string& suite, bool fast_accum) {
  const Dtype in = d == Dtype::kTF32 ? Dtype::kF32 : d;
  const Dtype out = out_type(in);
  const bool fp8 = in == Dtype::kF8E4M3 || in == Dtype::kF8E5M2;
  std::string id = (suite == "gemm" ? "" : suite + "/") + "gemm/" + dtype_name(d) + "/" +
                   shape_id(s) + (fast_accum ? "/fast_accum" : "");
  ctx_.run_case(id, [&] {
    const Sets sets = plan(s, in, out);
    fill_inputs(s, in, sets);
    const cublasComputeType_t compute =
        d == Dtype::kTF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    auto cleanup = [&] {
      if (pref) cublasLtMatmulPreferenceDestroy(pref);
      if (lc) cublasLtMatrixLayoutDestroy(lc);
      if (lb) cublasLtMatrixLayoutDestroy(lb);
      if (la) cublasLtMatrixLayoutDestroy(la);
      if (op) cublasLtMatmulDescDestroy(op);
    };
    try {
      RIDGE_CUBLAS(cublasLtMatmulDescCreate(&op, compute, CUDA_R_32F));
      const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
      RIDGE_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
      RIDGE_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
      if (fp8) {
        const int8_t fast = fast_accum ? 1 : 0;
        RIDGE_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
                                                    sizeof fast));
      }
      // Column-major: A = W stored k x n (op T), B = X stored k x m (op N), C = Y^T n x m.
      RIDGE_CUBLAS(cublasLtMatrixLayoutCreate(&la, cuda_type(in), s.k, s.n, s.k));
      RIDGE_CUBLAS(cublasLtMatrixLayoutCreate(&lb, cuda_type(in), s.k, s.m, s.k));
      RIDGE_CUBLAS(cublasLtMatrixLayoutCreate(&lc, cuda_type(out), s.n, s.m, s.n));
      RIDGE_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
      const std::size_t ws = kWorkspace;
      RIDGE_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
          pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
      cublasLtMatmulHeuristicResult_t res{};
      int returned = 0;
      RIDGE_CUBLAS(
          cublasLtMatmulAlgoGetHeuristic(lt_, op, la, lb, lc, lc, pref, 1, &res, &returned));
      if (returned < 1) throw BenchError("cuBLASLt heuristic returned no algorithm");
      const float alpha = 1.0f, beta = 0.0f;
      auto call = [&](int rep) {
        unsigned char* base = arena() + static_cast<std::size_t>(rep % sets.count) * sets.stride;
        RIDGE_CUBLAS(cublasLtMatmul(lt_, op, &alpha, base + sets.a_off, la, base + sets.b_off, lb,
                                    &beta, base + sets.c_off, lc, base + sets.c_off, lc, &res.algo,
                                    workspace_.get(), kWorkspace, ctx_.stream()));
      };
      // Correctness on set 0 first, from a poisoned output.
      poison(arena() + sets.c_off, static_cast<std::size_t>(s.m * s.n) * dtype_bytes(out),
             ctx_.stream());
      call(0);
      RIDGE_CUDA(cudaStreamSynchronize(ctx_.stream()));
      Json chk = check(s, in, out, tolerance(d));
      TimeOpts o;
      o.min_reps = 3;
      Timing t = ctx_.time_kernel(call, o);
      Json p = Json::object();
      p["m"] = s.m;
      p["n"] = s.n;
      p["k"] = s.k;
      p["dtype"] = dtype_name(d);
      p["batch"] = 1;
      p["trans_a"] = false;
      p["trans_b"] = true;
      p["out_dtype"] = dtype_name(out);
      p["group"] = s.group;
      if (fp8) p["fast_accum"] = fast_accum;
      Json rec = make_record(id, suite, "gemm", p);
      rec["timing"] = t.to_json();
      const double bytes = static_cast<double>(s.m * s.k + s.n * s.k) * dtype_bytes(in) +
                           static_cast<double>(s.m * s.n) * dtype_bytes(out);
      const double flops = 2.0 * s.m * s.n * s.k;
      rec["bytes"] = bytes;
      rec["flops"] = flops;
      rec["tflops"] = flops / (t.median_us * 1e-6) / 1e12;
      rec["buffers"] = sets.count;
      rec["library"] = algo_json(res, returned);
      rec["check"] = chk;
      std::fprintf(stderr, "  %-48s %10.1f us %8.1f TFLOP/s err %.2g\n", id.c_str(), t.median_us,
                   flops / (t.median_us * 1e-6) / 1e12, chk["max_rel_err"].number());
      ctx_.add(std::move(rec));
    } catch (...) {
      cleanup();
      throw;
    }
    cleanup();
  });
}

void GemmRunner::run_sgemm(const GemmShape& s, const std::string& suite) {
  std::string id = suite + "/sgemm/fp32/" + shape_id(s);
  ctx_.run_case(id, [&] {
    const Sets sets = plan(s, Dtype::kF32, Dtype::kF32);
    fill_inputs(s, Dtype::kF32, sets);
    const float alpha = 1.0f, beta = 0.0f;
    auto call = [&](int rep) {
      unsigned char* base = arena() + static_cast<std::size_t>(rep % sets.count) * sets.stride;
      RIDGE_CUBLAS(cublasSgemm(
          blas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(s.n), static_cast<int>(s.m),
          static_cast<int>(s.k), &alpha, reinterpret_cast<float*>(base + sets.a_off),
          static_cast<int>(s.k), reinterpret_cast<float*>(base + sets.b_off), static_cast<int>(s.k),
          &beta, reinterpret_cast<float*>(base + sets.c_off), static_cast<int>(s.n)));
    };
    poison(arena() + sets.c_off, static_cast<std::size_t>(s.m * s.n) * 4, ctx_.stream());
    call(0);
    RIDGE_CUDA(cudaStreamSynchronize(ctx_.stream()));
    Json chk = check(s, Dtype::kF32, Dtype::kF32, tolerance(Dtype::kF32));
    TimeOpts o;
    o.min_reps = 3;
    Timing t = ctx_.time_kernel(call, o);
    Json p = Json::object();
    p["m"] = s.m;
    p["n"] = s.n;
    p["k"] = s.k;
    p["dtype"] = "fp32";
    p["batch"] = 1;
    p["trans_a"] = false;
    p["trans_b"] = true;
    p["group"] = s.group;
    p["math"] = "CUBLAS_DEFAULT_MATH";
    Json rec = make_record(id, suite, "gemm", p);
    rec["timing"] = t.to_json();
    const double flops = 2.0 * s.m * s.n * s.k;
    rec["bytes"] = static_cast<double>(s.m * s.k + s.n * s.k + s.m * s.n) * 4.0;
    rec["flops"] = flops;
    rec["tflops"] = flops / (t.median_us * 1e-6) / 1e12;
    rec["buffers"] = sets.count;
    Json lib = Json::object();
    lib["name"] = "cublasSgemm";
    rec["library"] = lib;
    rec["check"] = chk;
    std::fprintf(stderr, "  %-48s %10.1f us %8.1f TFLOP/s err %.2g\n", id.c_str(), t.median_us,
                 flops / (t.median_us * 1e-6) / 1e12, chk["max_rel_err"].number());
    ctx_.add(std::move(rec));
  });
}

}  // namespace ridge::validate
