// A tiled flash-style attention forward (part of suite "kernels"): bf16 Q, K, V, O in
// [batch, heads, seq, head_dim] layout, fp32 accumulation and online softmax, GQA (kv_heads
// dividing heads), causal masking aligned bottom-right (query i sees keys j <= i + seq_kv - seq_q).
// A reference kernel on the tensor cores through WMMA (HMMA, not Hopper's wgmma): 64 query rows
// per block of 4 warps, 64-key tiles in shared memory; it is not FlashAttention's speed.
#include <mma.h>

#include <cmath>
#include <cstdio>

#include "kernels_common.cuh"
#include "suites.hpp"

namespace ridge::validate {
namespace {

using bf16 = __nv_bfloat16;
namespace wmma = nvcuda::wmma;

constexpr int kM = 64;  // query rows per block (16 per warp)
constexpr int kN = 64;  // keys per tile
constexpr int kThreads = 128;

template <int D>
struct Layout {
  static constexpr int kLdQ = D + 8;   // bf16 elements, Q/K/V tiles (padding against conflicts)
  static constexpr int kLdS = kN + 4;  // fp32 scores
  static constexpr int kLdP = kN + 8;  // bf16 probabilities
  static constexpr int kLdO = D + 4;   // fp32 output accumulator
  static constexpr std::size_t q_off = 0;
  static constexpr std::size_t k_off = q_off + kM * kLdQ * 2;
  static constexpr std::size_t v_off = k_off + kN * kLdQ * 2;
  static constexpr std::size_t s_off = v_off + kN * kLdQ * 2;
  static constexpr std::size_t p_off = s_off + kM * kLdS * 4;
  static constexpr std::size_t o_off = p_off + kM * kLdP * 2;
  static constexpr std::size_t ml_off = o_off + kM * kLdO * 4;
  static constexpr std::size_t bytes = ml_off + 3 * kM * 4;
  static_assert(k_off % 32 == 0 && s_off % 32 == 0 && p_off % 32 == 0 && o_off % 32 == 0,
                "WMMA needs 256-bit aligned tiles");
};

template <int D, bool CAUSAL>
__global__ void __launch_bounds__(kThreads)
    attention_fwd_kernel(const bf16* __restrict__ Q, const bf16* __restrict__ K,
                         const bf16* __restrict__ V, bf16* __restrict__ O, int H, int KVH, int Sq,
                         int Skv, float scale_log2) {
  using L = Layout<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  bf16* qs = reinterpret_cast<bf16*>(smem + L::q_off);
  bf16* ks = reinterpret_cast<bf16*>(smem + L::k_off);
  bf16* vs = reinterpret_cast<bf16*>(smem + L::v_off);
  float* ss = reinterpret_cast<float*>(smem + L::s_off);
  bf16* ps = reinterpret_cast<bf16*>(smem + L::p_off);
  float* os = reinterpret_cast<float*>(smem + L::o_off);
  float* m_s = reinterpret_cast<float*>(smem + L::ml_off);
  float* l_s = m_s + kM;
  float* a_s = l_s + kM;

  const int q0 = blockIdx.x * kM;
  const int h = blockIdx.y;
  const int b = blockIdx.z;
  const int kvh = h / (H / KVH);
  const bf16* Qp = Q + static_cast<std::size_t>(b * H + h) * Sq * D;
  const bf16* Kp = K + static_cast<std::size_t>(b * KVH + kvh) * Skv * D;
  const bf16* Vp = V + static_cast<std::size_t>(b * KVH + kvh) * Skv * D;
  bf16* Op = O + static_cast<std::size_t>(b * H + h) * Sq * D;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  constexpr int kVpr = D / 8;  // 16-byte vectors per row

  for (int i = tid; i < kM * kVpr; i += kThreads) {
    const int r = i / kVpr, c = i % kVpr;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (q0 + r < Sq)
      v = reinterpret_cast<const uint4*>(Qp + static_cast<std::size_t>(q0 + r) * D)[c];
    *reinterpret_cast<uint4*>(qs + r * L::kLdQ + c * 8) = v;
  }
  for (int i = tid; i < kM * D; i += kThreads) os[(i / D) * L::kLdO + i % D] = 0.0f;
  if (tid < kM) {
    m_s[tid] = -INFINITY;
    l_s[tid] = 0.0f;
  }
  const int diag = Skv - Sq;
  int kv_end = Skv;
  if (CAUSAL) kv_end = max(0, min(Skv, q0 + kM + diag));

  for (int n0 = 0; n0 < kv_end; n0 += kN) {
    __syncthreads();  // the previous tile's K and V are no longer read
    for (int i = tid; i < kN * kVpr; i += kThreads) {
      const int r = i / kVpr, c = i % kVpr;
      uint4 kv = make_uint4(0, 0, 0, 0), vv = make_uint4(0, 0, 0, 0);
      if (n0 + r < Skv) {
        kv = reinterpret_cast<const uint4*>(Kp + static_cast<std::size_t>(n0 + r) * D)[c];
        vv = reinterpret_cast<const uint4*>(Vp + static_cast<std::size_t>(n0 + r) * D)[c];
      }
      *reinterpret_cast<uint4*>(ks + r * L::kLdQ + c * 8) = kv;
      *reinterpret_cast<uint4*>(vs + r * L::kLdQ + c * 8) = vv;
    }
    __syncthreads();

    // S (16 x 64 per warp) = Q K^T.
#pragma unroll
    for (int j = 0; j < kN / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::fill_fragment(acc, 0.0f);
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> fb;
        wmma::load_matrix_sync(fa, qs + (warp * 16) * L::kLdQ + kk * 16, L::kLdQ);
        wmma::load_matrix_sync(fb, ks + (j * 16) * L::kLdQ + kk * 16, L::kLdQ);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(ss + (warp * 16) * L::kLdS + j * 16, acc, L::kLdS,
                              wmma::mem_row_major);
    }
    __syncwarp();

    // Online softmax, one row at a time across the warp (lane owns columns lane and lane+32).
    for (int r = 0; r < 16; ++r) {
      const int row = warp * 16 + r;
      const int qi = q0 + row;
      float s0 = ss[row * L::kLdS + lane] * scale_log2;
      float s1 = ss[row * L::kLdS + lane + 32] * scale_log2;
      const int c0 = n0 + lane, c1 = n0 + lane + 32;
      if (c0 >= Skv || (CAUSAL && c0 > qi + diag)) s0 = -INFINITY;
      if (c1 >= Skv || (CAUSAL && c1 > qi + diag)) s1 = -INFINITY;
      const float mx = warp_max(fmaxf(s0, s1));
      const float m_old = m_s[row];
      const float m_new = fmaxf(m_old, mx);
      const float base = m_new == -INFINITY ? 0.0f : m_new;
      const float p0 = exp2f(s0 - base), p1 = exp2f(s1 - base);
      const float sum = warp_sum(p0 + p1);
      const float alpha = exp2f(m_old - base);
      ps[row * L::kLdP + lane] = __float2bfloat16_rn(p0);
      ps[row * L::kLdP + lane + 32] = __float2bfloat16_rn(p1);
      __syncwarp();
      if (lane == 0) {
        m_s[row] = m_new;
        l_s[row] = l_s[row] * alpha + sum;
        a_s[row] = alpha;
      }
    }
    __syncwarp();
    for (int i = lane; i < 16 * D; i += 32) {
      const int r = warp * 16 + i / D;
      os[r * L::kLdO + i % D] *= a_s[r];
    }
    __syncwarp();

    // O (16 x D per warp) += P V.
#pragma unroll
    for (int j = 0; j < D / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
      wmma::load_matrix_sync(acc, os + (warp * 16) * L::kLdO + j * 16, L::kLdO,
                             wmma::mem_row_major);
#pragma unroll
      for (int kk = 0; kk < kN / 16; ++kk) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> fa;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::row_major> fb;
        wmma::load_matrix_sync(fa, ps + (warp * 16) * L::kLdP + kk * 16, L::kLdP);
        wmma::load_matrix_sync(fb, vs + (kk * 16) * L::kLdQ + j * 16, L::kLdQ);
        wmma::mma_sync(acc, fa, fb, acc);
      }
      wmma::store_matrix_sync(os + (warp * 16) * L::kLdO + j * 16, acc, L::kLdO,
                              wmma::mem_row_major);
    }
  }
  __syncthreads();
  for (int i = tid; i < kM * kVpr; i += kThreads) {
    const int r = i / kVpr, c = i % kVpr;
    if (q0 + r >= Sq) continue;
    const float l = l_s[r];
    const float inv = l > 0.0f ? 1.0f / l : 0.0f;
    uint4 out;
    bf16* e = reinterpret_cast<bf16*>(&out);
#pragma unroll
    for (int u = 0; u < 8; ++u) e[u] = __float2bfloat16_rn(os[r * L::kLdO + c * 8 + u] * inv);
    reinterpret_cast<uint4*>(Op + static_cast<std::size_t>(q0 + r) * D)[c] = out;
  }
}

struct AttnCase {
  int batch, heads, kv_heads, seq_q, seq_kv, head_dim;
  bool causal;
  const char* label;
};

const void* attn_kernel(int d, bool causal) {
  if (d == 64) {
    return causal ? (const void*)attention_fwd_kernel<64, true>
                  : (const void*)attention_fwd_kernel<64, false>;
  }
  return causal ? (const void*)attention_fwd_kernel<128, true>
                : (const void*)attention_fwd_kernel<128, false>;
}

std::size_t attn_smem(int d) {
  return d == 64 ? Layout<64>::bytes : Layout<128>::bytes;
}

void attn_launch(const AttnCase& c, cudaStream_t s, const void* q, const void* k, const void* v,
                 void* o) {
  const void* fn = attn_kernel(c.head_dim, c.causal);
  dim3 grid((c.seq_q + kM - 1) / kM, c.heads, c.batch);
  float scale_log2 =
      static_cast<float>(1.4426950408889634 / std::sqrt(static_cast<double>(c.head_dim)));
  int H = c.heads, KVH = c.kv_heads, Sq = c.seq_q, Skv = c.seq_kv;
  void* args[] = {&q, &k, &v, &o, &H, &KVH, &Sq, &Skv, &scale_log2};
  RIDGE_CUDA(cudaLaunchKernel(fn, grid, dim3(kThreads), args, attn_smem(c.head_dim), s));
}

double attn_flops(const AttnCase& c) {
  double pairs = 0;
  const long long diag = c.seq_kv - c.seq_q;
  for (long long i = 0; i < c.seq_q; ++i) {
    long long keys =
        c.causal ? std::min<long long>(c.seq_kv, std::max<long long>(0, i + 1 + diag)) : c.seq_kv;
    pairs += static_cast<double>(keys);
  }
  // QK^T and PV: 2 * head_dim multiply-adds each per (query, key) pair.
  return 4.0 * c.batch * c.heads * c.head_dim * pairs;
}

Json attn_check(Context& ctx, int d, bool causal) {
  const AttnCase c{1, 4, 2, 100, 130, d, causal, "check"};
  const std::size_t nq = static_cast<std::size_t>(c.batch) * c.heads * c.seq_q * d;
  const std::size_t nk = static_cast<std::size_t>(c.batch) * c.kv_heads * c.seq_kv * d;
  DeviceBuffer q(nq * 2), k(nk * 2), v(nk * 2), o(nq * 2);
  fill_uniform(q.get(), nq, Dtype::kBF16, 51, -1.f, 1.f, ctx.stream());
  fill_uniform(k.get(), nk, Dtype::kBF16, 52, -1.f, 1.f, ctx.stream());
  fill_uniform(v.get(), nk, Dtype::kBF16, 53, -1.f, 1.f, ctx.stream());
  poison(o.get(), nq * 2, ctx.stream());
  attn_launch(c, ctx.stream(), q.get(), k.get(), v.get(), o.get());
  RIDGE_CUDA(cudaStreamSynchronize(ctx.stream()));
  auto hq = to_host_double(q.get(), nq, Dtype::kBF16);
  auto hk = to_host_double(k.get(), nk, Dtype::kBF16);
  auto hv = to_host_double(v.get(), nk, Dtype::kBF16);
  auto ho = to_host_double(o.get(), nq, Dtype::kBF16);
  std::vector<double> ref(nq, 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const int group = c.heads / c.kv_heads;
  for (int h = 0; h < c.heads; ++h) {
    const int kh = h / group;
    for (int i = 0; i < c.seq_q; ++i) {
      std::vector<double> s(c.seq_kv, -INFINITY);
      double m = -INFINITY;
      for (int j = 0; j < c.seq_kv; ++j) {
        if (causal && j > i + (c.seq_kv - c.seq_q)) continue;
        double acc = 0;
        for (int t = 0; t < d; ++t) {
          acc += hq[(static_cast<std::size_t>(h) * c.seq_q + i) * d + t] *
                 hk[(static_cast<std::size_t>(kh) * c.seq_kv + j) * d + t];
        }
        s[j] = acc * scale;
        m = std::max(m, s[j]);
      }
      double l = 0;
      for (int j = 0; j < c.seq_kv; ++j) l += s[j] == -INFINITY ? 0 : std::exp(s[j] - m);
      for (int t = 0; t < d; ++t) {
        double acc = 0;
        for (int j = 0; j < c.seq_kv; ++j) {
          if (s[j] == -INFINITY) continue;
          acc += std::exp(s[j] - m) * hv[(static_cast<std::size_t>(kh) * c.seq_kv + j) * d + t];
        }
        ref[(static_cast<std::size_t>(h) * c.seq_q + i) * d + t] = l > 0 ? acc / l : 0;
      }
    }
  }
  return check_json(max_rel_err(ho, ref), 2e-2,
                    "float64 on host: batch 1, heads 4, kv_heads 2, seq_q 100, seq_kv 130");
}

}  // namespace

namespace {

void prepare_attention(Context& ctx, Json (&checks)[2][2]) {
  for (int d : {64, 128}) {
    for (bool causal : {false, true}) {
      RIDGE_CUDA(cudaFuncSetAttribute(attn_kernel(d, causal),
                                      cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(attn_smem(d))));
    }
  }
  for (int di = 0; di < 2; ++di) {
    for (int ci = 0; ci < 2; ++ci) {
      const std::string id =
          "attention/check/d" + std::to_string(di ? 128 : 64) + (ci ? "/causal" : "");
      ctx.run_case(id, [&] { checks[di][ci] = attn_check(ctx, di ? 128 : 64, ci == 1); });
    }
  }
}

void attention_case(Context& ctx, const AttnCase& c, const Json (&checks)[2][2]) {
  const std::string id = "attention/b" + std::to_string(c.batch) + "_h" + std::to_string(c.heads) +
                         "_kv" + std::to_string(c.kv_heads) + "_q" + std::to_string(c.seq_q) +
                         "_k" + std::to_string(c.seq_kv) + "_d" + std::to_string(c.head_dim) +
                         (c.causal ? "_causal" : "");
  ctx.run_case(id, [&] {
    const std::size_t nq = static_cast<std::size_t>(c.batch) * c.heads * c.seq_q * c.head_dim;
    const std::size_t nk = static_cast<std::size_t>(c.batch) * c.kv_heads * c.seq_kv * c.head_dim;
    const std::size_t set_bytes = (2 * nq + 2 * nk) * 2;
    const int sets = rotation_sets(set_bytes, ctx.l2_bytes(), 32);
    DeviceBuffer q(sets * nq * 2), k(sets * nk * 2), v(sets * nk * 2), o(sets * nq * 2);
    fill_uniform(q.get(), sets * nq, Dtype::kBF16, 61, -1.f, 1.f, ctx.stream());
    fill_uniform(k.get(), sets * nk, Dtype::kBF16, 62, -1.f, 1.f, ctx.stream());
    fill_uniform(v.get(), sets * nk, Dtype::kBF16, 63, -1.f, 1.f, ctx.stream());
    Timing t = ctx.time_kernel([&](int rep) {
      const std::size_t s = static_cast<std::size_t>(rep % sets);
      attn_launch(c, ctx.stream(), q.as<bf16>() + s * nq, k.as<bf16>() + s * nk,
                  v.as<bf16>() + s * nk, o.as<bf16>() + s * nq);
    });
    Json p = Json::object();
    p["batch"] = c.batch;
    p["heads"] = c.heads;
    p["kv_heads"] = c.kv_heads;
    p["seq_q"] = c.seq_q;
    p["seq_kv"] = c.seq_kv;
    p["head_dim"] = c.head_dim;
    p["causal"] = c.causal;
    p["dtype"] = "bf16";
    p["pass"] = "fwd";
    p["label"] = c.label;
    Json rec = make_record(id, "kernels", "attention", p);
    rec["timing"] = t.to_json();
    const double flops = attn_flops(c);
    rec["bytes"] = static_cast<double>(set_bytes);
    rec["flops"] = flops;
    rec["tflops"] = flops / (t.median_us * 1e-6) / 1e12;
    rec["buffers"] = sets;
    dim3 grid((c.seq_q + kM - 1) / kM, c.heads, c.batch);
    rec["kernel"] =
        kernel_json(std::string("attention_fwd_kernel<") + std::to_string(c.head_dim) +
                        (c.causal ? ",causal>" : ">"),
                    attn_kernel(c.head_dim, c.causal), grid, dim3(kThreads), attn_smem(c.head_dim));
    const Json& chk = checks[c.head_dim == 128 ? 1 : 0][c.causal ? 1 : 0];
    if (!chk.is_null()) rec["check"] = chk;
    std::fprintf(stderr, "  %-48s %10.1f us %8.1f TFLOP/s\n", id.c_str(), t.median_us,
                 flops / (t.median_us * 1e-6) / 1e12);
    ctx.add(std::move(rec));
  });
}

}  // namespace

void run_attention_case(Context& ctx, int batch, int heads, int kv_heads, int seq_q, int seq_kv,
                        int head_dim, bool causal, const std::string& label) {
  if ((head_dim != 64 && head_dim != 128) || kv_heads < 1 || heads % kv_heads != 0 || seq_q < 1 ||
      seq_kv < 1 || batch < 1) {
    throw BenchError("attention: head_dim 64|128, heads a multiple of kv_heads, sizes >= 1");
  }
  Json checks[2][2];
  prepare_attention(ctx, checks);
  attention_case(ctx,
                 AttnCase{batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal, label.c_str()},
                 checks);
}

void run_attention_cases(Context& ctx) {
  Json checks[2][2];
  prepare_attention(ctx, checks);
  std::vector<AttnCase> cases = {
      {1, 32, 8, 4096, 4096, 128, true, "llama3-8b prefill 4k"},
      {1, 32, 8, 4096, 4096, 128, false, "llama3-8b 4k non-causal"},
      {1, 32, 8, 8192, 8192, 128, true, "llama3-8b prefill 8k"},
      {4, 32, 8, 2048, 2048, 128, true, "llama3-8b batch 4 x 2k"},
      {2, 64, 8, 4096, 4096, 128, true, "llama-70b-like prefill 4k"},
      {1, 96, 96, 2048, 2048, 128, true, "gpt3-175b 2k"},
      {8, 32, 32, 1024, 1024, 128, false, "mha 1k"},
      {8, 16, 16, 2048, 2048, 64, true, "d64 causal 2k"},
      {16, 16, 16, 512, 512, 64, false, "d64 512"},
      {8, 32, 8, 16, 4096, 128, true, "chunk of 16 queries on 4k cache"},
      {32, 32, 8, 1, 4096, 128, false, "decode 1 query on 4k cache"},
      {64, 32, 8, 1, 1024, 128, false, "decode 1 query on 1k cache"},
  };
  if (ctx.quick()) cases = {{1, 32, 8, 2048, 2048, 128, true, "quick"}};
  for (const auto& c : cases) attention_case(ctx, c, checks);
}

}  // namespace ridge::validate
