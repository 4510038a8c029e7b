#include "workloads/analysis.hpp"

#include "hw/limits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "models/op_cost.hpp"
#include "models/roofline.hpp"
#include "workloads/op_timer.hpp"

namespace ridge::workloads {

CriticalPath critical_path(const Graph& g, const Execution& ex) {
  CriticalPath cp;
  cp.on_path.assign(g.size(), 0);
  if (g.size() == 0) return cp;
  int cur = 0;
  for (std::size_t i = 0; i < ex.ops.size(); ++i)
    if (ex.ops[i].end_s >= ex.ops[static_cast<std::size_t>(cur)].end_s) cur = static_cast<int>(i);
  cp.total_s = ex.step_time_s;
  auto is_host = [&](int id) {
    const NodeKind k = g.op(id).kind;
    return k == NodeKind::kHost || k == NodeKind::kSync;
  };
  bool host = is_host(cur);
  double t = ex.step_time_s;
  std::vector<CriticalSegment> rev;
  auto gap_to = [&](double t_end) {
    if (t - t_end > 0) rev.push_back({-1, false, t_end, t, "idle"});
    t = std::min(t, t_end);
  };
  for (std::size_t guard = 0; guard < 4 * g.size() + 8 && cur >= 0; ++guard) {
    const OpRecord& r = ex.ops[static_cast<std::size_t>(cur)];
    const OpNode& n = g.op(cur);
    if (!host) {
      gap_to(r.end_s);
      if (r.end_s > r.start_s)
        rev.push_back({cur, false, r.start_s, r.end_s, std::string(category_name(n.category))});
      cp.on_path[static_cast<std::size_t>(cur)] = 1;
      t = std::min(t, r.start_s);
      switch (r.device_binder) {
        case Binder::kHostIssue:
          host = true;
          break;
        case Binder::kStream:
        case Binder::kData:
        case Binder::kEngine:
          cur = r.device_binder_op;
          break;
        default:
          cur = -1;
      }
    } else {
      gap_to(r.issue_s);
      if (r.issue_s > r.host_begin_s)
        rev.push_back({cur, true, r.host_begin_s, r.issue_s,
                       n.kind == NodeKind::kHost ? "host" : "host_launch"});
      cp.on_path[static_cast<std::size_t>(cur)] = 1;
      t = std::min(t, r.host_begin_s);
      switch (r.host_binder) {
        case Binder::kHostPrev:
          cur = r.host_binder_op, host = true;
          break;
        case Binder::kSync:
          cur = r.host_binder_op, host = false;
          break;
        default:
          cur = -1;
      }
    }
  }
  gap_to(0.0);
  std::reverse(rev.begin(), rev.end());
  cp.segments = std::move(rev);
  for (const auto& s : cp.segments) cp.by_class_s[s.cls] += s.t1_s - s.t0_s;
  return cp;
}

std::map<std::string, double> summed_by_category(const Graph& g, const Execution& ex) {
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < g.size(); ++i)
    out[std::string(category_name(g.op(static_cast<int>(i)).category))] += ex.ops[i].duration_s;
  return out;
}

namespace {
const char* kGpuFigures[] = {"hbm_bandwidth", "l2_bandwidth", "tensor",
                             "clock",         "sm_count",     "host_launch"};
const char* kKinds[] = {"gemm",    "attention", "elementwise", "layernorm",
                        "rmsnorm", "softmax",   "embedding",   "cross_entropy",
                        "adamw",   "conv2d",    "custom",      "copy"};
}  // namespace

WhatIf parse_what_if(const std::string& text) {
  const auto star = text.find('*');
  WhatIf w;
  w.text = text;
  auto valid = [] {
    std::string v;
    for (Category c : kAllCategories) v += std::string(category_name(c)) + ", ";
    for (const char* k : kKinds) v += std::string(k) + ", ";
    for (const char* k : kGpuFigures) v += std::string(k) + ", ";
    return v.substr(0, v.size() - 2);
  };
  if (star == std::string::npos)
    throw std::invalid_argument(
        fmt::format("what-if '{}': expected NAME*FACTOR, e.g. attention*2", text));
  w.target = text.substr(0, star);
  try {
    std::size_t used = 0;
    w.factor = std::stod(text.substr(star + 1), &used);
    if (used != text.size() - star - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("what-if '{}': factor is not a number", text));
  }
  if (!(w.factor >= hw::kMinWhatIfFactor && w.factor <= hw::kMaxWhatIfFactor))
    throw std::invalid_argument(fmt::format("what-if '{}': factor must be in [{}, {}]", text,
                                            hw::kMinWhatIfFactor, hw::kMaxWhatIfFactor));
  for (const char* k : kGpuFigures)
    if (w.target == k) w.gpu_figure = true;
  Category c;
  bool known = w.gpu_figure || parse_category(w.target, c);
  for (const char* k : kKinds) known = known || w.target == k;
  if (!known)
    throw std::invalid_argument(
        fmt::format("what-if '{}': unknown target '{}' (valid: {})", text, w.target, valid()));
  return w;
}

hw::GpuSpec scaled_gpu(const hw::GpuSpec& gpu, const WhatIf& w) {
  hw::GpuSpec g = gpu;
  const double s = w.factor;
  auto scale_rates = [&](std::map<hw::Precision, double>& m) {
    for (auto& [p, v] : m) v *= s;
  };
  if (w.target == "hbm_bandwidth") g.memory.hbm_bandwidth *= s;
  if (w.target == "l2_bandwidth") g.memory.l2_bandwidth *= s;
  if (w.target == "tensor")
    scale_rates(g.compute.tensor_dense), scale_rates(g.compute.tensor_sparse);
  if (w.target == "clock" || w.target == "sm_count") {
    // Chip-wide rates are per-SM rate x SMs x clock: both scale them (L2 bandwidth too).
    if (w.target == "clock")
      g.clocks.boost_hz *= s;
    else
      g.sm.count = static_cast<int>(std::lround(g.sm.count * s));
    if (g.sm.count < 1)
      throw std::invalid_argument(fmt::format("what-if '{}': leaves {} with no SM ({} x {})",
                                              w.text, gpu.name, gpu.sm.count, s));
    scale_rates(g.compute.tensor_dense), scale_rates(g.compute.tensor_sparse),
        scale_rates(g.compute.vector);
    g.compute.special_function *= s;
    g.memory.l2_bandwidth *= s;
  }
  if (w.target == "host_launch") {
    // Every host cost: the bare launch, graph replay, and (through host_python_scale, which
    // multiplies them all) every eager and autograd cost.
    for (const char* k : {"host_launch_cuda", "graph_launch_per_kernel", "host_python_scale",
                          "host_autograd_forward", "host_autograd_kernel", "host_optimizer_base",
                          "host_optimizer_tensor"})
      g.model[k] = gpu.param(k) / s;
  }
  return g;
}

ExecOptions what_if_options(const ExecOptions& base, const WhatIf& w) {
  ExecOptions o = base;
  Category c;
  if (parse_category(w.target, c))
    o.category_speedup[c] = w.factor;
  else if (!w.gpu_figure)
    o.kind_speedup[w.target] = w.factor;
  return o;
}

WhatIfResult run_what_if(const Graph& g, const hw::GpuSpec& gpu, const ExecOptions& o,
                         const Execution& base, const WhatIf& w) {
  WhatIfResult r;
  r.what_if = w;
  r.baseline_s = base.step_time_s;
  const hw::GpuSpec g2 = w.gpu_figure ? scaled_gpu(gpu, w) : gpu;
  const Execution ex = execute(g, g2, what_if_options(o, w));
  r.step_s = ex.step_time_s;
  r.simulated_speedup = r.baseline_s / r.step_s;
  // f: the class's summed durations in the baseline.
  double sum = 0;
  Category c;
  const bool is_cat = !w.gpu_figure && parse_category(w.target, c);
  // One bound per distinct op: in detailed mode each is a simulation, and a 96-layer step repeats
  // the same few shapes thousands of times (GPT-3's detailed study spent minutes here).
  std::unordered_map<std::string, std::string> bounds;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const OpNode& n = g.op(static_cast<int>(i));
    const double d = base.ops[i].duration_s;
    if (n.kind == NodeKind::kSync || n.kind == NodeKind::kWait) continue;
    const bool gpu_op = n.kind == NodeKind::kKernel || n.kind == NodeKind::kCopy;
    if (is_cat) {
      if (n.category == c) sum += d;
    } else if (!w.gpu_figure) {
      if (gpu_op && n.op.kind() == w.target) sum += d;
    } else if (w.target == "host_launch") {
      if (n.kind != NodeKind::kHost) sum += base.ops[i].issue_s - base.ops[i].host_begin_s;
    } else if (gpu_op && n.kind == NodeKind::kKernel && n.fixed_time_s == 0) {
      std::string key = n.op.kind() + ' ' + n.op.params().dump();
      auto it = bounds.find(key);
      if (it == bounds.end())
        it = bounds.emplace(std::move(key), op_bound(gpu, n.op, o.mode)).first;
      const std::string& b = it->second;
      const bool mem = b.find("memory") != std::string::npos || b.find("hbm") != std::string::npos;
      if (w.target == "hbm_bandwidth" && mem) sum += d;
      if (w.target == "l2_bandwidth" && b.find("l2") != std::string::npos) sum += d;
      if (w.target == "tensor" && !mem && models::op_cost(n.op).tensor) sum += d;
      if (w.target == "clock" || w.target == "sm_count") sum += d;
    }
  }
  r.fraction = std::min(1.0, base.step_time_s > 0 ? sum / base.step_time_s : 0.0);
  r.amdahl_speedup = 1.0 / ((1.0 - r.fraction) + r.fraction / w.factor);
  // A step that moves against the what-if (hbm_bandwidth*1.5 slower) is explained by what changed:
  // the kernels chosen for the changed GPU (a split-K plan adds a reduction kernel, which costs the
  // host a launch), or the host and GPU time.
  const bool better = w.factor > 1;
  if ((better && r.simulated_speedup < 1 - 1e-9) || (!better && r.simulated_speedup > 1 + 1e-9)) {
    const auto ms = [](double s) { return fmt::format("{:.3f} ms", s * 1e3); };
    r.note = fmt::format(
        "{} although {} is {}: kernels launched {} -> {}, host busy {} -> {}, GPU busy {} -> "
        "{}{}",
        r.simulated_speedup < 1 ? "slower" : "faster", w.target, better ? "better" : "worse",
        base.kernels, ex.kernels, ms(base.host_busy_s), ms(ex.host_busy_s), ms(base.gpu_busy_s),
        ms(ex.gpu_busy_s),
        ex.kernels != base.kernels
            ? " (the kernel plans chosen for the changed GPU launch a different number of "
              "kernels, and each launch costs host time)"
            : "");
  } else if (std::fabs(r.simulated_speedup - 1) < 1e-12) {
    // An option that changes nothing says so (attention*2 on a host-bound decode: hidden).
    r.note = w.gpu_figure ? fmt::format(
                                "changes nothing here: no op on the critical path is bound "
                                "by {}",
                                w.target)
                          : fmt::format(
                                "changes nothing here: the {} ops are off the critical "
                                "path",
                                w.target);
  }
  return r;
}

// ---- memory ----

double layer_activation_bytes(const TransformerConfig& m, long long b, long long s, Recompute r) {
  const double sbh = double(s) * b * m.d_model;
  if (r == Recompute::kFull) return 2.0 * sbh;  // the layer input only
  const double h = double(m.d_model), f = double(m.ffn), kv = double(m.kv_heads) / m.heads;
  // Korthikanti et al. 2022, Table 2 terms (bytes per sbh), 16-bit activations, dropout masks kept:
  // attention 11 = QKV input 2 + Q,K 4 + V 2 + projection input 2 + dropout mask 1, with K and V
  // scaled by kv_heads/heads for GQA: 7 + 4 kv/h ; MLP 19 = input 2 + fc1 out 8 + act out 8 + mask
  // 1, i.e. 3 + 4 ffn/h, and a gated MLP keeps gate, up, act and product: 3 + 8 ffn/h ; norms 4.
  // The 5as/h term (scores, softmax, its dropout) is absent: FlashAttention stores none of them.
  const double attn = 7.0 + 4.0 * kv;
  const double mlp = m.gated_mlp ? 3.0 + 8.0 * f / h : 3.0 + 4.0 * f / h;
  return sbh * (attn + mlp + 4.0);
}

namespace {
void finish(MemoryReport& r, double hbm) {
  r.capacity_bytes = hbm;
  r.peak_bytes = 0;
  for (const auto& i : r.items) r.peak_bytes += i.bytes;
  r.fits = r.peak_bytes <= hbm;
  r.over_bytes = std::max(0.0, r.peak_bytes - hbm);
}
constexpr double kWorkspace = 64.0 * 1024 * 1024;  // cuBLAS(Lt) workspace and allocator slack
}  // namespace

MemoryReport train_memory(const TransformerConfig& m, const TrainOptions& o, PrecisionScheme p,
                          double hbm) {
  MemoryReport r;
  const double P = double(m.parameter_count());
  if (p == PrecisionScheme::kMixed) {
    r.items.push_back({"weights", 2 * P, "bf16"});
    r.items.push_back({"gradients", 2 * P, "bf16"});
    r.items.push_back({"optimizer state", 8 * P, "Adam m and v, fp32"});
    r.items.push_back({"master weights", 4 * P, "fp32"});
  } else {
    r.items.push_back({"weights", 2 * P, "bf16 casts autocast keeps for backward"});
    r.items.push_back({"gradients", 4 * P, "fp32 (the parameters' dtype)"});
    r.items.push_back({"optimizer state", 8 * P, "Adam m and v, fp32"});
    r.items.push_back({"master weights", 4 * P, "fp32 parameters"});
  }
  const double per_layer = layer_activation_bytes(m, o.micro_batch, o.seq, o.recompute);
  double act = per_layer * m.layers;
  std::string note = fmt::format(
      "{} layers x {:.3g} GB (Korthikanti 2022 sbh(34+5as/h) generalised; flash: no 5as/h)",
      m.layers, per_layer / 1e9);
  if (o.recompute == Recompute::kFull) {
    act += layer_activation_bytes(m, o.micro_batch, o.seq, Recompute::kNone);
    note = "full recompute: 2sbh per layer + one layer's activations";
  }
  r.items.push_back({"activations", act, note});
  const double T = double(o.micro_batch) * o.seq;
  r.items.push_back(
      {"logits and loss", T * m.vocab * (2 + 4 + 4), "bf16 logits, fp32 copy and its gradient"});
  r.items.push_back({"workspace", kWorkspace, "cuBLAS workspace, allocator slack"});
  finish(r, hbm);
  if (!r.fits) {
    const double state = r.items[0].bytes + r.items[1].bytes + r.items[2].bytes + r.items[3].bytes;
    const double rest = r.peak_bytes - state;
    if (o.recompute != Recompute::kFull) {
      const double saved =
          act - (layer_activation_bytes(m, o.micro_batch, o.seq, Recompute::kFull) * m.layers +
                 layer_activation_bytes(m, o.micro_batch, o.seq, Recompute::kNone));
      r.suggestions.push_back(fmt::format("full activation recomputation saves {:.1f} GB{}",
                                          saved / 1e9,
                                          r.peak_bytes - saved <= hbm ? " (enough)" : ""));
    }
    if (o.micro_batch > 1)
      r.suggestions.push_back(
          fmt::format("micro-batch 1 (with gradient accumulation {}) cuts activations {}x",
                      o.grad_accum * o.micro_batch, o.micro_batch));
    if (rest < hbm) {
      const int n = static_cast<int>(std::ceil(state / (hbm - rest)));
      r.suggestions.push_back(
          fmt::format("ZeRO-3 / FSDP sharding of weights, gradients and optimizer state ({:.0f} "
                      "GB) over {} GPUs",
                      state / 1e9, n));
    } else {
      r.suggestions.push_back(
          "activations alone exceed one GPU: shard them too (tensor/sequence/pipeline "
          "parallelism)");
    }
    r.suggestions.push_back(
        fmt::format("offloading optimizer state and master weights to host memory frees {:.0f} GB "
                    "(PCIe-bound optimizer step)",
                    (r.items[2].bytes + r.items[3].bytes) / 1e9));
  }
  return r;
}

MemoryReport inference_memory(const TransformerConfig& m, const InferenceOptions& o, double hbm) {
  MemoryReport r;
  const double P = double(m.parameter_count());
  r.items.push_back({"weights", 2 * P, "bf16"});
  const double kv = 2.0 * m.layers * o.batch * m.kv_heads * double(o.max_len) * m.head_dim * 2;
  r.items.push_back(
      {"KV cache", kv,
       fmt::format("static, {} positions, {} KV heads, bf16", o.max_len, m.kv_heads)});
  const double T = double(o.batch) * std::max<long long>(1, o.prompt);
  r.items.push_back({"activations",
                     T * (2.0 * m.d_model * 4 + 4.0 * m.ffn) + o.batch * m.vocab * 2.0,
                     "transient: a layer's largest live tensors and the logits"});
  r.items.push_back({"workspace", kWorkspace, "cuBLAS workspace, allocator slack"});
  finish(r, hbm);
  if (!r.fits) {
    r.suggestions.push_back(
        fmt::format("tensor parallelism over {} GPUs (weights and KV cache split)",
                    static_cast<int>(std::ceil(r.peak_bytes / hbm))));
    r.suggestions.push_back(
        "fp8 weights halve the weight bytes; a paged KV cache keeps only used positions");
  }
  return r;
}

MemoryReport diffusion_memory(const DiffusionConfig& m, double hbm) {
  MemoryReport r;
  const auto& t = m.text;
  const auto& x = m.denoiser;
  const double text_p =
      double(t.vocab) * t.d_model +
      t.layers * (4.0 * t.d_model * t.d_model + (t.gated_mlp ? 3 : 2) * double(t.d_model) * t.ffn);
  const double dit_p =
      x.layers *
      (4.0 * x.d_model * x.d_model + 2.0 * x.d_model * x.ffn + 6.0 * x.d_model * x.d_model +
       (x.cross_attention ? 2.0 * x.d_model * x.d_model + 2.0 * x.d_model * t.d_model : 0.0));
  double vae_p = 9.0 * m.vae.temporal_kernel * m.vae.latent_channels * m.vae.conv_in;
  for (auto [a, b] : m.vae.stages)
    vae_p += 9.0 * m.vae.temporal_kernel * (double(a) * b + double(b) * b);
  r.items.push_back({"weights", 2 * (text_p + dit_p + vae_p),
                     fmt::format("bf16: text {:.2f}B, denoiser {:.2f}B, VAE {:.3f}B params",
                                 text_p / 1e9, dit_p / 1e9, vae_p / 1e9)});
  const double BN = double(x.cfg_batch) * x.tokens();
  r.items.push_back(
      {"denoiser activations", BN * (x.d_model * 8.0 + x.ffn * 4.0), "transient, one block"});
  double big = 0;
  long long h = x.latent_height, w = x.latent_width;
  for (auto [a, b] : m.vae.stages) {
    h *= 2, w *= 2;
    big = std::max(big, double(m.output_frames()) * h * w * (a + 2.0 * b) * 2);
  }
  r.items.push_back(
      {"VAE activations", big, "largest stage: upsampled input and two feature maps, bf16"});
  r.items.push_back({"workspace", kWorkspace, "cuBLAS/cuDNN workspace, allocator slack"});
  finish(r, hbm);
  if (!r.fits)
    r.suggestions.push_back(
        "decode the VAE in temporal or spatial tiles; offload the text encoder after use");
  return r;
}

std::vector<RooflinePoint> roofline_points(const Graph& g, const hw::GpuSpec& gpu,
                                           const Execution& ex) {
  std::vector<RooflinePoint> out;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const OpNode& n = g.op(static_cast<int>(i));
    if (n.kind != NodeKind::kKernel || n.fixed_time_s > 0) continue;
    const models::Roofline rl = models::roofline(gpu, models::op_cost(n.op));
    RooflinePoint p;
    p.op = static_cast<int>(i);
    p.flops = rl.flops;
    p.bytes = rl.bytes;
    p.intensity = rl.intensity;
    p.attainable = rl.attainable_flops;
    p.time_s = ex.ops[i].duration_s;
    p.bound = rl.compute_bound ? "compute" : "memory";
    out.push_back(p);
  }
  return out;
}

// A what-if on a category or op kind the workload does not have would report a 1.00x speedup that
// means nothing (communication*2 on one GPU): an error naming what the workload does have.
void require_what_if_target(const WhatIf& w, const Graph& g, const std::string& label) {
  Category c;
  const bool is_cat = parse_category(w.target, c);
  std::set<std::string> have;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const OpNode& n = g.op(static_cast<int>(i));
    if (is_cat ? n.category == c : n.op.kind() == w.target) return;
    if (n.kind == NodeKind::kKernel || n.kind == NodeKind::kCopy) {
      have.insert(std::string(category_name(n.category)));
      if (!n.op.kind().empty()) have.insert(n.op.kind());
    }
  }
  throw std::invalid_argument(
      fmt::format("what-if '{}': the '{}' workload has no {} op (it has: {})", w.text, label,
                  w.target, fmt::join(have, ", ")));
}

}  // namespace ridge::workloads
