// ridge-nccl-bench: NCCL collectives over sizes, one process driving every visible GPU
// (ncclCommInitAll), writing records in the ridge.records/1 schema (validate/README.md).
//   ridge-nccl-bench --out FILE.json [--algo Ring|Tree|...] [--proto LL|LL128|Simple]
//                    [--ngpus N] [--min-bytes 8] [--max-bytes 8589934592] [--step 4]
//                    [--ops allreduce,allgather,reducescatter,alltoall,broadcast,sendrecv]
//                    [--quick]
// Sizes and bandwidths follow nccl-tests: `bytes` is the larger per-rank buffer (allgather's
// output, reducescatter's input), algbw = bytes / time (GB = 1e9 B), busbw = algbw * factor with
// factor 2(n-1)/n (allreduce), (n-1)/n (allgather, reducescatter, alltoall), 1 (broadcast,
// sendrecv). NVLink SHARP (multicast) stays off: NCCL_NVLS_ENABLE=0 is forced.
#include <nccl.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"

using namespace ridge::validate;

namespace {

#define RIDGE_NCCL(expr)                                                                  \
  do {                                                                                    \
    ncclResult_t r_ = (expr);                                                             \
    if (r_ != ncclSuccess) {                                                              \
      throw BenchError(std::string(#expr) + " failed: " + ncclGetErrorString(r_) + " (" + \
                       ncclGetLastError(nullptr) + ")");                                  \
    }                                                                                     \
  } while (0)

// Value of element i on rank r: small integers, exact in fp32 sums of up to 2^20 ranks.
__host__ __device__ inline float value(int r, std::size_t i) {
  return static_cast<float>(r + 1 + static_cast<int>(i % 7));
}

__global__ void fill_rank(float* p, std::size_t n, int r) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    p[i] = value(r, i);
  }
}

struct Rank {
  int device;
  ncclComm_t comm;
  cudaStream_t stream;
  float* send;
  float* recv;
  std::vector<cudaEvent_t> ev;
};

// Element type of ncclSend/ncclRecv (sendrecv, alltoall): fp32 (default) or bytes
// (--p2p-dtype uint8), kept as a diagnostic.
bool g_p2p_bytes = false;

void p2p_send(const float* buf, std::size_t count, int peer, Rank& k) {
  if (g_p2p_bytes) {
    RIDGE_NCCL(ncclSend(buf, count * 4, ncclUint8, peer, k.comm, k.stream));
  } else {
    RIDGE_NCCL(ncclSend(buf, count, ncclFloat, peer, k.comm, k.stream));
  }
}

void p2p_recv(float* buf, std::size_t count, int peer, Rank& k) {
  if (g_p2p_bytes) {
    RIDGE_NCCL(ncclRecv(buf, count * 4, ncclUint8, peer, k.comm, k.stream));
  } else {
    RIDGE_NCCL(ncclRecv(buf, count, ncclFloat, peer, k.comm, k.stream));
  }
}

const char* kOps[] = {"allreduce", "allgather", "reducescatter",
                      "alltoall",  "broadcast", "sendrecv"};

double bus_factor(const std::string& op, int n) {
  if (op == "allreduce") return 2.0 * (n - 1) / n;
  if (op == "allgather" || op == "reducescatter" || op == "alltoall") return (n - 1.0) / n;
  return 1.0;
}

/// Issues one collective on every rank (inside a group). `count` = elements of the larger buffer.
void issue(const std::string& op, std::vector<Rank>& ranks, std::size_t count) {
  const int n = static_cast<int>(ranks.size());
  const std::size_t chunk = count / n;
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    if (op == "allreduce") {
      RIDGE_NCCL(ncclAllReduce(k.send, k.recv, count, ncclFloat, ncclSum, k.comm, k.stream));
    } else if (op == "allgather") {
      RIDGE_NCCL(ncclAllGather(k.send, k.recv, chunk, ncclFloat, k.comm, k.stream));
    } else if (op == "reducescatter") {
      RIDGE_NCCL(ncclReduceScatter(k.send, k.recv, chunk, ncclFloat, ncclSum, k.comm, k.stream));
    } else if (op == "alltoall") {
      for (int p = 0; p < n; ++p) {
        p2p_send(k.send + p * chunk, chunk, p, k);
        p2p_recv(k.recv + p * chunk, chunk, p, k);
      }
    } else if (op == "broadcast") {
      RIDGE_NCCL(ncclBroadcast(k.send, k.recv, count, ncclFloat, 0, k.comm, k.stream));
    } else if (op == "sendrecv") {
      p2p_send(k.send, count, (r + 1) % n, k);
      p2p_recv(k.recv, count, (r - 1 + n) % n, k);
    }
  }
}

void run_op(const std::string& op, std::vector<Rank>& ranks, std::size_t count) {
  RIDGE_NCCL(ncclGroupStart());
  issue(op, ranks, count);
  RIDGE_NCCL(ncclGroupEnd());
}

/// Expected output element `i` of rank `r`.
float expected(const std::string& op, int r, int n, std::size_t count, std::size_t i) {
  const std::size_t chunk = count / n;
  if (op == "allreduce") {
    float s = 0;
    for (int q = 0; q < n; ++q) s += value(q, i);
    return s;
  }
  if (op == "allgather") return value(static_cast<int>(i / chunk), i % chunk);
  if (op == "reducescatter") {
    float s = 0;
    for (int q = 0; q < n; ++q) s += value(q, r * chunk + i);
    return s;
  }
  if (op == "alltoall") return value(static_cast<int>(i / chunk), r * chunk + i % chunk);
  if (op == "broadcast") return value(0, i);
  return value((r - 1 + n) % n, i);  // sendrecv
}

/// Output elements of rank r for `op` with `count`.
std::size_t out_count(const std::string& op, int n, std::size_t count) {
  return op == "reducescatter" ? count / n : count;
}

Json check(const std::string& op, std::vector<Rank>& ranks, std::size_t count) {
  const int n = static_cast<int>(ranks.size());
  for (auto& k : ranks) {
    RIDGE_CUDA(cudaSetDevice(k.device));
    RIDGE_CUDA(cudaMemsetAsync(k.recv, 0xFF, out_count(op, n, count) * 4, k.stream));
  }
  run_op(op, ranks, count);
  std::size_t bad = 0, checked = 0;
  Json mismatches = Json::array();  // [index, got, expected], the first few
  for (int r = 0; r < n; ++r) {
    Rank& k = ranks[r];
    RIDGE_CUDA(cudaSetDevice(k.device));
    RIDGE_CUDA(cudaStreamSynchronize(k.stream));
    const std::size_t m = out_count(op, n, count);
    // Everything up to 1 Mi elements; beyond, the first and last 4096 and 256 spread between.
    std::vector<std::pair<std::size_t, float>> got;
    if (m <= (1u << 20)) {
      std::vector<float> host(m);
      RIDGE_CUDA(cudaMemcpy(host.data(), k.recv, m * 4, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < m; ++i) got.push_back({i, host[i]});
    } else {
      std::vector<float> head(4096), tail(4096);
      RIDGE_CUDA(cudaMemcpy(head.data(), k.recv, 4096 * 4, cudaMemcpyDeviceToHost));
      RIDGE_CUDA(cudaMemcpy(tail.data(), k.recv + (m - 4096), 4096 * 4, cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < 4096; ++i) {
        got.push_back({i, head[i]});
        got.push_back({m - 4096 + i, tail[i]});
      }
      for (std::size_t t = 0; t < 256; ++t) {
        const std::size_t i = (t * 2654435761ull) % m;
        float v = 0;
        RIDGE_CUDA(cudaMemcpy(&v, k.recv + i, 4, cudaMemcpyDeviceToHost));
        got.push_back({i, v});
      }
    }
    for (const auto& [i, v] : got) {
      ++checked;
      const float e = expected(op, r, n, count, i);
      if (v != e) {
        if (bad < 8) {
          Json m = Json::array();
          m.push_back(static_cast<unsigned long long>(i));
          m.push_back(v);
          m.push_back(e);
          mismatches.push_back(m);
        }
        ++bad;
      }
    }
  }
  Json c = Json::object();
  c["checked_elements"] = static_cast<unsigned long long>(checked);
  c["wrong_elements"] = static_cast<unsigned long long>(bad);
  c["max_rel_err"] = bad ? 1.0 : 0.0;
  c["passed"] = bad == 0;
  if (bad) {
    c["mismatches"] = mismatches;
    // Was it only late? Read the first mismatch again after a whole-device synchronisation.
    RIDGE_CUDA(cudaSetDevice(ranks[0].device));
    RIDGE_CUDA(cudaDeviceSynchronize());
    const auto i0 = static_cast<std::size_t>(mismatches.at(0).at(0).number());
    float again = 0;
    RIDGE_CUDA(cudaMemcpy(&again, ranks[0].recv + i0, 4, cudaMemcpyDeviceToHost));
    c["first_mismatch_after_device_sync"] = again;
  }
  c["reference"] = "exact small-integer values on the host";
  return c;
}

double nccl_estimate_us(const std::string& op, std::vector<Rank>& ranks, std::size_t count) {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 22, 0)
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  RIDGE_NCCL(ncclGroupStart());
  issue(op, ranks, count);
  RIDGE_NCCL(ncclGroupSimulateEnd(&sim));
  return sim.estimatedTime;
#else
  (void)op;
  (void)ranks;
  (void)count;
  return NAN;
#endif
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t a = 0;
  while (a <= s.size()) {
    std::size_t b = s.find(',', a);
    if (b == std::string::npos) b = s.size();
    if (b > a) out.push_back(s.substr(a, b - a));
    a = b + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string command, out, algo, proto, ops_arg;
  int ngpus = 0, step = 4;
  bool quick = false;
  std::size_t min_bytes = 8, max_bytes = 8ull << 30;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto val = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ridge-nccl-bench: %s needs a value\n", a.c_str());
        std::exit(64);
      }
      return argv[++i];
    };
    if (a == "--out")
      out = val();
    else if (a == "--algo")
      algo = val();
    else if (a == "--proto")
      proto = val();
    else if (a == "--ngpus")
      ngpus = std::atoi(val().c_str());
    else if (a == "--min-bytes")
      min_bytes = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--max-bytes")
      max_bytes = std::strtoull(val().c_str(), nullptr, 10);
    else if (a == "--step")
      step = std::atoi(val().c_str());
    else if (a == "--ops")
      ops_arg = val();
    else if (a == "--quick")
      quick = true;
    else if (a == "--p2p-dtype") {
      const std::string v = val();
      if (v != "fp32" && v != "uint8") {
        std::fprintf(stderr, "ridge-nccl-bench: --p2p-dtype is fp32 or uint8\n");
        return 64;
      }
      g_p2p_bytes = v == "uint8";
    } else {
      std::fprintf(stderr, "ridge-nccl-bench: unknown argument '%s'\n", a.c_str());
      return 64;
    }
  }
  // Multicast (NVLS) can take a shared host's GPUs out of service: always off.
  setenv("NCCL_NVLS_ENABLE", "0", 1);
  setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
  if (!algo.empty()) setenv("NCCL_ALGO", algo.c_str(), 1);
  if (!proto.empty()) setenv("NCCL_PROTO", proto.c_str(), 1);
  if (quick) max_bytes = std::min<std::size_t>(max_bytes, 64ull << 20);
  std::vector<std::string> ops =
      ops_arg.empty() ? std::vector<std::string>(std::begin(kOps), std::end(kOps)) : split(ops_arg);
  Json records = Json::array();
  std::vector<std::string> failures;
  Json device = Json::object();
  try {
    int visible = 0;
    RIDGE_CUDA(cudaGetDeviceCount(&visible));
    const int n = ngpus > 0 ? std::min(ngpus, visible) : visible;
    std::vector<Rank> ranks(n);
    std::vector<int> devs(n);
    for (int r = 0; r < n; ++r) devs[r] = r;
    std::vector<ncclComm_t> comms(n);
    RIDGE_NCCL(ncclCommInitAll(comms.data(), n, devs.data()));
    int ver = 0;
    RIDGE_NCCL(ncclGetVersion(&ver));
    const int major = ver / 10000 >= 2 && ver >= 10000 ? ver / 10000 : ver / 1000;
    const int minor = ver >= 10000 ? (ver / 100) % 100 : (ver / 100) % 10;
    const int patch = ver % 100;
    cudaDeviceProp prop{};
    RIDGE_CUDA(cudaGetDeviceProperties(&prop, 0));
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    device["name"] = prop.name;
    device["sm_count"] = prop.multiProcessorCount;
    device["cc"] = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    std::string dv = nvml_driver_version();
    device["driver"] = dv.empty() ? std::to_string(drv) : dv;
    device["cuda_runtime"] = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
    device["nccl"] =
        std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
    device["nccl_header"] = std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." +
                            std::to_string(NCCL_PATCH);
    device["gpus"] = n;
    Clocks c = read_clocks(0);
    Json cj = Json::object();
    cj["sm_mhz"] = c.sm_mhz;
    cj["mem_mhz"] = c.mem_mhz;
    cj["sm_max_mhz"] = c.sm_max_mhz;
    device["clocks"] = cj;
    device["env"] = Json::object();
    for (const char* e : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_NVLS_ENABLE", "NCCL_DEBUG"}) {
      const char* v = std::getenv(e);
      device["env"][e] = v ? Json(v) : Json();
    }

    // Buffers: the largest size that fits with room to spare.
    std::size_t free_b = 0, total_b = 0;
    RIDGE_CUDA(cudaSetDevice(0));
    RIDGE_CUDA(cudaMemGetInfo(&free_b, &total_b));
    max_bytes = std::min<std::size_t>(max_bytes, (free_b - (4ull << 30)) / 2);
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[r];
      k.device = r;
      k.comm = comms[r];
      RIDGE_CUDA(cudaSetDevice(r));
      RIDGE_CUDA(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
      RIDGE_CUDA(cudaMalloc(&k.send, max_bytes));
      RIDGE_CUDA(cudaMalloc(&k.recv, max_bytes));
      fill_rank<<<1024, 256, 0, k.stream>>>(k.send, max_bytes / 4, r);
      RIDGE_CUDA(cudaGetLastError());
      k.ev.resize(201);
      for (auto& e : k.ev) RIDGE_CUDA(cudaEventCreate(&e));
    }
    for (auto& k : ranks) {
      RIDGE_CUDA(cudaSetDevice(k.device));
      RIDGE_CUDA(cudaStreamSynchronize(k.stream));
    }
    const std::string algo_name = algo.empty() ? "default" : algo;
    const std::string proto_name = proto.empty() ? "default" : proto;
    for (const std::string& op : ops) {
      for (std::size_t bytes = min_bytes; bytes <= max_bytes; bytes *= step) {
        std::size_t count = bytes / 4;
        count -= count % n;
        if (count == 0) continue;
        const std::string id =
            op + "/" + algo_name + "/" + proto_name + "/" + std::to_string(bytes);
        try {
          Json chk = check(op, ranks, count);
          // Probe, then warm up and time back to back, one event pair per repetition per rank.
          auto time_batch = [&](int reps) {
            for (auto& k : ranks) {
              RIDGE_CUDA(cudaSetDevice(k.device));
              RIDGE_CUDA(cudaEventRecord(k.ev[0], k.stream));
            }
            for (int i = 0; i < reps; ++i) {
              run_op(op, ranks, count);
              for (auto& k : ranks) {
                RIDGE_CUDA(cudaSetDevice(k.device));
                RIDGE_CUDA(cudaEventRecord(k.ev[i + 1], k.stream));
              }
            }
            std::vector<double> us(reps, 0.0);
            for (auto& k : ranks) {
              RIDGE_CUDA(cudaSetDevice(k.device));
              RIDGE_CUDA(cudaStreamSynchronize(k.stream));
              for (int i = 0; i < reps; ++i) {
                float ms = 0;
                RIDGE_CUDA(cudaEventElapsedTime(&ms, k.ev[i], k.ev[i + 1]));
                us[i] = std::max(us[i], ms * 1000.0);  // the slowest rank
              }
            }
            return us;
          };
          auto probe = time_batch(3);
          std::sort(probe.begin(), probe.end());
          const double per_us = std::max(probe[1], 1.0);
          const double target_us = quick ? 10000.0 : 25000.0;
          const int reps = std::clamp(static_cast<int>(target_us / per_us), 5, 200);
          const int warm = std::clamp(static_cast<int>(5000.0 / per_us), 2, 20);
          time_batch(warm);
          Timing t = timing_from(time_batch(reps), "kernel", warm + 3);
          // NCCL's own estimate, after the timing so that nothing it leaves behind can touch the
          // measured operations (the next size's check would show it). Not for send/recv: with
          // NCCL 2.28.3 a simulated group of ncclSend/ncclRecv stays queued and pairs with the
          // next real one (seen on the H200: every later self send/recv delivered the previous,
          // 4x smaller, message).
          double est = NAN;
          if (op != "sendrecv" && op != "alltoall") {
            try {
              est = nccl_estimate_us(op, ranks, count);
            } catch (const std::exception& e) {
              std::fprintf(stderr, "  %s: no NCCL estimate: %s\n", id.c_str(), e.what());
            }
          }
          Json p = Json::object();
          p["bytes"] = static_cast<unsigned long long>(count * 4);
          p["nranks"] = n;
          p["algo"] = algo_name;
          p["proto"] = proto_name;
          const bool p2p = op == "sendrecv" || op == "alltoall";
          p["dtype"] = p2p && g_p2p_bytes ? "uint8" : "fp32";
          Json rec = make_record(id, "collectives", op, p);
          rec["timing"] = t.to_json();
          const double algbw = count * 4.0 / (t.median_us * 1e-6) / 1e9;
          rec["bytes"] = static_cast<unsigned long long>(count * 4);
          rec["algbw_gbps"] = algbw;
          rec["busbw_gbps"] = algbw * bus_factor(op, n);
          // NCCL gives no estimate (-1) where it does not tune, e.g. for a single rank.
          rec["nccl_estimate_us"] = std::isfinite(est) && est >= 0 ? Json(est) : Json();
          rec["check"] = chk;
          std::fprintf(stderr, "  %-44s %10.2f us algbw %8.2f GB/s est %.2f us %s\n", id.c_str(),
                       t.median_us, algbw, est, chk["passed"].dump().c_str());
          records.push_back(rec);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "FAILED %s: %s\n", id.c_str(), e.what());
          failures.push_back(id + ": " + e.what());
          cudaGetLastError();
        }
      }
    }
    for (auto& k : ranks) {
      RIDGE_CUDA(cudaSetDevice(k.device));
      cudaFree(k.send);
      cudaFree(k.recv);
      for (auto& e : k.ev) cudaEventDestroy(e);
      ncclCommDestroy(k.comm);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ridge-nccl-bench: %s\n", e.what());
    failures.push_back(e.what());
  }
  if (!out.empty()) {
    Json doc = Json::object();
    doc["schema"] = "ridge.records/1";
    Json gen = Json::object();
    gen["tool"] = "ridge-nccl-bench";
    gen["version"] = RIDGE_VALIDATE_VERSION;
    gen["command"] = command;
    gen["date"] = utc_now_iso();
    doc["generated_by"] = gen;
    doc["device"] = device;
    doc["failures"] = Json::array_of(failures);
    doc["records"] = records;
    try {
      write_records_file(out, doc);
      std::fprintf(stderr, "wrote %zu records to %s\n", records.size(), out.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ridge-nccl-bench: %s\n", e.what());
      return 1;
    }
  }
  return failures.empty() ? 0 : 3;
}
