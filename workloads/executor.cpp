#include "workloads/executor.hpp"

#include <deque>
#include <memory>

#include "sim/resource.hpp"
#include "sim/simulator.hpp"

namespace ridge::workloads {
namespace {

using sim::Time;

class Run {
 public:
  Run(const Graph& g, const hw::GpuSpec& gpu, const ExecOptions& o)
      : g_(g),
        gpu_(gpu),
        o_(o),
        timer_(gpu, o.mode),
        host_(sim_, "host", 1),
        compute_(sim_, "compute", 1),
        copy_(sim_, "copy", std::max(1, o.copy_engines)),
        comm_(sim_, "communication", 64) {
    const std::size_t n = g.size();
    rec_.resize(n);
    st_.resize(n);
    dependents_.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (int d : g.deps(static_cast<int>(i)))
        dependents_[static_cast<std::size_t>(d)].push_back(static_cast<int>(i));
      const int s = g.op(static_cast<int>(i)).stream;
      if (s >= static_cast<int>(streams_.size())) streams_.resize(static_cast<std::size_t>(s) + 1);
    }
    const double scale = gpu.param("host_python_scale");
    auto host = [&](const char* name) { return Time::from_seconds(gpu.param(name) * scale); };
    auto param = [&](const char* name) { return Time::from_seconds(gpu.param(name)); };
    launch_eager_ = host("host_launch_eager");
    eager_gemm_ = host("host_eager_gemm");
    eager_attention_ = host("host_eager_attention");
    eager_attention_causal_ = host("host_eager_attention_causal");
    eager_attention_gqa_ = host("host_eager_attention_gqa");
    eager_cast_ = host("host_eager_cast");
    eager_reduction_ = host("host_eager_reduction");
    eager_cat_ = host("host_eager_cat");
    eager_norm_ = host("host_eager_norm");
    eager_embedding_ = host("host_eager_embedding");
    eager_loss_ = host("host_eager_loss");
    eager_conv_ = host("host_eager_conv");
    eager_view_ = host("host_eager_view");
    eager_split_ = host("host_eager_split");
    autograd_forward_ = param("host_autograd_forward");
    autograd_kernel_ = param("host_autograd_kernel");
    optimizer_base_ = param("host_optimizer_base");
    optimizer_tensor_ = param("host_optimizer_tensor");
    launch_cuda_ = Time::from_seconds(gpu.param("host_launch_cuda"));
    graph_per_kernel_ = Time::from_seconds(gpu.param("graph_launch_per_kernel"));
    gap_ = Time::from_seconds(o.kernel_gap_s >= 0 ? o.kernel_gap_s : gpu.param("kernel_gap"));
    graph_saving_s_ = gpu.param("graph_kernel_saving");
  }

  Execution go() {
    sim_.schedule_at(Time::zero(), [this] { issue_next(); });
    sim_.run();
    Execution ex;
    ex.ops = std::move(rec_);
    for (const auto& r : ex.ops) ex.step_time_s = std::max(ex.step_time_s, r.end_s);
    ex.host_busy_s = host_busy_.seconds();
    ex.gpu_busy_s = gpu_busy_.seconds();
    ex.kernels = kernels_;
    return ex;
  }

 private:
  struct State {
    bool issued = false, started = false, ended = false;
    Time issue, end;
  };
  struct Stream {
    std::deque<int> queue;  // issued, not yet started
    int last = -1;          // last op started on it
    bool busy = false;
    bool waiting_retry = false;
  };

  const Graph& g_;
  const hw::GpuSpec& gpu_;
  const ExecOptions& o_;
  OpTimer timer_;
  sim::Simulator sim_;
  sim::Resource host_, compute_, copy_, comm_;
  std::vector<OpRecord> rec_;
  std::vector<State> st_;
  std::vector<std::vector<int>> dependents_;
  std::vector<Stream> streams_;
  Time launch_eager_, launch_cuda_, graph_per_kernel_, gap_;
  Time eager_gemm_, eager_attention_, eager_norm_, eager_embedding_, eager_loss_, eager_conv_;
  Time eager_attention_causal_, eager_attention_gqa_, eager_cast_, eager_reduction_, eager_cat_;
  Time autograd_kernel_, optimizer_base_, optimizer_tensor_, eager_view_, eager_split_;
  Time autograd_forward_;
  double graph_saving_s_ = 0;
  Time host_busy_, gpu_busy_;
  int next_ = 0;
  long long kernels_ = 0;
  int host_prev_ = -1;
  int outstanding_ = 0;
  int last_gpu_end_op_ = -1;
  int pending_sync_ = -1;
  int last_compute_op_ = -1, last_copy_op_ = -1;

  bool on_device(const OpNode& n) const {
    return n.kind == NodeKind::kKernel || n.kind == NodeKind::kCopy || n.kind == NodeKind::kWait;
  }

  // Kernels an op launches: the builder's count, or more where the kernel model says so (a split-K
  // GEMM adds its reduce kernel).
  int kernels_of(const OpNode& n) {
    if (n.kind != NodeKind::kKernel) return n.kind == NodeKind::kCopy ? 1 : 0;
    if (n.fixed_time_s > 0) return n.kernels;
    try {
      return std::max(n.kernels, timer_.kernels(n.op));
    } catch (const OpError& e) {
      throw OpError(n.name, e.kind, e.params, e.why);  // the op refused, by its name in the graph
    }
  }

  Time launch_cost(int id, const OpNode& n) {
    const int kernels = kernels_of(n);
    kernels_ += kernels;
    if (n.kind == NodeKind::kWait || o_.host_from_graph) return Time::zero();
    if (g_.captured(id)) {
      Time t = graph_per_kernel_ * std::max(0, kernels);
      if (id == g_.captured_begin) t += launch_cuda_;
      return t;
    }
    if (n.host_dispatches > 0 && n.host_path == HostPath::kAutogradBackward)
      return autograd_kernel_ * std::max(0, kernels);
    if (n.host_dispatches > 0 && n.host_path == HostPath::kAutogradForward)
      return autograd_forward_ * std::max(0, kernels);
    Time t = eager_cost(n) * std::max(0, n.host_dispatches) + eager_view_ * n.host_views +
             eager_split_ * n.host_splits;
    if (n.host_tensors > 0 && n.host_dispatches > 0)
      t += optimizer_base_ + optimizer_tensor_ * n.host_tensors;
    else if (kernels > n.host_dispatches)
      t += launch_cuda_ * (kernels - n.host_dispatches);
    return t;
  }

  // Host cost of one eager dispatch of `n`, by the framework op it stands for.
  Time eager_cost(const OpNode& n) const {
    if (n.kind != NodeKind::kKernel) return launch_eager_;
    switch (n.eager_call) {
      case EagerCall::kCast:
        return eager_cast_;
      case EagerCall::kReduction:
        return eager_reduction_;
      case EagerCall::kCat:
        return eager_cat_;
      case EagerCall::kPlain:
        break;
    }
    const std::string& k = n.op.kind();
    if (k == "gemm") return eager_gemm_;
    if (k == "attention") {
      // scaled_dot_product_attention picks its backend per call: GQA (enable_gqa) costs the most,
      // then causal, then plain.
      if (n.op.i("kv_heads") < n.op.i("heads")) return eager_attention_gqa_;
      return n.op.b("causal") ? eager_attention_causal_ : eager_attention_;
    }
    if (k == "layernorm" || k == "rmsnorm" || k == "softmax") return eager_norm_;
    if (k == "embedding") return eager_embedding_;
    if (k == "cross_entropy") return eager_loss_;
    if (k == "conv2d") return eager_conv_;
    return launch_eager_;
  }

  double duration_s(const OpNode& n, bool captured = false) {
    if (n.kind == NodeKind::kWait || n.kind == NodeKind::kSync) return 0;
    double t = n.fixed_time_s > 0 || n.kind == NodeKind::kHost ? n.fixed_time_s : timer_.time(n.op);
    if (captured && n.kind == NodeKind::kKernel && n.fixed_time_s <= 0) {
      // Replayed from a CUDA graph: the front end has every node at hand and does ahead the part
      // of each kernel's start-up that dependent launches on a stream pay in line
      // (graph_kernel_saving per kernel, at most half the kernel's time).
      const double k = kernels_of(n);
      t = std::max(0.5 * t, t - k * graph_saving_s_);
    }
    if (auto it = o_.category_speedup.find(n.category); it != o_.category_speedup.end())
      t /= it->second;
    if (n.kind != NodeKind::kHost) {
      if (auto it = o_.kind_speedup.find(n.op.kind()); it != o_.kind_speedup.end()) t /= it->second;
    }
    return t;
  }

  void host_start(int id, Binder b, int bop) {
    rec_[static_cast<std::size_t>(id)].host_begin_s = sim_.now().seconds();
    rec_[static_cast<std::size_t>(id)].host_binder = b;
    rec_[static_cast<std::size_t>(id)].host_binder_op = bop;
  }

  void issue_next() {
    if (next_ >= static_cast<int>(g_.size())) return;
    const int id = next_;
    const OpNode& n = g_.op(id);
    const Binder hb = host_prev_ >= 0 ? Binder::kHostPrev : Binder::kNone;
    if (n.kind == NodeKind::kSync) {
      if (outstanding_ > 0) {
        pending_sync_ = id;
        return;
      }
      finish_sync(id, false);
      return;
    }
    host_.acquire(1, [this, id, hb] {
      const OpNode& node = g_.op(id);
      host_start(id, hb, host_prev_);
      // Host work: its stated time, plus per-tensor bookkeeping (zero_grad) where it walks tensors.
      const Time cost = node.kind == NodeKind::kHost
                            ? Time::from_seconds(duration_s(node)) +
                                  optimizer_tensor_ * std::max(0, node.host_tensors)
                            : launch_cost(id, node);
      host_busy_ += cost;
      sim_.schedule_after(cost, [this, id] {
        host_.release(1);
        const OpNode& nd = g_.op(id);
        auto& r = rec_[static_cast<std::size_t>(id)];
        r.issue_s = sim_.now().seconds();
        r.stream = nd.stream;
        host_prev_ = id;
        ++next_;
        if (nd.kind == NodeKind::kHost) {
          r.start_s = r.host_begin_s;
          r.end_s = r.issue_s;
          r.duration_s = r.end_s - r.start_s;
          st_[static_cast<std::size_t>(id)].ended = true;
        } else {
          st_[static_cast<std::size_t>(id)].issued = true;
          st_[static_cast<std::size_t>(id)].issue = sim_.now();
          ++outstanding_;
          streams_[static_cast<std::size_t>(nd.stream)].queue.push_back(id);
          try_start(nd.stream);
        }
        issue_next();
      });
    });
  }

  void finish_sync(int id, bool waited) {
    auto& r = rec_[static_cast<std::size_t>(id)];
    if (waited) {
      // The host resumes when the last GPU op ends; that op binds the host's next activity.
      r.host_binder = Binder::kSync;
      r.host_binder_op = last_gpu_end_op_;
    } else {
      r.host_binder = host_prev_ >= 0 ? Binder::kHostPrev : Binder::kNone;
      r.host_binder_op = host_prev_;
    }
    r.host_begin_s = r.issue_s = r.start_s = r.end_s = sim_.now().seconds();
    r.stream = g_.op(id).stream;
    st_[static_cast<std::size_t>(id)].ended = true;
    pending_sync_ = -1;
    host_prev_ = id;
    ++next_;
    issue_next();
  }

  void try_start(int s) {
    Stream& q = streams_[static_cast<std::size_t>(s)];
    if (q.busy || q.queue.empty() || q.waiting_retry) return;
    const int id = q.queue.front();
    const OpNode& n = g_.op(id);
    // Candidates: host issue, stream predecessor (+gap), data dependencies.
    Time earliest = st_[static_cast<std::size_t>(id)].issue;
    if (static_cast<std::size_t>(id) < o_.launch_latency_s.size())
      earliest += Time::from_seconds(o_.launch_latency_s[static_cast<std::size_t>(id)]);
    Binder b = Binder::kHostIssue;
    int bop = id;
    if (q.last >= 0) {
      const auto& ps = st_[static_cast<std::size_t>(q.last)];
      const bool gap = n.kind == NodeKind::kKernel && g_.op(q.last).kind == NodeKind::kKernel;
      const Time t = ps.end + (gap ? gap_ : Time::zero());
      if (t >= earliest) earliest = t, b = Binder::kStream, bop = q.last;
    }
    for (int d : g_.deps(id)) {
      const auto& ds = st_[static_cast<std::size_t>(d)];
      if (!ds.ended) return;  // its end will retry this stream
      if (ds.end >= earliest) earliest = ds.end, b = Binder::kData, bop = d;
    }
    if (earliest > sim_.now()) {
      q.waiting_retry = true;
      sim_.schedule_at(earliest, [this, s] {
        streams_[static_cast<std::size_t>(s)].waiting_retry = false;
        try_start(s);
      });
      return;
    }
    q.queue.pop_front();
    q.busy = true;
    q.last = id;
    st_[static_cast<std::size_t>(id)].started = true;
    if (n.kind == NodeKind::kWait) {
      start(id, b, bop, nullptr);
      return;
    }
    // Communication kernels (NCCL) run on a few SMs beside the compute kernels: they do not
    // take the compute engine.
    sim::Resource* engine = n.kind == NodeKind::kCopy                ? &copy_
                            : n.category == Category::kCommunication ? &comm_
                                                                     : &compute_;
    const Time asked = sim_.now();
    engine->acquire(1, [this, id, b, bop, engine, asked] {
      if (sim_.now() > asked) {
        const int holder = engine == &compute_ ? last_compute_op_ : last_copy_op_;
        start(id, Binder::kEngine, holder, engine);
      } else {
        start(id, b, bop, engine);
      }
    });
  }

  void start(int id, Binder b, int bop, sim::Resource* engine) {
    const OpNode& n = g_.op(id);
    auto& r = rec_[static_cast<std::size_t>(id)];
    r.start_s = sim_.now().seconds();
    r.device_binder = b;
    r.device_binder_op = bop;
    const Time dur = Time::from_seconds(duration_s(n, g_.captured(id)));
    if (engine == &compute_) gpu_busy_ += dur;
    sim_.schedule_after(dur, [this, id, engine] {
      if (engine) {
        if (engine == &compute_) last_compute_op_ = id;
        if (engine == &copy_) last_copy_op_ = id;
        engine->release(1);
      }
      end(id);
    });
  }

  void end(int id) {
    auto& s = st_[static_cast<std::size_t>(id)];
    s.ended = true;
    s.end = sim_.now();
    auto& r = rec_[static_cast<std::size_t>(id)];
    r.end_s = sim_.now().seconds();
    r.duration_s = r.end_s - r.start_s;
    --outstanding_;
    last_gpu_end_op_ = id;
    const int st = g_.op(id).stream;
    streams_[static_cast<std::size_t>(st)].busy = false;
    try_start(st);
    for (int d : dependents_[static_cast<std::size_t>(id)]) try_start(g_.op(d).stream);
    if (outstanding_ == 0 && pending_sync_ >= 0) finish_sync(pending_sync_, true);
  }
};

}  // namespace

Execution execute(const Graph& g, const hw::GpuSpec& gpu, const ExecOptions& o) {
  Run run(g, gpu, o);
  return run.go();
}

}  // namespace ridge::workloads
