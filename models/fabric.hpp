// A system's links as engine links: every byte between GPUs (and between a GPU and its host or
// NIC) is a flow on sim::FlowNetwork links, so concurrent transfers share them max-min fairly.
//
// Captures, per direction: each GPU's NVLink port into the NVSwitch fabric (its links summed;
// the switch chips are non-blocking crossbars, and NCCL spreads a transfer over every plane, so
// a GPU's planes act as one port of their summed rate), each GPU's PCIe link, the PCIe switch
// uplinks of a PCIe-only node, each NIC (one per rail), and per rail each leaf switch's uplinks
// to the spines (the spines themselves are non-blocking); in an NVLink domain spanning nodes
// (GB200 NVL72) every GPU's port reaches every other GPU. Per-hop latency is the links'.
// Ignores: routing inside the fat tree beyond leaf uplinks (ECMP is taken as perfect), adaptive
// routing and congestion control, NVSwitch-internal contention, PCIe switch arbitration.
// Validated: through the collectives on it (models/collective.hpp).
#pragma once

#include <string>
#include <vector>

#include "hw/system_spec.hpp"
#include "sim/flow.hpp"

namespace ridge::models {

/// The links of the first `gpus` GPUs of a system (whole nodes past one node).
class Fabric {
 public:
  /// Adds the links to `net`. `gpus` must pass hw::check_gpu_count.
  Fabric(const hw::SystemSpec& system, int gpus, sim::FlowNetwork& net);

  int gpus() const { return gpus_; }
  int nodes() const { return nodes_; }
  int gpus_per_node() const { return ppn_; }
  int node_of(int gpu) const { return gpu / ppn_; }
  int rails() const { return rails_; }
  /// The NIC rail a GPU's own NIC is on.
  int rail_of(int gpu) const;
  /// Whether two GPUs reach each other over NVLink (same node, or one NVLink domain).
  bool nvlink_between(int a, int b) const;
  const hw::SystemSpec& system() const { return sys_; }

  /// The links a transfer from GPU `src` to GPU `dst` crosses. Past the NVLink domain it leaves
  /// through the NIC of `rail` on both ends (NCCL keeps a channel on one rail), -1 for src's own.
  std::vector<sim::LinkId> path(int src, int dst, int rail = -1) const;
  /// Appends path(src, dst, rail) to `out`.
  void append_path(std::vector<sim::LinkId>& out, int src, int dst, int rail = -1) const;
  /// GPU to its NVLink switch port, and back (NVLS traffic to and from the switch).
  sim::LinkId nvlink_up(int gpu) const { return nvl_tx_.at(gpu); }
  sim::LinkId nvlink_down(int gpu) const { return nvl_rx_.at(gpu); }
  /// A GPU's NIC on `rail`, sending and receiving (in-network reduction traffic).
  std::vector<sim::LinkId> to_network(int gpu, int rail) const;
  std::vector<sim::LinkId> from_network(int gpu, int rail) const;
  /// GPU memory to host memory over PCIe, and back.
  std::vector<sim::LinkId> to_host(int gpu) const;
  std::vector<sim::LinkId> from_host(int gpu) const;
  /// Whether any NVLink exists (else GPUs talk over PCIe).
  bool has_nvlink() const { return !nvl_tx_.empty(); }
  /// Line rate (payload) of a link kind, B/s per direction: for a path's ideal rate.
  double nvlink_rate() const { return nvlink_rate_; }
  double nic_rate() const { return nic_rate_; }
  double pcie_rate() const { return pcie_rate_; }
  /// Every link this fabric added (for reports).
  const std::vector<sim::LinkId>& links() const { return all_; }

 private:
  sim::LinkId add(std::string name, double rate, double latency_s);
  int leaf_of(int node) const { return nodes_per_leaf_ > 0 ? node / nodes_per_leaf_ : 0; }

  const hw::SystemSpec& sys_;
  sim::FlowNetwork& net_;
  int gpus_ = 0, nodes_ = 0, ppn_ = 0, rails_ = 0, nodes_per_leaf_ = 0, leaves_ = 0;
  int gpus_per_switch_ = 0;
  double nvlink_rate_ = 0, nic_rate_ = 0, pcie_rate_ = 0;
  std::vector<sim::LinkId> nvl_tx_, nvl_rx_, pcie_tx_, pcie_rx_;
  std::vector<sim::LinkId> sw_up_, sw_down_;      // PCIe switch uplinks (per node x switch)
  std::vector<sim::LinkId> nic_tx_, nic_rx_;      // [node * rails + rail]
  std::vector<sim::LinkId> leaf_up_, leaf_down_;  // [rail * leaves + leaf]
  std::vector<sim::LinkId> all_;
};

}  // namespace ridge::models
