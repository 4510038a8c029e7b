// Suite "device": the device's properties and library versions, and the config overlay YAML.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "suites.hpp"

namespace ridge::validate {

const std::vector<Suite>& all_suites() {
  static const std::vector<Suite> suites = {
      {"device", "properties, versions, clocks (and --overlay YAML)", suite_device},
      {"memory", "HBM/L2/shared bandwidth, load latency, host copies", suite_memory},
      {"compute", "FMA rates, tensor-core GEMM 8192^3 per precision", suite_compute},
      {"launch", "launch overhead: bare, dependent, graph, per-call", suite_launch},
      {"gemm", "cuBLASLt GEMMs over square, skinny and LLM shapes", suite_gemm},
      {"kernels", "elementwise, softmax, norms, attention, d2d copies", suite_kernels},
      {"occupancy", "blocks per SM over threads, registers, shared memory", suite_occupancy},
  };
  return suites;
}

namespace {

std::string version_string(int v) {
  // cudaDriverGetVersion / cudaRuntimeGetVersion: 1000 * major + 10 * minor.
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

int attribute(cudaDeviceAttr a, int device) {
  int v = -1;
  if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return v;
}

std::string cublas_version() {
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

/// "228 KiB" where exact in KiB/MiB/GiB, else bytes.
std::string size_text(std::size_t b) {
  return human_bytes(b);
}

}  // namespace

Json device_json(Context& ctx) {
  const cudaDeviceProp& p = ctx.prop();
  Json d = Json::object();
  d["name"] = p.name;
  d["sm_count"] = p.multiProcessorCount;
  d["cc"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  char bus[32] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, ctx.device()) == cudaSuccess) d["pci_bus_id"] = bus;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  std::string nvml_drv = nvml_driver_version();
  d["driver"] = nvml_drv.empty() ? version_string(drv) : nvml_drv;
  d["driver_cuda"] = version_string(drv);
  d["cuda_runtime"] = version_string(rt);
  d["cublas"] = cublas_version();
  d["cublaslt"] = static_cast<unsigned long long>(cublasLtGetVersion());
  d["memory_bytes"] = static_cast<unsigned long long>(p.totalGlobalMem);
  d["l2_bytes"] = p.l2CacheSize;
  Clocks now = read_clocks(ctx.device());
  Json c = Json::object();
  std::vector<int> s = ctx.clock_samples();
  std::sort(s.begin(), s.end());
  // The SM clock while timed work ran (median of one sample per case); idle reads are not it.
  c["sm_mhz"] = s.empty() ? now.sm_mhz : s[s.size() / 2];
  c["mem_mhz"] = now.mem_mhz;
  c["sm_max_mhz"] = now.sm_max_mhz;
  c["mem_max_mhz"] = now.mem_max_mhz;
  if (!s.empty()) {
    c["sm_mhz_min_sampled"] = s.front();
    c["sm_mhz_max_sampled"] = s.back();
    c["samples"] = static_cast<unsigned long long>(s.size());
  }
  c["sm_mhz_now"] = now.sm_mhz;
  c["power_w_now"] = now.power_mw >= 0 ? Json(now.power_mw / 1000.0) : Json();
  c["temperature_c_now"] = now.temperature_c;
  c["source"] = now.sm_mhz >= 0 ? "nvml" : "unavailable";
  d["clocks"] = c;
  return d;
}

void suite_device(Context& ctx) {
  const cudaDeviceProp& p = ctx.prop();
  const int dev = ctx.device();
  Json props = Json::object();
  props["name"] = p.name;
  props["cc_major"] = p.major;
  props["cc_minor"] = p.minor;
  props["sm_count"] = p.multiProcessorCount;
  props["warp_size"] = p.warpSize;
  props["max_threads_per_block"] = p.maxThreadsPerBlock;
  props["max_threads_per_sm"] = p.maxThreadsPerMultiProcessor;
  props["max_blocks_per_sm"] = p.maxBlocksPerMultiProcessor;
  props["registers_per_sm"] = p.regsPerMultiprocessor;
  props["registers_per_block"] = p.regsPerBlock;
  props["shared_memory_per_sm"] = static_cast<unsigned long long>(p.sharedMemPerMultiprocessor);
  props["shared_memory_per_block"] = static_cast<unsigned long long>(p.sharedMemPerBlock);
  props["shared_memory_per_block_optin"] =
      static_cast<unsigned long long>(p.sharedMemPerBlockOptin);
  props["reserved_shared_memory_per_block"] =
      static_cast<unsigned long long>(p.reservedSharedMemPerBlock);
  props["l2_bytes"] = p.l2CacheSize;
  props["persisting_l2_max_bytes"] = p.persistingL2CacheMaxSize;
  props["memory_bytes"] = static_cast<unsigned long long>(p.totalGlobalMem);
  props["memory_bus_width_bits"] = p.memoryBusWidth;
  props["clock_khz"] = attribute(cudaDevAttrClockRate, dev);
  props["memory_clock_khz"] = attribute(cudaDevAttrMemoryClockRate, dev);
  props["async_engine_count"] = p.asyncEngineCount;
  props["concurrent_kernels"] = p.concurrentKernels;
  props["ecc_enabled"] = p.ECCEnabled;
  props["cluster_launch"] = p.clusterLaunch;
  props["global_l1_cache_supported"] = p.globalL1CacheSupported;
  props["max_persisting_l2_window_bytes"] = p.accessPolicyMaxWindowSize;
  props["pageable_memory_access"] = p.pageableMemoryAccess;
  props["multi_gpu_board"] = p.isMultiGpuBoard;
  props["single_to_double_perf_ratio"] =
      attribute(cudaDevAttrSingleToDoublePrecisionPerfRatio, dev);
  props["max_shared_memory_per_sm_attr"] =
      attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev);
  size_t free_b = 0, total_b = 0;
  RIDGE_CUDA(cudaMemGetInfo(&free_b, &total_b));
  props["memory_free_bytes"] = static_cast<unsigned long long>(free_b);
  Clocks c = read_clocks(dev);
  props["nvml_sm_max_mhz"] = c.sm_max_mhz;
  props["nvml_mem_max_mhz"] = c.mem_max_mhz;
  // Peak HBM bandwidth implied by the memory clock and bus width (double data rate).
  const int mem_khz = attribute(cudaDevAttrMemoryClockRate, dev);
  if (mem_khz > 0) {
    props["hbm_bandwidth_from_clock_gbps"] = 2.0 * mem_khz * 1e3 * (p.memoryBusWidth / 8.0) / 1e9;
  }
  Json r = make_record("device/properties", "device", "device_properties", Json::object());
  r["properties"] = props;
  ctx.add(r);
  std::fprintf(stderr, "device: %s, %d SMs, L2 %s, smem/SM %s, optin %s, reserved %s\n", p.name,
               p.multiProcessorCount, size_text(p.l2CacheSize).c_str(),
               size_text(p.sharedMemPerMultiprocessor).c_str(),
               size_text(p.sharedMemPerBlockOptin).c_str(),
               size_text(p.reservedSharedMemPerBlock).c_str());
}

void write_overlay(Context& ctx, const std::string& path) {
  const cudaDeviceProp& p = ctx.prop();
  Json dev = device_json(ctx);
  Clocks c = read_clocks(ctx.device());
  int sm_max =
      c.sm_max_mhz > 0 ? c.sm_max_mhz : attribute(cudaDevAttrClockRate, ctx.device()) / 1000;
  int mem_max = c.mem_max_mhz > 0 ? c.mem_max_mhz
                                  : attribute(cudaDevAttrMemoryClockRate, ctx.device()) / 1000;
  std::string mem_text;
  const std::size_t total = p.totalGlobalMem;
  if (total % (1024ull * 1024) == 0) {
    mem_text = std::to_string(total / (1024ull * 1024)) + " MiB";
  } else {
    mem_text = std::to_string(total) + " B";
  }
  char gib[64];
  std::snprintf(gib, sizeof gib, "%.2f GiB = %.2f GB", total / 1073741824.0, total / 1e9);
  std::ofstream f(path);
  if (!f) throw BenchError("cannot write " + path);
  f << "# Measured by ridge-bench on " << p.name << " driver " << dev["driver"].str() << " CUDA "
    << dev["cuda_runtime"].str() << " cuBLAS " << dev["cublas"].str() << " on " << utc_now_iso()
    << ": `" << ctx.opt().command << "`\n";
  f << "# Values are what the CUDA runtime reports (cudaGetDeviceProperties) and NVML's maximum\n"
       "# clocks; sizes are binary (KiB = 1024 B, MiB = 2^20 B). `base` resolves relative to this\n"
       "# file: use it from configs/hw/, beside h200-sxm-141gb.yaml.\n";
  const std::string src = std::string("ridge-bench device suite on ") + p.name + ", driver " +
                          dev["driver"].str() + ": cudaGetDeviceProperties";
  f << "base: h200-sxm-141gb.yaml\n";
  f << "gpu:\n";
  f << "  name: H200-SXM-141GB-measured\n";
  f << "  aliases: [h200-measured]\n";
  f << "  sm:\n";
  f << "    source: \"" << src << "\"\n";
  f << "    count: " << p.multiProcessorCount << "\n";
  f << "    warp_size: " << p.warpSize << "\n";
  f << "    max_threads_per_sm: " << p.maxThreadsPerMultiProcessor << "\n";
  f << "    max_warps_per_sm: " << p.maxThreadsPerMultiProcessor / p.warpSize << "\n";
  f << "    max_blocks_per_sm: " << p.maxBlocksPerMultiProcessor << "\n";
  f << "    max_threads_per_block: " << p.maxThreadsPerBlock << "\n";
  f << "    registers_per_sm: " << p.regsPerMultiprocessor << "\n";
  f << "    max_registers_per_block: " << p.regsPerBlock << "\n";
  f << "    shared_memory_per_sm: " << size_text(p.sharedMemPerMultiprocessor) << "\n";
  f << "    max_shared_memory_per_block: " << size_text(p.sharedMemPerBlockOptin) << "\n";
  f << "    default_shared_memory_per_block: " << size_text(p.sharedMemPerBlock) << "\n";
  f << "    reserved_shared_memory_per_block: " << size_text(p.reservedSharedMemPerBlock) << "\n";
  f << "  clocks:\n";
  f << "    source: \"ridge-bench device suite: NVML nvmlDeviceGetMaxClockInfo(SM)\"\n";
  f << "    boost: " << sm_max << " MHz\n";
  f << "  memory:\n";
  f << "    source: \"" << src << " (totalGlobalMem: the memory the driver exposes)\"\n";
  f << "    l2_size: " << size_text(p.l2CacheSize) << "\n";
  f << "    hbm_size: " << mem_text << "     # " << gib << ", as reported\n";
  f << "# Not config keys: memory clock " << mem_max << " MHz, bus width " << p.memoryBusWidth
    << " bits.\n";
  if (!f) throw BenchError("error writing " + path);
  std::fprintf(stderr, "wrote overlay %s\n", path.c_str());
}

}  // namespace ridge::validate
