// What-ifs on a parallel training step (see workloads/parallel.hpp): re-simulated beside Amdahl's
// closed form S = 1 / ((1 - f) + f x t), f the share of the step's critical path the target
// touches and t the factor on its time.
#include <fmt/format.h>

#include <stdexcept>

#include "workloads/parallel.hpp"

namespace ridge::workloads {

namespace {
constexpr const char* kTargets[] = {
    "nvlink_bandwidth", "nic_bandwidth", "tensor",  "hbm_bandwidth", "clock",   "sm_count",
    "tp_comm",          "pp_comm",       "dp_comm", "ep_comm",       "cp_comm", "bubble"};

double share(const ParallelResult& r, std::initializer_list<const char*> keys) {
  double s = 0;
  for (const char* k : keys) {
    auto it = r.critical_s.find(k);
    if (it != r.critical_s.end()) s += it->second;
  }
  return r.step_s > 0 ? s / r.step_s : 0;
}
}  // namespace

ParallelWhatIf parse_parallel_what_if(const std::string& text) {
  const auto star = text.find('*');
  std::string valid;
  for (const char* t : kTargets) valid += std::string(valid.empty() ? "" : ", ") + t;
  if (star == std::string::npos)
    throw std::invalid_argument(
        fmt::format("what-if '{}': expected NAME*FACTOR with NAME one of {}", text, valid));
  ParallelWhatIf w;
  w.text = text;
  w.target = text.substr(0, star);
  bool known = false;
  for (const char* t : kTargets) known = known || w.target == t;
  if (!known)
    throw std::invalid_argument(fmt::format(
        "what-if '{}': unknown target '{}' (expected one of {})", text, w.target, valid));
  try {
    std::size_t used = 0;
    w.factor = std::stod(text.substr(star + 1), &used);
    if (used != text.size() - star - 1) throw std::invalid_argument("trailing");
  } catch (const std::exception&) {
    throw std::invalid_argument(fmt::format("what-if '{}': the factor is not a number", text));
  }
  const bool time_factor = w.target == "tp_comm" || w.target == "pp_comm" ||
                           w.target == "dp_comm" || w.target == "ep_comm" ||
                           w.target == "cp_comm" || w.target == "bubble";
  if (time_factor ? w.factor < 0 : w.factor <= 0)
    throw std::invalid_argument(
        fmt::format("what-if '{}': the factor must be {}", text, time_factor ? ">= 0" : "> 0"));
  return w;
}

ParallelWhatIfResult run_parallel_what_if(const TransformerConfig& m, const ParallelOptions& o,
                                          const hw::SystemSpec& sys, TimingMode mode,
                                          const ParallelResult& base, const ParallelWhatIf& w) {
  ParallelWhatIfResult r;
  r.what_if = w;
  r.baseline_s = base.step_s;
  ParallelOptions po = o;
  hw::SystemSpec s = sys;
  double time_factor = 1 / w.factor;  // figures: bandwidth x f -> time / f (Amdahl's view)
  // The EP all-to-alls ride NVLink when an EP group is inside a node, the NICs otherwise.
  bool ep_in_node = true;
  for (int e = 1; e < o.ep; ++e)
    ep_in_node = ep_in_node &&
                 place_rank(o, 0, 0, e) / sys.node.gpus == place_rank(o, 0, 0, 0) / sys.node.gpus;
  if (w.target == "nvlink_bandwidth") {
    s.node.nvlink.bandwidth *= w.factor;
    r.fraction = ep_in_node ? share(base, {"tp_comm", "ep_comm"}) : share(base, {"tp_comm"});
  } else if (w.target == "nic_bandwidth") {
    s.node.nics.bandwidth *= w.factor;
    r.fraction = ep_in_node ? share(base, {"pp_comm", "dp_comm"})
                            : share(base, {"pp_comm", "dp_comm", "ep_comm"});
  } else if (w.target == "cp_comm") {
    time_factor = w.factor;
    po.cp_comm_scale *= w.factor;
    r.fraction = share(base, {"cp_comm"});
  } else if (w.target == "ep_comm") {
    time_factor = w.factor;
    po.ep_comm_scale *= w.factor;
    r.fraction = share(base, {"ep_comm"});
  } else if (w.target == "tp_comm" || w.target == "pp_comm" || w.target == "dp_comm") {
    time_factor = w.factor;
    (w.target == "tp_comm"   ? po.tp_comm_scale
     : w.target == "pp_comm" ? po.pp_comm_scale
                             : po.dp_comm_scale) *= w.factor;
    r.fraction = share(base, {w.target == "tp_comm"   ? "tp_comm"
                              : w.target == "pp_comm" ? "pp_comm"
                                                      : "dp_comm"});
  } else if (w.target == "bubble") {
    // Not re-simulated: the step less (1 - factor) of stage 0's idle time in the pipeline.
    time_factor = w.factor;
    r.simulated = false;
    r.fraction = base.bubble_s / base.step_s;
  } else {
    WhatIf g;
    g.target = w.target;
    g.factor = w.factor;
    g.gpu_figure = true;
    s.node.gpu = scaled_gpu(sys.node.gpu, g);
    r.fraction = w.target == "hbm_bandwidth"
                     ? share(base, {"elementwise", "optimizer"})
                     : share(base, {"gemm", "attention", "elementwise", "optimizer"});
  }
  r.amdahl_s = base.step_s * ((1 - r.fraction) + r.fraction * time_factor);
  if (r.simulated)
    r.step_s = run_parallel(m, po, s, mode).step_s;
  else
    r.step_s = r.amdahl_s;
  return r;
}

}  // namespace ridge::workloads
