#include "models/fabric.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "hw/system_loader.hpp"

namespace ridge::models {

Fabric::Fabric(const hw::SystemSpec& system, int gpus, sim::FlowNetwork& net)
    : sys_(system), net_(net), gpus_(gpus) {
  if (const std::string err = hw::check_gpu_count(system, gpus); !err.empty())
    throw std::invalid_argument(err);
  const hw::NodeSpec& n = system.node;
  ppn_ = std::min(gpus, n.gpus);
  nodes_ = (gpus + n.gpus - 1) / n.gpus;
  rails_ = std::max(1, n.nics.count);
  nvlink_rate_ = n.nvlink.bandwidth * n.nvlink.data_efficiency;
  nic_rate_ = n.nics.bandwidth * n.nics.data_efficiency;
  pcie_rate_ = n.pcie.bandwidth;
  const bool nvswitch = n.intra == hw::IntraFabric::kNvSwitch;
  // Every link at once: GPU ports, PCIe switch uplinks, NICs, leaf uplinks (a bound is enough).
  const std::size_t leaves_bound = static_cast<std::size_t>(nodes_) * rails_ * 2;
  net.reserve_links(net.link_count() + static_cast<std::size_t>(gpus) * 4 +
                    static_cast<std::size_t>(nodes_) * (rails_ * 2 + 2 * ppn_) + leaves_bound);
  for (int g = 0; g < gpus; ++g) {
    if (nvswitch) {
      nvl_tx_.push_back(add(fmt::format("gpu{}.nvlink.tx", g), nvlink_rate_, n.nvlink.latency_s));
      nvl_rx_.push_back(add(fmt::format("gpu{}.nvlink.rx", g), nvlink_rate_, 0.0));
    }
    pcie_tx_.push_back(add(fmt::format("gpu{}.pcie.tx", g), pcie_rate_, n.pcie.latency_s));
    pcie_rx_.push_back(add(fmt::format("gpu{}.pcie.rx", g), pcie_rate_, 0.0));
  }
  if (!nvswitch) {
    gpus_per_switch_ = n.pcie.gpus_per_switch > 0 ? n.pcie.gpus_per_switch : n.gpus;
    const int switches = (ppn_ + gpus_per_switch_ - 1) / gpus_per_switch_;
    for (int node = 0; node < nodes_; ++node)
      for (int s = 0; s < switches; ++s) {
        sw_up_.push_back(
            add(fmt::format("node{}.pcie_switch{}.up", node, s), pcie_rate_, n.pcie.latency_s));
        sw_down_.push_back(add(fmt::format("node{}.pcie_switch{}.down", node, s), pcie_rate_, 0));
      }
  }
  const bool scale_out = nodes_ > 1 && system.network.kind == hw::NetworkKind::kRailFatTree;
  if (n.nics.count > 0) {
    const double nic_lat = n.nics.latency_s + system.network.switch_latency_s;
    for (int node = 0; node < nodes_; ++node)
      for (int r = 0; r < rails_; ++r) {
        nic_tx_.push_back(add(fmt::format("node{}.nic{}.tx", node, r), nic_rate_, nic_lat));
        nic_rx_.push_back(add(fmt::format("node{}.nic{}.rx", node, r), nic_rate_, 0.0));
      }
  }
  if (scale_out) {
    const hw::SystemFigures f = hw::derive_figures(system);
    nodes_per_leaf_ = f.nodes_per_leaf;
    leaves_ = (nodes_ + nodes_per_leaf_ - 1) / nodes_per_leaf_;
    if (leaves_ > 1) {
      const double up = f.leaf_uplink_per_rail * n.nics.data_efficiency;
      for (int r = 0; r < rails_; ++r)
        for (int l = 0; l < leaves_; ++l) {
          // Up to a spine and down through the far leaf: two more switch traversals.
          leaf_up_.push_back(
              add(fmt::format("rail{}.leaf{}.up", r, l), up, 2 * system.network.switch_latency_s));
          leaf_down_.push_back(add(fmt::format("rail{}.leaf{}.down", r, l), up, 0.0));
        }
    }
  }
}

sim::LinkId Fabric::add(std::string name, double rate, double latency_s) {
  const sim::LinkId id = net_.add_link(std::move(name), rate, sim::Time::from_seconds(latency_s));
  all_.push_back(id);
  return id;
}

int Fabric::rail_of(int gpu) const {
  const int local = gpu % sys_.node.gpus;
  return static_cast<int>(static_cast<long long>(local) * rails_ / sys_.node.gpus);
}

bool Fabric::nvlink_between(int a, int b) const {
  if (nvl_tx_.empty()) return false;
  if (node_of(a) == node_of(b)) return true;
  return sys_.network.kind == hw::NetworkKind::kNvlinkDomain;
}

std::vector<sim::LinkId> Fabric::path(int src, int dst, int rail) const {
  std::vector<sim::LinkId> out;
  append_path(out, src, dst, rail);
  return out;
}

void Fabric::append_path(std::vector<sim::LinkId>& out, int src, int dst, int rail) const {
  if (src == dst) return;
  if (nvlink_between(src, dst)) {
    out.push_back(nvl_tx_[src]);
    out.push_back(nvl_rx_[dst]);
    return;
  }
  const int ns = node_of(src), nd = node_of(dst);
  if (ns == nd) {  // PCIe-only node: through the switch, and the host between switches
    out.push_back(pcie_tx_[src]);
    const int per_node = static_cast<int>(sw_up_.size()) / nodes_;
    const int s1 = (src % ppn_) / gpus_per_switch_, s2 = (dst % ppn_) / gpus_per_switch_;
    if (s1 != s2) {
      out.push_back(sw_up_[ns * per_node + s1]);
      out.push_back(sw_down_[nd * per_node + s2]);
    }
    out.push_back(pcie_rx_[dst]);
    return;
  }
  if (nic_tx_.empty()) throw std::logic_error("Fabric: nodes without NICs cannot talk");
  const int r = rail < 0 ? rail_of(src) : rail % rails_;
  out.push_back(pcie_tx_[src]);
  out.push_back(nic_tx_[ns * rails_ + r]);
  if (leaves_ > 1 && leaf_of(ns) != leaf_of(nd)) {
    out.push_back(leaf_up_[r * leaves_ + leaf_of(ns)]);
    out.push_back(leaf_down_[r * leaves_ + leaf_of(nd)]);
  }
  out.push_back(nic_rx_[nd * rails_ + r]);
  out.push_back(pcie_rx_[dst]);
}

std::vector<sim::LinkId> Fabric::to_network(int gpu, int rail) const {
  return {pcie_tx_.at(gpu), nic_tx_.at(node_of(gpu) * rails_ + rail % rails_)};
}

std::vector<sim::LinkId> Fabric::from_network(int gpu, int rail) const {
  return {nic_rx_.at(node_of(gpu) * rails_ + rail % rails_), pcie_rx_.at(gpu)};
}

std::vector<sim::LinkId> Fabric::to_host(int gpu) const {
  std::vector<sim::LinkId> out{pcie_tx_.at(gpu)};
  if (!sw_up_.empty()) {
    const int per_node = static_cast<int>(sw_up_.size()) / nodes_;
    out.push_back(sw_up_[node_of(gpu) * per_node + (gpu % ppn_) / gpus_per_switch_]);
  }
  return out;
}

std::vector<sim::LinkId> Fabric::from_host(int gpu) const {
  std::vector<sim::LinkId> out;
  if (!sw_down_.empty()) {
    const int per_node = static_cast<int>(sw_down_.size()) / nodes_;
    out.push_back(sw_down_[node_of(gpu) * per_node + (gpu % ppn_) / gpus_per_switch_]);
  }
  out.push_back(pcie_rx_.at(gpu));
  return out;
}

}  // namespace ridge::models
