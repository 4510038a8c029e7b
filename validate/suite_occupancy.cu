// Suite "occupancy": resident blocks per SM over threads per block, registers per thread (kernels
// compiled under different __maxnreg__ caps with enough live values to use them) and static plus
// dynamic shared memory, so that each limiter (warps, registers, shared memory, blocks per SM)
// binds somewhere. Each record has the occupancy API's answer and a measured one: a grid of
// spinning blocks records (SM, start, end) and the largest overlap on any SM is counted.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "suites.hpp"

namespace ridge::validate {
namespace {

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ unsigned sm_id() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

struct Residency {
  unsigned long long* start;
  unsigned long long* end;
  unsigned* sm;
};

__device__ __forceinline__ void spin_and_record(const Residency& r, unsigned long long ns) {
  if (threadIdx.x == 0) {
    const unsigned long long t0 = global_ns();
    while (global_ns() - t0 < ns) {
    }
    r.start[blockIdx.x] = t0;
    r.end[blockIdx.x] = global_ns();
    r.sm[blockIdx.x] = sm_id();
  }
  __syncthreads();
}

// P live accumulators in a ring of dependent FMAs; __maxnreg__(R) caps the allocation.
template <int R, int P>
__global__ void __maxnreg__(R)
    occ_reg_kernel(float* out, int iters, unsigned long long ns, Residency r) {
  if (iters > 0) {
    float acc[P];
#pragma unroll
    for (int j = 0; j < P; ++j) acc[j] = out[threadIdx.x + j];
    for (int it = 0; it < iters; ++it) {
#pragma unroll
      for (int j = 0; j < P; ++j) acc[j] = fmaf(acc[j], 1.0001f, acc[(j + 1) % P]);
    }
    float s = 0;
#pragma unroll
    for (int j = 0; j < P; ++j) s += acc[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  }
  spin_and_record(r, ns);
}

template <int S>
__global__ void occ_static_kernel(float* out, int iters, unsigned long long ns, Residency r) {
  __shared__ float buf[S / 4];
  buf[threadIdx.x % (S / 4)] = static_cast<float>(threadIdx.x);
  __syncthreads();
  if (iters > 0) out[blockIdx.x * blockDim.x + threadIdx.x] = buf[(threadIdx.x * 7) % (S / 4)];
  spin_and_record(r, ns);
}

using OccFn = void (*)(float*, int, unsigned long long, Residency);

struct OccKernel {
  const char* name;
  OccFn fn;
  int cap;  // __maxnreg__ value, 0 if none
};

const std::vector<OccKernel>& reg_kernels() {
  static const std::vector<OccKernel> k = {
      {"occ_reg<32>", occ_reg_kernel<32, 24>, 32},
      {"occ_reg<40>", occ_reg_kernel<40, 32>, 40},
      {"occ_reg<48>", occ_reg_kernel<48, 40>, 48},
      {"occ_reg<64>", occ_reg_kernel<64, 56>, 64},
      {"occ_reg<72>", occ_reg_kernel<72, 64>, 72},
      {"occ_reg<80>", occ_reg_kernel<80, 72>, 80},
      {"occ_reg<96>", occ_reg_kernel<96, 88>, 96},
      {"occ_reg<128>", occ_reg_kernel<128, 120>, 128},
      {"occ_reg<168>", occ_reg_kernel<168, 160>, 168},
      {"occ_reg<200>", occ_reg_kernel<200, 192>, 200},
      {"occ_reg<255>", occ_reg_kernel<255, 240>, 255},
  };
  return k;
}

const std::vector<OccKernel>& static_kernels() {
  static const std::vector<OccKernel> k = {
      {"occ_static<4096>", occ_static_kernel<4096>, 0},
      {"occ_static<12288>", occ_static_kernel<12288>, 0},
      {"occ_static<20480>", occ_static_kernel<20480>, 0},
      {"occ_static<40960>", occ_static_kernel<40960>, 0},
      {"occ_static<49152>", occ_static_kernel<49152>, 0},
  };
  return k;
}

struct Scratch {
  DeviceBuffer out, start, end, sm;
  std::size_t max_blocks;
};

int measure(Context& ctx, const OccKernel& k, int threads, std::size_t dyn, int api_blocks,
            Scratch& s) {
  const int sms = ctx.prop().multiProcessorCount;
  const std::size_t grid =
      std::min<std::size_t>(static_cast<std::size_t>(sms) * (api_blocks + 1), s.max_blocks);
  Residency r{s.start.as<unsigned long long>(), s.end.as<unsigned long long>(),
              s.sm.as<unsigned>()};
  float* out = s.out.as<float>();
  int iters = 0;
  unsigned long long ns = 30000;
  void* args[] = {&out, &iters, &ns, &r};
  RIDGE_CUDA(cudaLaunchKernel((const void*)k.fn, dim3(static_cast<unsigned>(grid)), dim3(threads),
                              args, dyn, ctx.stream()));
  RIDGE_CUDA(cudaStreamSynchronize(ctx.stream()));
  std::vector<unsigned long long> st(grid), en(grid);
  std::vector<unsigned> sm(grid);
  RIDGE_CUDA(cudaMemcpy(st.data(), r.start, grid * 8, cudaMemcpyDeviceToHost));
  RIDGE_CUDA(cudaMemcpy(en.data(), r.end, grid * 8, cudaMemcpyDeviceToHost));
  RIDGE_CUDA(cudaMemcpy(sm.data(), r.sm, grid * 4, cudaMemcpyDeviceToHost));
  std::vector<std::vector<std::pair<unsigned long long, int>>> ev(1024);
  for (std::size_t b = 0; b < grid; ++b) {
    if (sm[b] >= ev.size()) continue;
    ev[sm[b]].push_back({st[b], +1});
    ev[sm[b]].push_back({en[b], -1});
  }
  int best = 0;
  for (auto& e : ev) {
    // At equal times an end comes before a start: a block leaving makes room for the next.
    std::sort(e.begin(), e.end());
    int cur = 0;
    for (auto& [t, d] : e) {
      cur += d;
      best = std::max(best, cur);
    }
  }
  return best;
}

void occ_case(Context& ctx, const OccKernel& k, int threads, std::size_t dyn, Scratch& s) {
  const std::string id = std::string("occupancy/") + k.name + "/t" + std::to_string(threads) +
                         "/dyn" + std::to_string(dyn);
  ctx.run_case(id, [&] {
    cudaFuncAttributes a{};
    RIDGE_CUDA(cudaFuncGetAttributes(&a, (const void*)k.fn));
    int blocks = 0;
    bool launchable = threads <= a.maxThreadsPerBlock &&
                      dyn + a.sharedSizeBytes <= ctx.prop().sharedMemPerBlockOptin;
    if (launchable) {
      cudaError_t e =
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, (const void*)k.fn, threads, dyn);
      if (e != cudaSuccess) {
        cudaGetLastError();
        blocks = 0;
        launchable = false;
      }
    }
    int measured = -1;
    if (launchable && blocks > 0) measured = measure(ctx, k, threads, dyn, blocks, s);
    Json p = Json::object();
    p["threads"] = threads;
    p["registers_per_thread"] = a.numRegs;
    p["shared_bytes"] = static_cast<unsigned long long>(a.sharedSizeBytes + dyn);
    p["kernel"] = k.name;
    Json rec = make_record(id, "occupancy", "occupancy", p);
    rec["blocks_per_sm"] = blocks;
    rec["measured_blocks_per_sm"] = measured >= 0 ? Json(measured) : Json();
    rec["launchable"] = launchable;
    rec["static_shared_bytes"] = static_cast<unsigned long long>(a.sharedSizeBytes);
    rec["dynamic_shared_bytes"] = static_cast<unsigned long long>(dyn);
    rec["max_threads_per_block"] = a.maxThreadsPerBlock;
    rec["local_bytes_per_thread"] = static_cast<unsigned long long>(a.localSizeBytes);
    if (k.cap) rec["maxnreg"] = k.cap;
    rec["warps_per_sm"] = blocks * ((threads + 31) / 32);
    std::fprintf(stderr, "  %-44s regs %3d smem %6zu -> %2d blocks/SM (measured %d)\n", id.c_str(),
                 a.numRegs, a.sharedSizeBytes + dyn, blocks, measured);
    ctx.add(std::move(rec));
  });
}

}  // namespace

void suite_occupancy(Context& ctx) {
  const int sms = ctx.prop().multiProcessorCount;
  Scratch s;
  s.max_blocks = static_cast<std::size_t>(sms) * 40;
  s.out = DeviceBuffer(s.max_blocks * 1024 * 4 + 4096);
  s.start = DeviceBuffer(s.max_blocks * 8);
  s.end = DeviceBuffer(s.max_blocks * 8);
  s.sm = DeviceBuffer(s.max_blocks * 4);
  fill_uniform(s.out.get(), s.max_blocks * 1024 + 1024, Dtype::kF32, 71, -1.f, 1.f, ctx.stream());
  for (const auto* list : {&reg_kernels(), &static_kernels()}) {
    for (const auto& k : *list) {
      cudaFuncAttributes a{};
      RIDGE_CUDA(cudaFuncGetAttributes(&a, (const void*)k.fn));
      RIDGE_CUDA(cudaFuncSetAttribute(
          (const void*)k.fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
          static_cast<int>(ctx.prop().sharedMemPerBlockOptin - a.sharedSizeBytes)));
    }
  }
  const std::vector<int> all_threads = {32, 64, 96, 128, 192, 256, 384, 512, 640, 768, 1024};
  // Registers x threads, no shared memory: the warp, register and block limits.
  for (const auto& k : reg_kernels()) {
    if (ctx.quick() && k.cap != 64 && k.cap != 255) continue;
    for (int t : all_threads) occ_case(ctx, k, t, 0, s);
  }
  // Dynamic shared memory: the shared-memory limit, with the reserved 1 KiB per block.
  const std::vector<std::size_t> dyn = {1000,      8 << 10,   20 << 10,  33 << 10,
                                        48 << 10,  64 << 10,  100 << 10, 113 << 10,
                                        150 << 10, 200 << 10, 227 << 10};
  for (int cap_index : {0, 3}) {
    const auto& k = reg_kernels()[cap_index];
    for (int t : {128, 256, 1024}) {
      for (std::size_t d : dyn) occ_case(ctx, k, t, d, s);
    }
  }
  // Static shared memory, alone and with dynamic on top.
  for (const auto& k : static_kernels()) {
    for (int t : {128, 512}) occ_case(ctx, k, t, 0, s);
  }
  for (std::size_t d : {std::size_t{16} << 10, std::size_t{64} << 10}) {
    occ_case(ctx, static_kernels()[3], 256, d, s);
  }
}

}  // namespace ridge::validate
