// Host staging-copy probe of own-set3 (issue 18 point 6): how fast this host copies between a
// pageable buffer and a pinned one, the copy the CUDA driver makes for every pageable
// cudaMemcpy. Run right before and right after ridge-bench's cases in the same device call; its
// rates are the model's host_staging_rate_* (hw/model_params.cpp) for the pageable copy cases.
//
//   host_probe [OUT.json]      (nvcc -O2 -o host_probe host_probe.cu)
//
// d2h: memcpy pinned -> pageable, 64 MiB (the staging copy of a device-to-host copy);
// h2d: memcpy pageable -> pinned, 64 MiB, the source rotated over 4 buffers (256 MiB: out of the
//      host's last-level cache, as the uncached part of a host-to-device copy's source);
// h2d_cached: memcpy pageable -> pinned, 8 MiB, the same source repeated (in the host's caches);
// memcpy: plain pageable -> pageable, 64 MiB (the host's memcpy rate, for the record).
// Each: 3 warm-ups, then the median of 15 timed copies (steady_clock). Rates in GB/s (1e9 B/s).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double median_rate(std::size_t bytes, int reps, void (*copy)(int, void*), void* ctx) {
  std::vector<double> gbs;
  for (int r = 0; r < reps + 3; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    copy(r, ctx);
    const auto t1 = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(t1 - t0).count();
    if (r >= 3) gbs.push_back(static_cast<double>(bytes) / s / 1e9);
  }
  std::sort(gbs.begin(), gbs.end());
  return gbs[gbs.size() / 2];
}

struct Bufs {
  char* pinned;
  char* src[4];
  char* dst;
  std::size_t big, small;
};

}  // namespace

int main(int argc, char** argv) {
  const std::size_t kBig = 64u << 20, kSmall = 8u << 20;
  Bufs b{};
  b.big = kBig;
  b.small = kSmall;
  // Without a GPU (a dry run) the "pinned" buffer is plain malloc memory, and the output says so.
  const bool pinned =
      cudaHostAlloc(reinterpret_cast<void**>(&b.pinned), kBig, cudaHostAllocDefault) == cudaSuccess;
  if (!pinned) {
    std::fprintf(stderr, "host_probe: cudaHostAlloc of %zu bytes failed: malloc instead\n", kBig);
    b.pinned = static_cast<char*>(std::malloc(kBig));
    if (!b.pinned) return 1;
  }
  for (auto& s : b.src) {
    s = static_cast<char*>(std::malloc(kBig));
    if (!s) return 1;
    std::memset(s, 1, kBig);  // fault every page in before timing
  }
  b.dst = static_cast<char*>(std::malloc(kBig));
  if (!b.dst) return 1;
  std::memset(b.dst, 2, kBig);
  std::memset(b.pinned, 3, kBig);

  const double d2h = median_rate(
      kBig, 15,
      [](int, void* c) {
        auto* x = static_cast<Bufs*>(c);
        std::memcpy(x->dst, x->pinned, x->big);
      },
      &b);
  const double h2d = median_rate(
      kBig, 15,
      [](int r, void* c) {
        auto* x = static_cast<Bufs*>(c);
        std::memcpy(x->pinned, x->src[r % 4], x->big);
      },
      &b);
  const double h2d_cached = median_rate(
      kSmall, 15,
      [](int, void* c) {
        auto* x = static_cast<Bufs*>(c);
        std::memcpy(x->pinned, x->src[0], x->small);
      },
      &b);
  const double plain = median_rate(
      kBig, 15,
      [](int r, void* c) {
        auto* x = static_cast<Bufs*>(c);
        std::memcpy(x->dst, x->src[r % 4], x->big);
      },
      &b);
  char out[512];
  std::snprintf(out, sizeof out,
                "{\"schema\": \"ridge.host_probe/1\", \"d2h_gbs\": %.4f, \"h2d_gbs\": %.4f, "
                "\"h2d_cached_gbs\": %.4f, \"memcpy_gbs\": %.4f, \"pinned\": %s}\n",
                d2h, h2d, h2d_cached, plain, pinned ? "true" : "false");
  std::fputs(out, stdout);
  if (argc > 1) {
    FILE* f = std::fopen(argv[1], "w");
    if (!f) return 1;
    std::fputs(out, f);
    std::fclose(f);
  }
  if (pinned) {
    cudaFreeHost(b.pinned);
  } else {
    std::free(b.pinned);
  }
  for (auto& s : b.src) std::free(s);
  std::free(b.dst);
  return 0;
}
