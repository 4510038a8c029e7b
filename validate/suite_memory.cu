// Suite "memory": device-memory bandwidth against buffer size (read, write, copy; the L2 knee
// shows where the buffer fits in L2), L2 and shared-memory bandwidth, pointer-chase load latency,
// and host<->device copies from pinned and pageable memory.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>

#include "suites.hpp"

namespace ridge::validate {
namespace {

// Loads that the compiler may neither drop nor merge (volatile asm); .cg keeps them out of L1.
__device__ __forceinline__ uint4 load_cg(const uint4* p) {
  uint4 v;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

__device__ __forceinline__ unsigned fold(uint4 v) {
  return v.x ^ v.y ^ v.z ^ v.w;
}

__global__ void read_kernel(const uint4* p, std::size_t n, unsigned* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = load_cg(p + i), b = load_cg(p + i + stride), c = load_cg(p + i + 2 * stride),
          d = load_cg(p + i + 3 * stride);
    acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
  }
  for (; i < n; i += stride) acc ^= fold(load_cg(p + i));
  if (acc == 0x9E3779B9u) sink[0] = acc;  // practically never; keeps the loads live
}

__global__ void write_kernel(uint4* p, std::size_t n, unsigned v) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const uint4 x = make_uint4(v, v ^ 1u, v ^ 2u, v ^ 3u);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    p[i] = x;
  }
}

__global__ void copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < n; i += stride) dst[i] = src[i];
}

// Every thread of a full grid reads `loads` 16-byte words of an L2-resident buffer (n a power
// of two), so bandwidth is not limited by how many threads the buffer would give.
__global__ void l2_read_kernel(const uint4* p, std::size_t mask, int loads, unsigned* sink) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (int k = 0; k < loads; k += 4) {
    uint4 a = load_cg(p + (i & mask)), b = load_cg(p + ((i + stride) & mask)),
          c = load_cg(p + ((i + 2 * stride) & mask)), d = load_cg(p + ((i + 3 * stride) & mask));
    acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    i += 4 * stride;
  }
  if (acc == 0x9E3779B9u) sink[0] = acc;
}

// Shared-memory reads, conflict-free: lane l of a warp reads word (l + 32 k) of width W bytes.
template <int W>
__global__ void smem_read_kernel(int iters, unsigned* sink) {
  constexpr int kWords = 16384 / W;  // 16 KiB
  __shared__ __align__(16) unsigned char buf[16384];
  for (int i = threadIdx.x; i < 16384 / 4; i += blockDim.x) {
    reinterpret_cast<unsigned*>(buf)[i] = i * 2654435761u;
  }
  __syncthreads();
  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(buf));
  unsigned a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  const int lane_word = threadIdx.x;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int word = (lane_word + (it * 4 + u) * 32) & (kWords - 1);
      const unsigned addr = base + word * W;
      if constexpr (W == 16) {
        unsigned x, y, z, w;
        asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(x), "=r"(y), "=r"(z), "=r"(w)
                     : "r"(addr));
        a0 ^= x;
        a1 ^= y;
        a2 ^= z;
        a3 ^= w;
      } else {
        unsigned x;
        asm volatile("ld.shared.u32 %0, [%1];" : "=r"(x) : "r"(addr));
        (u & 1 ? a1 : a0) ^= x;
      }
    }
  }
  if ((a0 ^ a1 ^ a2 ^ a3) == 0x9E3779B9u) sink[0] = a0;
}

__device__ __forceinline__ unsigned load_ca(const unsigned* p) {
  unsigned v;
  asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}

// One thread follows a random cyclic chain: each load's address is the previous load's value.
// The walk resumes where the previous call stopped (state[0]), so repeated calls visit new nodes
// instead of re-reading the first `steps` (which would sit in L2 whatever the footprint).
__global__ void chase_kernel(const unsigned* next, int steps, unsigned* state, long long* cycles) {
  unsigned p = state[0];
  const long long c0 = clock64();
  for (int i = 0; i < steps; ++i) p = load_ca(next + p);
  const long long c1 = clock64();
  state[0] = p;
  cycles[0] = c1 - c0;
}

__global__ void scatter_chain(unsigned* next, const unsigned* succ, std::size_t nodes,
                              unsigned stride_words) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < nodes;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    next[i * stride_words] = succ[i] * stride_words;
  }
}

constexpr int kThreads = 512;

unsigned grid_for(const Context& ctx, std::size_t n16) {
  const std::size_t full = static_cast<std::size_t>(ctx.prop().multiProcessorCount) *
                           (ctx.prop().maxThreadsPerMultiProcessor / kThreads);
  const std::size_t need = (n16 + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min(full, need)));
}

void add_bw(Context& ctx, Json rec, const Timing& t, double bytes_moved) {
  rec["timing"] = t.to_json();
  rec["bytes"] = bytes_moved;
  rec["bandwidth_gbps"] = bytes_moved / (t.median_us * 1e-6) / 1e9;
  std::fprintf(stderr, "  %-40s %10.2f us %9.1f GB/s\n", rec["id"].str().c_str(), t.median_us,
               bytes_moved / (t.median_us * 1e-6) / 1e9);
  ctx.add(std::move(rec));
}

void membw_case(Context& ctx, unsigned* sink, const DeviceBuffer& a, const DeviceBuffer& b,
                const char* kind, std::size_t bytes, int sets) {
  std::string id = std::string("membw/") + kind + "/" + human_bytes(bytes);
  for (auto& ch : id) {
    if (ch == ' ') ch = '_';
  }
  if (sets > 1) id += "/rotate" + std::to_string(sets);
  ctx.run_case(id, [&] {
    const std::size_t n16 = bytes / 16;
    const unsigned grid = grid_for(ctx, n16);
    auto* pa = a.as<uint4>();
    auto* pb = b.as<uint4>();
    Timing t = ctx.time_kernel([&](int rep) {
      const std::size_t off = static_cast<std::size_t>(rep % sets) * n16;
      if (std::strcmp(kind, "read") == 0) {
        read_kernel<<<grid, kThreads, 0, ctx.stream()>>>(pa + off, n16, sink);
      } else if (std::strcmp(kind, "write") == 0) {
        write_kernel<<<grid, kThreads, 0, ctx.stream()>>>(pa + off, n16, rep);
      } else {
        copy_kernel<<<grid, kThreads, 0, ctx.stream()>>>(pb + off, pa + off, n16);
      }
    });
    Json p = Json::object();
    p["kind"] = kind;
    p["bytes"] = static_cast<unsigned long long>(bytes);
    p["buffers"] = sets;
    Json rec = make_record(id, "memory", "membw", p);
    const void* fn = std::strcmp(kind, "read") == 0    ? (const void*)read_kernel
                     : std::strcmp(kind, "write") == 0 ? (const void*)write_kernel
                                                       : (const void*)copy_kernel;
    rec["kernel"] = kernel_json(std::string(kind) + "_kernel", fn, dim3(grid), dim3(kThreads), 0);
    const bool copy = std::strcmp(kind, "copy") == 0;
    add_bw(ctx, std::move(rec), t, static_cast<double>(copy ? 2 * bytes : bytes));
  });
}

void membw_cases(Context& ctx, unsigned* sink) {
  const std::size_t max_bytes = ctx.quick() ? (256ull << 20) : (4ull << 30);
  DeviceBuffer a(max_bytes), b(max_bytes);
  fill_uniform(a.get(), max_bytes / 4, Dtype::kF32, 1, -1.f, 1.f, ctx.stream());
  fill_uniform(b.get(), max_bytes / 4, Dtype::kF32, 2, -1.f, 1.f, ctx.stream());
  const char* kinds[] = {"read", "write", "copy"};
  for (std::size_t bytes = 1ull << 20; bytes <= max_bytes; bytes *= 2) {
    for (const char* kind : kinds) {
      const bool copy = std::strcmp(kind, "copy") == 0;
      const std::size_t ws = copy ? 2 * bytes : bytes;
      // Rotation only where the buffer could sit in L2; the single-buffer case shows the knee.
      std::vector<int> variants = {1};
      if (ws < 4 * ctx.l2_bytes()) {
        variants.push_back(std::min<int>(rotation_sets(ws, ctx.l2_bytes(), 512),
                                         static_cast<int>(max_bytes / bytes)));
      }
      for (int sets : variants) membw_case(ctx, sink, a, b, kind, bytes, sets);
    }
  }
}

void l2bw_cases(Context& ctx, unsigned* sink) {
  DeviceBuffer buf(64ull << 20);
  fill_uniform(buf.get(), (64ull << 20) / 4, Dtype::kF32, 3, -1.f, 1.f, ctx.stream());
  const unsigned grid =
      ctx.prop().multiProcessorCount * (ctx.prop().maxThreadsPerMultiProcessor / kThreads);
  const int loads = 256;
  for (std::size_t bytes = 1ull << 20; bytes <= (32ull << 20); bytes *= 2) {
    std::string id = "l2bw/" + std::to_string(bytes >> 20) + "MiB";
    ctx.run_case(id, [&] {
      const std::size_t mask = bytes / 16 - 1;
      Timing t = ctx.time_kernel([&](int) {
        l2_read_kernel<<<grid, kThreads, 0, ctx.stream()>>>(buf.as<uint4>(), mask, loads, sink);
      });
      Json p = Json::object();
      p["bytes"] = static_cast<unsigned long long>(bytes);
      Json rec = make_record(id, "memory", "l2bw", p);
      rec["kernel"] =
          kernel_json("l2_read_kernel", (const void*)l2_read_kernel, dim3(grid), dim3(kThreads), 0);
      add_bw(ctx, std::move(rec), t, static_cast<double>(grid) * kThreads * loads * 16.0);
    });
  }
}

void smem_cases(Context& ctx, unsigned* sink) {
  const unsigned threads = 1024;
  const unsigned grid =
      ctx.prop().multiProcessorCount * (ctx.prop().maxThreadsPerMultiProcessor / threads);
  const int iters = 4096;
  for (int width : {4, 16}) {
    std::string id = "smem_bw/width" + std::to_string(width);
    ctx.run_case(id, [&] {
      const void* fn =
          width == 16 ? (const void*)smem_read_kernel<16> : (const void*)smem_read_kernel<4>;
      Timing t = ctx.time_kernel([&](int) {
        if (width == 16) {
          smem_read_kernel<16><<<grid, threads, 0, ctx.stream()>>>(iters, sink);
        } else {
          smem_read_kernel<4><<<grid, threads, 0, ctx.stream()>>>(iters, sink);
        }
      });
      Json p = Json::object();
      p["width"] = width;
      Json rec = make_record(id, "memory", "smem_bw", p);
      rec["kernel"] = kernel_json("smem_read_kernel", fn, dim3(grid), dim3(threads), 0);
      const double bytes = static_cast<double>(grid) * threads * iters * 4.0 * width;
      if (t.sm_mhz > 0) {
        rec["bytes_per_clock_per_sm"] =
            bytes / (t.median_us * 1e-6) / (t.sm_mhz * 1e6) / ctx.prop().multiProcessorCount;
      }
      add_bw(ctx, std::move(rec), t, bytes);
    });
  }
}

void latency_cases(Context& ctx) {
  const unsigned stride = 128;  // bytes between nodes: one node per 128-byte line
  std::vector<std::size_t> footprints = {4ull << 10,   16ull << 10,  64ull << 10, 128ull << 10,
                                         256ull << 10, 1ull << 20,   4ull << 20,  8ull << 20,
                                         16ull << 20,  32ull << 20,  48ull << 20, 64ull << 20,
                                         128ull << 20, 256ull << 20, 1ull << 30};
  if (ctx.quick()) footprints = {16ull << 10, 8ull << 20, 256ull << 20};
  const std::size_t max_fp = footprints.back();
  DeviceBuffer next(max_fp), out(64);
  std::mt19937_64 rng(12345);
  for (std::size_t fp : footprints) {
    const char* level = fp <= (128ull << 10) ? "l1" : fp <= (32ull << 20) ? "l2" : "hbm";
    std::string id = "latency/" + std::string(level) + "/" + human_bytes(fp);
    for (auto& ch : id) {
      if (ch == ' ') ch = '_';
    }
    ctx.run_case(id, [&] {
      const std::size_t nodes = fp / stride;
      // Sattolo's algorithm: a uniformly random permutation that is one single cycle.
      std::vector<unsigned> order(nodes);
      std::iota(order.begin(), order.end(), 0u);
      for (std::size_t i = nodes - 1; i > 0; --i) {
        std::uniform_int_distribution<std::size_t> d(0, i - 1);
        std::swap(order[i], order[d(rng)]);
      }
      std::vector<unsigned> succ(nodes);
      for (std::size_t i = 0; i < nodes; ++i) succ[order[i]] = order[(i + 1) % nodes];
      DeviceBuffer dsucc(nodes * sizeof(unsigned));
      RIDGE_CUDA(
          cudaMemcpy(dsucc.get(), succ.data(), nodes * sizeof(unsigned), cudaMemcpyHostToDevice));
      scatter_chain<<<1024, 256, 0, ctx.stream()>>>(next.as<unsigned>(), dsucc.as<unsigned>(),
                                                    nodes, stride / 4);
      RIDGE_LAUNCH_CHECK();
      RIDGE_CUDA(cudaStreamSynchronize(ctx.stream()));
      auto* o = out.as<unsigned>();
      auto* cyc = reinterpret_cast<long long*>(out.as<unsigned char>() + 32);
      RIDGE_CUDA(cudaMemsetAsync(o, 0, 4, ctx.stream()));
      long long walked = 0;  // steps taken since node 0, to check where the walk ended
      auto chase = [&](int n) {
        chase_kernel<<<1, 1, 0, ctx.stream()>>>(next.as<unsigned>(), n, o, cyc);
        walked += n;
      };
      // Probe, then size the walk to ~20 ms per call.
      int steps = 4096;
      Timing probe = ctx.time_per_call([&](int) { chase(steps); }, TimeOpts{1.0, 2, 3, 1});
      const double per_ns = probe.median_us * 1000.0 / steps;
      const double target_ns = (ctx.quick() ? 5e6 : 20e6);
      steps = static_cast<int>(std::clamp(target_ns / std::max(per_ns, 1.0), 4096.0, 4.0e6));
      // Where the footprint can be cached at all, one pass over every node warms caches and TLBs.
      if (fp <= 2 * ctx.l2_bytes()) chase(static_cast<int>(nodes));
      RIDGE_LAUNCH_CHECK();
      Timing t = ctx.time_per_call([&](int) { chase(steps); },
                                   TimeOpts{ctx.quick() ? 30.0 : 100.0, 3, 20, 1});
      unsigned final_word = 0;
      RIDGE_CUDA(cudaMemcpy(&final_word, o, 4, cudaMemcpyDeviceToHost));
      const std::size_t pos0 =
          static_cast<std::size_t>(std::find(order.begin(), order.end(), 0u) - order.begin());
      const unsigned expect_word =
          order[(pos0 + static_cast<std::size_t>(walked)) % nodes] * (stride / 4);
      long long cycles = 0;
      RIDGE_CUDA(cudaMemcpy(&cycles, cyc, sizeof cycles, cudaMemcpyDeviceToHost));
      Json p = Json::object();
      p["level"] = level;
      p["footprint"] = static_cast<unsigned long long>(fp);
      p["stride"] = stride;
      Json rec = make_record(id, "memory", "latency", p);
      rec["timing"] = t.to_json();
      rec["steps"] = steps;
      const double ns = t.median_us * 1000.0 / steps;
      rec["latency_ns"] = ns;
      rec["latency_cycles"] = static_cast<double>(cycles) / steps;
      rec["kernel"] = kernel_json("chase_kernel", (const void*)chase_kernel, dim3(1), dim3(1), 0);
      Json chk = Json::object();
      chk["passed"] = final_word == expect_word;
      chk["steps_walked"] = walked;
      chk["reference"] = "host walk of the same permutation: the node the chain ends on";
      rec["check"] = chk;
      std::fprintf(stderr, "  %-40s %8.1f ns %8.1f cycles\n", id.c_str(), ns,
                   static_cast<double>(cycles) / steps);
      ctx.add(std::move(rec));
    });
  }
}

void host_copy_case(Context& ctx, const DeviceBuffer& dev, void* pinned, void* pageable,
                    std::size_t bytes, const char* memory, const char* dir) {
  std::string id = std::string("copy/") + dir + "/" + memory + "/" + human_bytes(bytes);
  for (auto& ch : id) {
    if (ch == ' ') ch = '_';
  }
  ctx.run_case(id, [&] {
    void* host = std::strcmp(memory, "pinned") == 0 ? pinned : pageable;
    const bool h2d = std::strcmp(dir, "h2d") == 0;
    Timing t = ctx.time_per_call(
        [&](int) {
          if (h2d) {
            RIDGE_CUDA(
                cudaMemcpyAsync(dev.get(), host, bytes, cudaMemcpyHostToDevice, ctx.stream()));
          } else {
            RIDGE_CUDA(
                cudaMemcpyAsync(host, dev.get(), bytes, cudaMemcpyDeviceToHost, ctx.stream()));
          }
        },
        TimeOpts{ctx.quick() ? 20.0 : 150.0, 3, 200, 2});
    Json p = Json::object();
    p["bytes"] = static_cast<unsigned long long>(bytes);
    p["direction"] = dir;
    p["memory"] = memory;
    add_bw(ctx, make_record(id, "memory", "copy", p), t, static_cast<double>(bytes));
  });
}

/// Runs `fn(dev, pinned, pageable)` with `max_bytes` of each, initialised as the suite does.
template <typename F>
void with_host_buffers(Context& ctx, std::size_t max_bytes, F fn) {
  DeviceBuffer dev(max_bytes);
  void* pinned = nullptr;
  RIDGE_CUDA(cudaHostAlloc(&pinned, max_bytes, cudaHostAllocDefault));
  std::vector<unsigned char> pageable(max_bytes);
  for (std::size_t i = 0; i < max_bytes; i += 4096)
    pageable[i] = static_cast<unsigned char>(i >> 12);
  std::memset(pinned, 0x5A, max_bytes);
  fill_uniform(dev.get(), max_bytes / 4, Dtype::kF32, 4, -1.f, 1.f, ctx.stream());
  try {
    fn(dev, pinned, static_cast<void*>(pageable.data()));
  } catch (...) {
    cudaFreeHost(pinned);
    throw;
  }
  cudaFreeHost(pinned);
}

void host_copy_cases(Context& ctx) {
  const std::size_t max_bytes = ctx.quick() ? (64ull << 20) : (1ull << 30);
  with_host_buffers(ctx, max_bytes, [&](const DeviceBuffer& dev, void* pinned, void* pageable) {
    for (std::size_t bytes = 1ull << 20; bytes <= max_bytes; bytes *= 4) {
      for (const char* memory : {"pinned", "pageable"}) {
        for (const char* dir : {"h2d", "d2h"}) {
          host_copy_case(ctx, dev, pinned, pageable, bytes, memory, dir);
        }
      }
    }
  });
}

}  // namespace

void run_membw_case(Context& ctx, const std::string& kind, std::size_t bytes, int sets) {
  if (kind != "read" && kind != "write" && kind != "copy") {
    throw BenchError("membw: unknown kind '" + kind + "'");
  }
  if (bytes % 16 != 0 || sets < 1) throw BenchError("membw: bytes must be a multiple of 16");
  const std::size_t span = bytes * static_cast<std::size_t>(sets);
  DeviceBuffer sink(256), a(span), b(kind == "copy" ? span : 256);
  fill_uniform(a.get(), span / 4, Dtype::kF32, 1, -1.f, 1.f, ctx.stream());
  if (kind == "copy") fill_uniform(b.get(), span / 4, Dtype::kF32, 2, -1.f, 1.f, ctx.stream());
  const char* k = kind == "read" ? "read" : kind == "write" ? "write" : "copy";
  membw_case(ctx, sink.as<unsigned>(), a, b, k, bytes, sets);
}

void run_host_copy_case(Context& ctx, const std::string& memory, const std::string& dir,
                        std::size_t bytes) {
  if ((memory != "pinned" && memory != "pageable") || (dir != "h2d" && dir != "d2h")) {
    throw BenchError("copy: memory must be pinned|pageable and direction h2d|d2h");
  }
  with_host_buffers(ctx, bytes, [&](const DeviceBuffer& dev, void* pinned, void* pageable) {
    host_copy_case(ctx, dev, pinned, pageable, bytes, memory == "pinned" ? "pinned" : "pageable",
                   dir == "h2d" ? "h2d" : "d2h");
  });
}

void suite_memory(Context& ctx) {
  DeviceBuffer sink(256);
  auto* s = sink.as<unsigned>();
  ctx.run_case("memory/membw", [&] { membw_cases(ctx, s); });
  ctx.run_case("memory/l2bw", [&] { l2bw_cases(ctx, s); });
  ctx.run_case("memory/smem", [&] { smem_cases(ctx, s); });
  ctx.run_case("memory/latency", [&] { latency_cases(ctx); });
  ctx.run_case("memory/host_copy", [&] { host_copy_cases(ctx); });
}

}  // namespace ridge::validate
