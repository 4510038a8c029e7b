#include "bench_common.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace ridge::validate {

void throw_cuda(const char* expr, cudaError_t e, const char* file, int line) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%s:%d: %s failed: %s (%s)", file, line, expr,
                cudaGetErrorString(e), cudaGetErrorName(e));
  throw BenchError(buf);
}

const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::kF32:
      return "fp32";
    case Dtype::kTF32:
      return "tf32";
    case Dtype::kF16:
      return "fp16";
    case Dtype::kBF16:
      return "bf16";
    case Dtype::kF8E4M3:
      return "fp8_e4m3";
    case Dtype::kF8E5M2:
      return "fp8_e5m2";
    case Dtype::kF64:
      return "fp64";
  }
  return "?";
}

std::size_t dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::kF32:
    case Dtype::kTF32:
      return 4;
    case Dtype::kF16:
    case Dtype::kBF16:
      return 2;
    case Dtype::kF8E4M3:
    case Dtype::kF8E5M2:
      return 1;
    case Dtype::kF64:
      return 8;
  }
  return 0;
}

// ---- NVML, loaded at run time so that nothing but the driver is needed -------------------------

namespace {

struct Nvml {
  using InitFn = int (*)();
  using HandleByPciFn = int (*)(const char*, void**);
  using ClockFn = int (*)(void*, int, unsigned*);
  using UintFn = int (*)(void*, unsigned*);
  using TempFn = int (*)(void*, int, unsigned*);
  using DriverFn = int (*)(char*, unsigned);
  bool ok = false;
  HandleByPciFn handle_by_pci = nullptr;
  ClockFn clock = nullptr;
  ClockFn max_clock = nullptr;
  UintFn power = nullptr;
  TempFn temperature = nullptr;
  DriverFn driver = nullptr;
  std::vector<void*> handles;

  Nvml() {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
    handle_by_pci = reinterpret_cast<HandleByPciFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    max_clock = reinterpret_cast<ClockFn>(dlsym(lib, "nvmlDeviceGetMaxClockInfo"));
    power = reinterpret_cast<UintFn>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    temperature = reinterpret_cast<TempFn>(dlsym(lib, "nvmlDeviceGetTemperature"));
    driver = reinterpret_cast<DriverFn>(dlsym(lib, "nvmlSystemGetDriverVersion"));
    ok = init && handle_by_pci && clock && init() == 0;
  }

  void* handle(int device) {
    if (!ok) return nullptr;
    if (static_cast<int>(handles.size()) <= device) handles.resize(device + 1, nullptr);
    if (!handles[device]) {
      char bus[32] = {0};
      if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) return nullptr;
      void* h = nullptr;
      if (handle_by_pci(bus, &h) == 0) handles[device] = h;
    }
    return handles[device];
  }
};

Nvml& nvml() {
  static Nvml n;
  return n;
}

}  // namespace

Clocks read_clocks(int device) {
  Clocks c;
  Nvml& n = nvml();
  void* h = n.handle(device);
  if (!h) return c;
  unsigned v = 0;
  constexpr int kClockSm = 1, kClockMem = 2;
  if (n.clock(h, kClockSm, &v) == 0) c.sm_mhz = static_cast<int>(v);
  if (n.clock(h, kClockMem, &v) == 0) c.mem_mhz = static_cast<int>(v);
  if (n.max_clock && n.max_clock(h, kClockSm, &v) == 0) c.sm_max_mhz = static_cast<int>(v);
  if (n.max_clock && n.max_clock(h, kClockMem, &v) == 0) c.mem_max_mhz = static_cast<int>(v);
  if (n.power && n.power(h, &v) == 0) c.power_mw = static_cast<int>(v);
  if (n.temperature && n.temperature(h, 0, &v) == 0) c.temperature_c = static_cast<int>(v);
  return c;
}

std::string nvml_driver_version() {
  Nvml& n = nvml();
  char buf[96] = {0};
  if (n.ok && n.driver && n.driver(buf, sizeof buf) == 0) return buf;
  return "";
}

// ---- timing ----------------------------------------------------------------------------------

namespace {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  double pos = q * static_cast<double>(sorted.size() - 1);
  std::size_t lo = static_cast<std::size_t>(pos);
  std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  double f = pos - static_cast<double>(lo);
  return sorted[lo] * (1 - f) + sorted[hi] * f;
}

__global__ void spin_kernel(std::uint64_t ns) {
  std::uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

}  // namespace

void launch_spin(std::uint64_t ns, cudaStream_t s) {
  spin_kernel<<<1, 1, 0, s>>>(ns);
  RIDGE_LAUNCH_CHECK();
}

Timing timing_from(std::vector<double> us, const std::string& method, int warmup) {
  Timing t;
  t.method = method;
  t.warmup = warmup;
  t.reps = static_cast<int>(us.size());
  if (us.empty()) return t;
  std::sort(us.begin(), us.end());
  t.min_us = us.front();
  t.median_us = percentile(us, 0.5);
  t.p10_us = percentile(us, 0.1);
  t.p90_us = percentile(us, 0.9);
  double sum = 0;
  for (double x : us) sum += x;
  t.mean_us = sum / static_cast<double>(us.size());
  t.spread = t.median_us > 0 ? (t.p90_us - t.p10_us) / t.median_us : 0;
  return t;
}

Json Timing::to_json() const {
  Json j = Json::object();
  j["method"] = method;
  j["warmup"] = warmup;
  j["reps"] = reps;
  if (group > 1) j["group"] = group;
  j["median_us"] = median_us;
  j["min_us"] = min_us;
  j["p10_us"] = p10_us;
  j["p90_us"] = p90_us;
  j["mean_us"] = mean_us;
  j["spread"] = spread;
  if (sm_mhz > 0) j["sm_mhz"] = sm_mhz;
  return j;
}

Context::Context(Options opt) : opt_(std::move(opt)) {
  RIDGE_CUDA(cudaSetDevice(opt_.device));
  RIDGE_CUDA(cudaGetDeviceProperties(&prop_, opt_.device));
  RIDGE_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  events_.resize(257);
  for (auto& e : events_) RIDGE_CUDA(cudaEventCreate(&e));
}

Context::~Context() {
  for (auto& e : events_) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

Timing Context::time_kernel(const std::function<void(int)>& op, TimeOpts o) {
  const double target = o.target_ms > 0 ? o.target_ms : target_ms();
  int rep = 0;
  // First call: module loading, library heuristics and allocations stay out of the numbers.
  op(rep++);
  RIDGE_LAUNCH_CHECK();
  RIDGE_CUDA(cudaStreamSynchronize(stream_));
  // Probe the duration of one repetition (several when they are short).
  float ms = 0;
  RIDGE_CUDA(cudaEventRecord(events_[0], stream_));
  op(rep++);
  RIDGE_CUDA(cudaEventRecord(events_[1], stream_));
  RIDGE_CUDA(cudaEventSynchronize(events_[1]));
  RIDGE_CUDA(cudaEventElapsedTime(&ms, events_[0], events_[1]));
  double per = std::max(static_cast<double>(ms), 1e-4);
  if (per < 0.05) {
    launch_spin(200000, stream_);
    RIDGE_CUDA(cudaEventRecord(events_[0], stream_));
    for (int i = 0; i < 20; ++i) op(rep++);
    RIDGE_CUDA(cudaEventRecord(events_[1], stream_));
    RIDGE_CUDA(cudaEventSynchronize(events_[1]));
    RIDGE_CUDA(cudaEventElapsedTime(&ms, events_[0], events_[1]));
    per = std::max(static_cast<double>(ms) / 20.0, 1e-4);
  }
  const int warmup =
      std::clamp(static_cast<int>(std::ceil((quick() ? 3.0 : 10.0) / per)), o.min_warmup, 200);
  for (int i = 0; i < warmup; ++i) op(rep++);
  RIDGE_LAUNCH_CHECK();
  // An event between every two repetitions costs ~2 us of GPU time (measured on an H200: a tiny
  // kernel 3.6 us with events between, 1.3 us without), so short repetitions are timed in groups
  // of `group` between events (at least ~50 us per group) and each sample is the group's mean.
  const int group = per < 0.05 ? std::clamp(static_cast<int>(std::ceil(0.05 / per)), 1, 64) : 1;
  const int samples = std::clamp(static_cast<int>(target / (per * group)), o.min_reps,
                                 std::max(o.min_reps, o.max_reps / group));
  // A batch is queued behind a spin kernel before the GPU starts it; short operations stay
  // under ~512 queued launches so that the host's enqueueing never starves the GPU.
  const int batch_max = std::min(static_cast<int>(events_.size()) - 1,
                                 per < 0.2 ? std::max(1, 512 / group) : 1 << 30);
  std::vector<double> us;
  us.reserve(samples);
  int sampled = -1;
  for (int done = 0; done < samples;) {
    const int b = std::min(batch_max, samples - done);
    if (per < 0.2) {
      launch_spin(std::min<std::uint64_t>(10000ull * b * group + 20000ull, 20000000ull), stream_);
    }
    RIDGE_CUDA(cudaEventRecord(events_[0], stream_));
    for (int i = 0; i < b; ++i) {
      for (int g = 0; g < group; ++g) op(rep++);
      RIDGE_CUDA(cudaEventRecord(events_[i + 1], stream_));
    }
    RIDGE_LAUNCH_CHECK();
    if (done + b >= samples) sampled = read_clocks(opt_.device).sm_mhz;
    RIDGE_CUDA(cudaStreamSynchronize(stream_));
    for (int i = 0; i < b; ++i) {
      RIDGE_CUDA(cudaEventElapsedTime(&ms, events_[i], events_[i + 1]));
      us.push_back(static_cast<double>(ms) * 1000.0 / group);
    }
    done += b;
  }
  Timing t = timing_from(std::move(us), "kernel", warmup);
  t.group = group;
  t.sm_mhz = sampled;
  if (sampled > 0) clock_samples_.push_back(sampled);
  return t;
}

Timing Context::time_per_call(const std::function<void(int)>& op, TimeOpts o) {
  const double target = o.target_ms > 0 ? o.target_ms : target_ms();
  int rep = 0;
  op(rep++);
  RIDGE_LAUNCH_CHECK();
  RIDGE_CUDA(cudaStreamSynchronize(stream_));
  float ms = 0;
  RIDGE_CUDA(cudaEventRecord(events_[0], stream_));
  op(rep++);
  RIDGE_CUDA(cudaEventRecord(events_[1], stream_));
  RIDGE_CUDA(cudaEventSynchronize(events_[1]));
  RIDGE_CUDA(cudaEventElapsedTime(&ms, events_[0], events_[1]));
  // Each repetition also pays a synchronisation (~10 us) on the host.
  const double per = std::max(static_cast<double>(ms), 1e-4) + 0.01;
  const int warmup = o.min_warmup;
  for (int i = 0; i < warmup; ++i) op(rep++);
  RIDGE_CUDA(cudaStreamSynchronize(stream_));
  const int reps = std::clamp(static_cast<int>(target / per), o.min_reps, o.max_reps);
  std::vector<double> us;
  int sampled = -1;
  for (int i = 0; i < reps; ++i) {
    RIDGE_CUDA(cudaEventRecord(events_[0], stream_));
    op(rep++);
    RIDGE_CUDA(cudaEventRecord(events_[1], stream_));
    if (i == reps - 1) sampled = read_clocks(opt_.device).sm_mhz;
    RIDGE_CUDA(cudaEventSynchronize(events_[1]));
    RIDGE_CUDA(cudaEventElapsedTime(&ms, events_[0], events_[1]));
    us.push_back(static_cast<double>(ms) * 1000.0);
  }
  RIDGE_LAUNCH_CHECK();
  Timing t = timing_from(std::move(us), "per_call", warmup);
  t.sm_mhz = sampled;
  return t;
}

void Context::run_case(const std::string& id, const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAILED %s: %s\n", id.c_str(), e.what());
    failures_.push_back(id + ": " + e.what());
    cudaGetLastError();
    // A second error after clearing the last one means the context is broken (sticky error).
    cudaError_t st = cudaDeviceSynchronize();
    if (st != cudaSuccess) {
      std::fprintf(stderr, "fatal: CUDA context unusable after %s: %s\n", id.c_str(),
                   cudaGetErrorString(st));
      failures_.push_back(std::string("fatal: ") + cudaGetErrorString(st));
      if (on_fatal) on_fatal();
      std::exit(2);
    }
  }
}

// ---- buffers and data ------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes) RIDGE_CUDA(cudaMalloc(&p_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) cudaFree(p_);
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (p_) cudaFree(p_);
    p_ = o.p_;
    bytes_ = o.bytes_;
    o.p_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

namespace {

__device__ __forceinline__ float hash_uniform(std::uint64_t i, std::uint64_t seed) {
  std::uint64_t z = i + seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (1.0f / 16777216.0f);
}

template <typename T>
__device__ __forceinline__ T from_float(float v) {
  return static_cast<T>(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e5m2 from_float<__nv_fp8_e5m2>(float v) {
  return __nv_fp8_e5m2(v);
}

template <typename T>
__global__ void fill_kernel(T* p, std::size_t n, std::uint64_t seed, float lo, float span) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    p[i] = from_float<T>(lo + span * hash_uniform(i, seed));
  }
}

template <typename T>
void fill_t(void* p, std::size_t n, std::uint64_t seed, float lo, float hi, cudaStream_t s) {
  if (n == 0) return;
  const std::size_t blocks = std::min<std::size_t>((n + 255) / 256, 65536);
  fill_kernel<T>
      <<<static_cast<unsigned>(blocks), 256, 0, s>>>(static_cast<T*>(p), n, seed, lo, hi - lo);
  RIDGE_LAUNCH_CHECK();
}

}  // namespace

void fill_uniform(void* p, std::size_t n, Dtype d, std::uint64_t seed, float lo, float hi,
                  cudaStream_t s) {
  switch (d) {
    case Dtype::kF32:
    case Dtype::kTF32:
      fill_t<float>(p, n, seed, lo, hi, s);
      break;
    case Dtype::kF16:
      fill_t<__half>(p, n, seed, lo, hi, s);
      break;
    case Dtype::kBF16:
      fill_t<__nv_bfloat16>(p, n, seed, lo, hi, s);
      break;
    case Dtype::kF8E4M3:
      fill_t<__nv_fp8_e4m3>(p, n, seed, lo, hi, s);
      break;
    case Dtype::kF8E5M2:
      fill_t<__nv_fp8_e5m2>(p, n, seed, lo, hi, s);
      break;
    case Dtype::kF64:
      fill_t<double>(p, n, seed, lo, hi, s);
      break;
  }
}

std::vector<double> to_host_double(const void* p, std::size_t n, Dtype d) {
  std::vector<unsigned char> raw(n * dtype_bytes(d));
  RIDGE_CUDA(cudaDeviceSynchronize());
  RIDGE_CUDA(cudaMemcpy(raw.data(), p, raw.size(), cudaMemcpyDeviceToHost));
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char* e = raw.data() + i * dtype_bytes(d);
    switch (d) {
      case Dtype::kF32:
      case Dtype::kTF32: {
        float f;
        std::memcpy(&f, e, 4);
        out[i] = f;
        break;
      }
      case Dtype::kF16: {
        __half h;
        std::memcpy(&h, e, 2);
        out[i] = __half2float(h);
        break;
      }
      case Dtype::kBF16: {
        __nv_bfloat16 h;
        std::memcpy(&h, e, 2);
        out[i] = __bfloat162float(h);
        break;
      }
      case Dtype::kF8E4M3: {
        __nv_fp8_e4m3 h;
        std::memcpy(&h, e, 1);
        out[i] = static_cast<float>(h);
        break;
      }
      case Dtype::kF8E5M2: {
        __nv_fp8_e5m2 h;
        std::memcpy(&h, e, 1);
        out[i] = static_cast<float>(h);
        break;
      }
      case Dtype::kF64:
        std::memcpy(&out[i], e, 8);
        break;
    }
  }
  return out;
}

void poison(void* p, std::size_t bytes, cudaStream_t s) {
  RIDGE_CUDA(cudaMemsetAsync(p, 0xFF, bytes, s));
}

int rotation_sets(std::size_t working_set, std::size_t l2_bytes, int max_sets) {
  if (working_set == 0) return 1;
  const std::size_t want = (4 * l2_bytes + working_set - 1) / working_set;
  return static_cast<int>(std::clamp<std::size_t>(want, 1, static_cast<std::size_t>(max_sets)));
}

double max_rel_err(const std::vector<double>& out, const std::vector<double>& ref) {
  double max_ref = 0, max_err = 0;
  for (std::size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    if (!std::isfinite(out[i])) return INFINITY;
    max_ref = std::max(max_ref, std::fabs(ref[i]));
    max_err = std::max(max_err, std::fabs(out[i] - ref[i]));
  }
  return max_ref > 0 ? max_err / max_ref : max_err;
}

Json check_json(double err, double tol, const std::string& reference) {
  Json c = Json::object();
  c["max_rel_err"] = std::isfinite(err) ? Json(err) : Json("inf");
  c["tolerance"] = tol;
  c["passed"] = std::isfinite(err) && err <= tol;
  c["reference"] = reference;
  return c;
}

Json make_record(const std::string& id, const std::string& suite, const std::string& op,
                 Json params) {
  Json r = Json::object();
  r["id"] = id;
  r["suite"] = suite;
  r["op"] = op;
  r["params"] = std::move(params);
  return r;
}

Json kernel_json(const std::string& name, const void* func, dim3 grid, dim3 block,
                 std::size_t dynamic_smem) {
  cudaFuncAttributes a{};
  RIDGE_CUDA(cudaFuncGetAttributes(&a, func));
  int blocks = 0;
  RIDGE_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks, func, static_cast<int>(block.x * block.y * block.z), dynamic_smem));
  Json k = Json::object();
  k["name"] = name;
  Json g = Json::array();
  g.push_back(grid.x);
  g.push_back(grid.y);
  g.push_back(grid.z);
  k["grid"] = g;
  Json b = Json::array();
  b.push_back(block.x);
  b.push_back(block.y);
  b.push_back(block.z);
  k["block"] = b;
  k["registers_per_thread"] = a.numRegs;
  k["static_shared_bytes"] = static_cast<unsigned long long>(a.sharedSizeBytes);
  k["dynamic_shared_bytes"] = static_cast<unsigned long long>(dynamic_smem);
  k["shared_bytes"] = static_cast<unsigned long long>(a.sharedSizeBytes + dynamic_smem);
  k["local_bytes_per_thread"] = static_cast<unsigned long long>(a.localSizeBytes);
  k["blocks_per_sm"] = blocks;
  return k;
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string human_bytes(std::size_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && b >= 1024 && b % 1024 == 0) {
    b /= 1024;
    ++u;
  }
  return std::to_string(b) + " " + units[u];
}

}  // namespace ridge::validate
