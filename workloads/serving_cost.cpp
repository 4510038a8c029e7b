#include "workloads/serving_cost.hpp"

#include <algorithm>
#include <cmath>

#include "hw/model_params.hpp"
#include "models/op.hpp"
#include "workloads/executor.hpp"
#include "workloads/transformer.hpp"

namespace ridge::workloads {

namespace {

models::OpSpec gemm(long long m, long long n, long long k) {
  return models::OpSpec::from_json("gemm", {{"m", m}, {"n", n}, {"k", k}, {"dtype", "bf16"}});
}

long long grid_for(double bytes) {
  return std::clamp<long long>(static_cast<long long>(bytes / 4096.0) + 1, 1, 1LL << 31);
}

// A one-pass kernel moving the given bytes (vLLM's fused custom ops: rotary_embedding,
// reshape_and_cache_flash, silu_and_mul, sampling).
models::OpSpec pass(double read, double written, double flops) {
  return models::OpSpec::from_json("custom", {{"grid", grid_for(read + written)},
                                              {"block", 256},
                                              {"bytes_read", read},
                                              {"bytes_written", written},
                                              {"flops_fp32", flops}});
}

models::OpSpec norm(long long rows, long long cols) {
  return models::OpSpec::from_json("layernorm",
                                   {{"rows", rows}, {"cols", cols}, {"dtype", "bf16"}});
}

constexpr int kPerLayerKernels = 10;  // see the header: norm, qkv, rope, cache, attn, o, ...
constexpr int kOuterKernels = 4;      // embedding, final norm, LM head, sampling

enum Component : std::uint64_t {
  kDense = 1,
  kHead = 2,
  kPrefillAttn = 3,
  kDecodeAttn = 4,
  kHfPrefill = 5,
  kHfDecode = 6,
  kHfDecodeGraph = 7,
  kHfPrefillGraph = 8
};

std::uint64_t key(Component c, long long a, long long b) {
  return (std::uint64_t(c) << 60) | (std::uint64_t(a) << 30) | std::uint64_t(b);
}

}  // namespace

std::vector<long long> vllm_capture_sizes(long long max_num_seqs) {
  // vllm/config/compilation.py set_cudagraph_sizes (docstring): max_graph_size =
  // min(max_num_seqs * 2, 512); [1, 2, 4] + range(8, 256, 8) + range(256, max_graph_size + 1, 16).
  const long long max_size = std::min<long long>(max_num_seqs * 2, 512);
  std::vector<long long> s;
  for (long long v : {1, 2, 4})
    if (v <= max_size) s.push_back(v);
  for (long long v = 8; v < 256 && v <= max_size; v += 8) s.push_back(v);
  for (long long v = 256; v <= max_size; v += 16) s.push_back(v);
  return s;
}

long long bucket_count(long long n) {
  if (n <= 64) return n;
  const double k = std::ceil(64.0 * std::log2(static_cast<double>(n)) - 1e-9);
  return std::max(n, static_cast<long long>(std::ceil(std::exp2(k / 64.0) - 1e-9)));
}

RankHeads rank_heads(const TransformerConfig& m, int tp) {
  RankHeads h;
  h.q = std::max<long long>(1, m.heads / tp);
  h.kv = std::max<long long>(1, m.kv_heads / tp);
  return h;
}

IterationCostModel::IterationCostModel(const TransformerConfig& m, const hw::GpuSpec& gpu,
                                       EngineCost e, TimingMode mode)
    : m_(m), gpu_(gpu), e_(std::move(e)), mode_(mode), base_gpu_(gpu) {
  base_cpu_overhead_s_ = e_.cpu_overhead_s;
  base_build_decode_s_ = e_.sdpa_new_shape_decode_s;
  base_build_prefill_s_ = e_.sdpa_new_shape_prefill_s;
  const int per_layer = kPerLayerKernels - (m_.position == "rope" ? 0 : 1);
  kernels_ = static_cast<long long>(m_.layers) * per_layer + kOuterKernels;
  if (e_.tp > 1) {
    if (!e_.tp_collective_s)
      throw std::invalid_argument("serving: tp > 1 without the collectives' times");
    kernels_ += 2LL * m_.layers + 2;  // two all-reduces per layer, the embedding's, the gather
  }
  gap_s_ = gpu_.param("kernel_gap");
  graph_gap_s_ = gpu_.param("graph_kernel_gap");
  std::sort(e_.capture_sizes.begin(), e_.capture_sizes.end());
  seen_.insert(e_.sdpa_seen_shapes.begin(), e_.sdpa_seen_shapes.end());
  if (!e_.host_probe_trace.empty()) {
    level_us_ = std::llround(e_.host_probe_trace.front().second * 1e6);
    apply_probe(double(level_us_) * 1e-6);
  } else {
    apply_probe(e_.host_probe_s);
  }
}

void IterationCostModel::apply_probe(double probe_s) {
  gpu_ = base_gpu_;
  e_.cpu_overhead_s = base_cpu_overhead_s_;
  e_.sdpa_new_shape_decode_s = base_build_decode_s_;
  e_.sdpa_new_shape_prefill_s = base_build_prefill_s_;
  probe_ratio_ = 1;
  host_speed_ = 1;
  if (probe_s > 0) {
    // A host time T at probe ratio r: T x (1 - share + share x r), written 1 + share x (r - 1)
    // so that r = 1 gives exactly 1 (EngineCost::host_probe_s).
    probe_ratio_ = probe_s / base_gpu_.param("host_probe_us");
    const auto factor = [r = probe_ratio_](double share) { return 1 + share * (r - 1); };
    host_speed_ = factor(e_.host_probe_share);
    // Every host time the executor reads, at the probe's host speed (the factors and sizes among
    // the host_* parameters are not times).
    for (const auto& d : hw::model_param_table()) {
      const std::string_view n = d.name;
      const bool host_time =
          (n.starts_with("host_") && d.dim == hw::Dimension::kTime && n != "host_probe_us") ||
          n == "graph_launch_per_kernel";
      if (host_time) gpu_.model[std::string(n)] = base_gpu_.param(std::string(n)) * host_speed_;
    }
    e_.cpu_overhead_s *= probe_ratio_;  // the loop's own CPU probe and Python bookkeeping
    const double build = factor(e_.sdpa_build_probe_share);
    e_.sdpa_new_shape_decode_s *= build;
    e_.sdpa_new_shape_prefill_s *= build;
  }
  host_launch_s_ = gpu_.param("host_launch_cuda");
  graph_host_s_ = gpu_.param("graph_launch_per_kernel");
}

void IterationCostModel::at_time(double t) {
  const auto& tr = e_.host_probe_trace;
  if (tr.empty()) return;
  // The last sample at or before t (the first before the trace begins), to 1 us.
  auto it =
      std::upper_bound(tr.begin(), tr.end(), t,
                       [](double x, const std::pair<double, double>& s) { return x < s.first; });
  if (it != tr.begin()) --it;
  const long long us = std::llround(it->second * 1e6);
  if (us == level_us_) return;
  // Park this speed's memo and take the new speed's (kept from an earlier visit, or empty): the
  // attention shapes seen so far belong to the process and stay.
  parked_[level_us_] = std::move(memo_);
  memo_.clear();
  const auto p = parked_.find(us);
  if (p != parked_.end()) memo_ = std::move(p->second);
  level_us_ = us;
  apply_probe(double(us) * 1e-6);
}

double IterationCostModel::new_shape_s(long long batch, long long q_len, long long kv_len) {
  if (!seen_.insert({batch, q_len, kv_len}).second) return 0;
  return q_len == 1 ? e_.sdpa_new_shape_decode_s : e_.sdpa_new_shape_prefill_s;
}

double IterationCostModel::memo(std::uint64_t k,
                                double (IterationCostModel::*f)(long long, long long), long long a,
                                long long b) {
  auto it = memo_.find(k);
  if (it != memo_.end()) return it->second;
  const double t = (this->*f)(a, b);
  memo_.emplace(k, t);
  return t;
}

double IterationCostModel::optime(const models::OpSpec& op) {
  // Unmemoized: every shape this model times is memoized once, by number, in memo_.
  return op_time(gpu_, op, mode_);
}

double IterationCostModel::dense_s(long long T) {
  const int tp = e_.tp;
  const RankHeads h = rank_heads(m_, tp);
  const long long d = m_.d_model;
  const long long q = h.q * m_.head_dim;
  const long long kv = h.kv * m_.head_dim;
  const long long ffn = m_.ffn / tp;
  const double Td = double(T);
  double t = 0;
  t += 2 * optime(norm(T, d));  // fused add + norm, twice per layer
  t += optime(gemm(T, q + 2 * kv, d));
  if (m_.position == "rope") t += optime(pass(2.0 * Td * (q + kv), 2.0 * Td * (q + kv), 0));
  t += optime(pass(4.0 * Td * kv, 4.0 * Td * kv, 0));  // K and V rows into the paged cache
  t += optime(gemm(T, d, q));
  const long long up = m_.gated_mlp ? 2 * ffn : ffn;
  t += optime(gemm(T, up, d));
  t += optime(pass(2.0 * Td * up, 2.0 * Td * ffn, 4.0 * Td * ffn));  // activation
  t += optime(gemm(T, d, ffn));
  const double allreduce = tp > 1 ? e_.tp_collective_s(2.0 * Td * double(d), false) : 0.0;
  t += 2 * allreduce;  // after O and after down
  t *= m_.layers;
  // Token embedding gather: reads and writes T rows (vocabulary-parallel: then an all-reduce).
  t += optime(pass(2.0 * Td * d + 8.0 * Td, 2.0 * Td * d, 0)) + allreduce;
  return t;
}

double IterationCostModel::head_s(long long rows) {
  const double R = double(rows);
  double t = optime(norm(rows, m_.d_model));
  t += optime(gemm(rows, m_.vocab / e_.tp, m_.d_model));
  // The ranks' logit slices (bf16) gathered to the first rank, which samples over the vocabulary.
  if (e_.tp > 1) t += e_.tp_collective_s(2.0 * R * double(m_.vocab), true);
  // Sampling: reads the logits once (greedy / top-k reduce), writes one token per row.
  t += optime(pass(2.0 * R * m_.vocab, 8.0 * R, R * m_.vocab));
  return t;
}

double IterationCostModel::prefill_attn_s(long long qlen, long long ctx) {
  const RankHeads h = rank_heads(m_, e_.tp);
  const auto op = models::OpSpec::from_json("attention", {{"batch", 1},
                                                          {"heads", h.q},
                                                          {"kv_heads", h.kv},
                                                          {"seq_q", qlen},
                                                          {"seq_kv", ctx + qlen},
                                                          {"head_dim", m_.head_dim},
                                                          {"causal", true}});
  return m_.layers * optime(op);
}

double IterationCostModel::decode_attn_s(long long n, long long mean_ctx) {
  const RankHeads h = rank_heads(m_, e_.tp);
  const auto op = models::OpSpec::from_json("attention", {{"batch", n},
                                                          {"heads", h.q},
                                                          {"kv_heads", h.kv},
                                                          {"seq_q", 1},
                                                          {"seq_kv", mean_ctx + 1},
                                                          {"head_dim", m_.head_dim},
                                                          {"causal", false}});
  return m_.layers * optime(op);
}

IterationParts IterationCostModel::time(const BatchShape& b) {
  return compute(b, e_.bucketing);
}
IterationParts IterationCostModel::exact(const BatchShape& b) {
  return compute(b, false);
}

// Ridge's HF-style prefill (batch x prompt) or decode step (batch rows against `context` cached
// tokens), eager or replayed from a CUDA graph, through the executor.
double IterationCostModel::hf_step_s(long long batch, long long prompt, long long context,
                                     bool graph) {
  InferenceOptions o;
  o.batch = batch;
  o.cuda_graph = graph;
  const bool prefill = prompt > 0;
  if (prefill) {
    o.prompt = prompt;
    o.max_len = prompt;
  } else {
    o.context = context;
    o.max_len = context + 1;
  }
  ExecOptions x;
  x.mode = mode_;
  return execute(prefill ? build_prefill(m_, o) : build_decode_step(m_, o), gpu_, x).step_time_s;
}

double IterationCostModel::hf_prefill_s(long long batch, long long prompt) {
  return hf_step_s(batch, std::max<long long>(prompt, 1), 0, false);
}
double IterationCostModel::hf_decode_s(long long batch, long long context) {
  return hf_step_s(batch, 0, context, false);
}
double IterationCostModel::hf_decode_graph_s(long long batch, long long kv_len) {
  return hf_step_s(batch, 0, kv_len - 1, true);
}
double IterationCostModel::hf_prefill_graph_s(long long batch, long long prompt) {
  return hf_step_s(batch, std::max<long long>(prompt, 1), 0, true);
}

IterationParts IterationCostModel::compute_hf(const BatchShape& b, bool bucketed) {
  const auto bk = [bucketed](long long n) { return bucketed ? bucket_count(n) : n; };
  IterationParts p;
  double t = 0;
  bool uniform = !b.prefills.empty();
  for (const auto& c : b.prefills)
    uniform = uniform && c.context == 0 && c.tokens == b.prefills.front().tokens;
  if (uniform && e_.hf_graph && b.decodes == 0) {
    // A captured prefill (exact shape, no build).
    const long long n = static_cast<long long>(b.prefills.size());
    t += memo(key(kHfPrefillGraph, n, b.prefills.front().tokens),
              &IterationCostModel::hf_prefill_graph_s, n, b.prefills.front().tokens);
    p.graph = true;
  } else if (uniform) {
    const long long n = static_cast<long long>(b.prefills.size());
    const long long q = bk(b.prefills.front().tokens);
    t += memo(key(kHfPrefill, n, q), &IterationCostModel::hf_prefill_s, n, q);
    p.host_s += new_shape_s(n, b.prefills.front().tokens, b.prefills.front().tokens);
  } else {
    for (const auto& c : b.prefills) {
      // A chunk after cached context is timed as a prompt of the chunk plus its context.
      const long long q = bk(c.tokens + c.context);
      t += memo(key(kHfPrefill, 1, q), &IterationCostModel::hf_prefill_s, 1, q);
      p.host_s += new_shape_s(1, c.tokens + c.context, c.tokens + c.context);
    }
  }
  const bool graph = e_.hf_graph && b.prefills.empty() && b.decodes > 0 &&
                     !e_.capture_sizes.empty() && b.decodes <= e_.capture_sizes.back();
  if (graph) {
    // The captured graph of (padded batch, window): exact shapes, no timing buckets; no build.
    const long long n =
        *std::lower_bound(e_.capture_sizes.begin(), e_.capture_sizes.end(), b.decodes);
    const long long w = std::max<long long>(1, e_.graph_kv_window);
    const long long kv = (std::max<long long>(1, b.decode_context_max) + 1 + w - 1) / w * w;
    t += memo(key(kHfDecodeGraph, n, kv), &IterationCostModel::hf_decode_graph_s, n, kv);
    p.gpu_s = t;
    p.cpu_s = e_.cpu_overhead_s;
    p.total_s = p.cpu_s + t;
    p.padded_decodes = n;
    p.graph = true;
    return p;
  }
  if (b.decodes > 0) {
    const long long ctx = bk(std::max<long long>(1, b.decode_context_max));
    t += memo(key(kHfDecode, b.decodes, ctx), &IterationCostModel::hf_decode_s, b.decodes, ctx);
    // The step's SDPA reads kv_len = the longest context + the new token (exact: the cache is
    // keyed on the exact shape, not on Ridge's timing buckets).
    p.host_s += new_shape_s(b.decodes, 1, std::max<long long>(1, b.decode_context_max) + 1);
  }
  p.gpu_s = t;  // the executor's step time: host and device together
  p.cpu_s = e_.cpu_overhead_s;
  p.total_s = p.cpu_s + t + p.host_s;  // host_s: SDPA graph builds (the GPU waits for them)
  p.padded_decodes = b.decodes;
  return p;
}

IterationParts IterationCostModel::compute(const BatchShape& b, bool bucketed) {
  if (e_.hf_eager) return compute_hf(b, bucketed);
  const auto bk = [bucketed](long long n) { return bucketed ? bucket_count(n) : n; };
  IterationParts p;
  long long tokens = 0, rows = 0;
  for (const auto& c : b.prefills) {
    tokens += c.tokens;
    if (c.samples) ++rows;
  }
  long long decodes = b.decodes;
  p.graph = e_.cuda_graph && b.prefills.empty() && decodes > 0 && !e_.capture_sizes.empty() &&
            decodes <= e_.capture_sizes.back();
  if (p.graph)
    decodes = *std::lower_bound(e_.capture_sizes.begin(), e_.capture_sizes.end(), decodes);
  p.padded_decodes = decodes;
  tokens += decodes;
  rows += decodes;
  if (tokens == 0) return p;
  double gpu = 0;
  // Dense layers and the LM head are timed at their exact row counts (bounded by the token budget
  // and the sequence limit, so the memo stays small): their GEMMs' wave quantization makes their
  // times step-like, and rounding a row count across a step changes them by up to 20%.
  gpu += memo(key(kDense, tokens, 0), &IterationCostModel::dense2, tokens, 0);
  if (rows > 0) gpu += memo(key(kHead, rows, 0), &IterationCostModel::head2, rows, 0);
  for (const auto& c : b.prefills) {
    const long long q = bk(c.tokens), ctx = c.context == 0 ? 0 : bk(c.context);
    gpu += memo(key(kPrefillAttn, q, ctx), &IterationCostModel::prefill_attn_s, q, ctx);
  }
  if (b.decodes > 0) {
    // Padding rows of a graph carry no context: the real decodes' KV bytes are what is read.
    const long long n = b.decodes;
    const long long mean = (b.decode_context_sum + b.decodes / 2) / b.decodes;
    const long long ctx = bk(std::max<long long>(mean, 1));
    gpu += memo(key(kDecodeAttn, n, ctx), &IterationCostModel::decode_attn_s, n, ctx);
  }
  const long long k = kernels_ + m_.layers * (static_cast<long long>(b.prefills.size()) +
                                              (b.decodes > 0 ? 1 : 0) - 1);
  // (k: the fixed kernels, with one attention kernel per layer per prefill chunk and one per
  // layer for all decodes, in place of the one attention the fixed count holds.)
  gpu += static_cast<double>(k) * (p.graph ? graph_gap_s_ : gap_s_);
  p.gpu_s = gpu;
  p.host_s = p.graph ? host_launch_s_ + static_cast<double>(k) * graph_host_s_
                     : static_cast<double>(k) * host_launch_s_;
  p.cpu_s = e_.cpu_overhead_s;
  p.total_s = p.cpu_s + std::max(p.host_s, p.gpu_s);
  return p;
}

}  // namespace ridge::workloads
