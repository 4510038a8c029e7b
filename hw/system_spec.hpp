// A system as the models see it: nodes of GPUs, the fabric inside a node (NVLink through NVSwitch
// planes, or a PCIe switch tree), the node's PCIe and NICs, and the scale-out network between
// nodes (a rail-optimized fat tree, or one NVLink domain spanning nodes as in GB200 NVL72).
// Behaviour-free figures in base units (bytes, B/s, s), filled from configs/systems/*.yaml by
// load_system_spec(); every figure in a shipped config carries its source (`sources`).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hw/gpu_spec.hpp"

namespace ridge::hw {

/// How the GPUs of a node reach each other.
enum class IntraFabric {
  kNvSwitch,  ///< every GPU's NVLink ports go to NVSwitch chips (non-blocking crossbar)
  kPcie,      ///< GPUs talk through PCIe switches (and the host root complex between them)
};

/// Who makes the host CPUs: NCCL's tuning model keys multi-node LL caps and network overhead on it.
enum class CpuVendor { kIntel, kAmd, kArm };

struct NvlinkSpec {
  int generation = 0;            ///< NVLink generation (3: A100, 4: H100/H200, 5: B200)
  int links = 0;                 ///< links per GPU
  double bandwidth = 0;          ///< B/s per GPU per direction, all links together
  double latency_s = 0;          ///< one hop, GPU port through the switch to the other GPU
  double data_efficiency = 1.0;  ///< fraction of the line rate that carries payload
  int switch_generation = 0;     ///< NVSwitch generation, 0 when GPUs link directly
  int switch_planes = 0;         ///< NVSwitch chips a GPU's links are spread over
  bool multicast = false;        ///< NVLink SHARP (in-switch reduction and multicast, NVLS)
  int domain_gpus = 0;           ///< GPUs one NVLink domain spans (GB200 NVL72: 72)
};

struct PcieSpec {
  int generation = 0;
  double bandwidth = 0;     ///< B/s per direction of one GPU's or NIC's x16 link
  double latency_s = 0;     ///< one traversal of the switch tree
  int lanes_per_gpu = 0;    ///< lanes each GPU takes
  int lanes = 0;            ///< lanes the node's PCIe switches give GPUs and NICs together
  int gpus_per_switch = 0;  ///< GPUs under one PCIe switch (for a PCIe intra-node fabric)
};

struct NicSpec {
  int count = 0;                 ///< NICs for GPU traffic per node (one per rail)
  double bandwidth = 0;          ///< B/s per NIC per direction
  double latency_s = 0;          ///< NIC to NIC through one switch, without the switch's own
  double data_efficiency = 1.0;  ///< payload fraction of the line rate (packet headers)
  int lanes = 0;                 ///< PCIe lanes each NIC takes
};

/// The network between nodes.
enum class NetworkKind {
  kNone,          ///< a single node
  kRailFatTree,   ///< rail-optimized two-level fat tree: NIC r of every node on rail r's leaves
  kNvlinkDomain,  ///< nodes joined by NVLink switches into one domain (GB200 NVL72)
};

struct NetworkSpec {
  NetworkKind kind = NetworkKind::kNone;
  int leaf_radix = 0;                 ///< ports per leaf switch
  int spine_radix = 0;                ///< ports per spine switch
  double oversubscription = 1;        ///< leaf downlinks : uplinks (1 = non-blocking)
  double switch_latency_s = 0;        ///< one switch traversal
  bool in_network_reduction = false;  ///< SHARP in the switches (NCCL's CollNet)
};

/// NCCL's view of the node, where its topology search gives figures Ridge does not derive.
struct NcclSystemSpec {
  std::string version;          ///< tuning constants' NCCL version (configs/nccl/<version>.yaml)
  int channels = 0;             ///< channels (one CUDA block each) for ring and tree
  double channel_bw_intra = 0;  ///< B/s per channel inside a node (NCCL's bwIntra)
  double channel_bw_inter = 0;  ///< B/s per channel across nodes (NCCL's bwInter)
  int nvls_channels = 0;        ///< channels for NVLS (0: as `channels`)
};

/// The node's host: memory and CPUs, for optimizer offload (ZeRO-Offload). Absent in a config
/// (`node.host` left out): every figure 0, and offload is refused naming the missing key.
struct HostSpec {
  double memory = 0;            ///< host DRAM per node, bytes
  double memory_bandwidth = 0;  ///< host DRAM bandwidth per node, B/s (all sockets, theoretical)
  int cpu_sockets = 0;
  int cpu_cores = 0;  ///< per node, all sockets
  bool present() const { return memory > 0 && memory_bandwidth > 0; }
};

struct NodeSpec {
  std::string gpu_name;  ///< as written (a configs/hw name or alias)
  GpuSpec gpu;           ///< the GPU it resolves to
  int gpus = 0;
  CpuVendor cpu = CpuVendor::kIntel;
  IntraFabric intra = IntraFabric::kNvSwitch;
  NvlinkSpec nvlink;
  PcieSpec pcie;
  NicSpec nics;
  HostSpec host;
};

struct SystemSpec {
  std::string name;
  std::vector<std::string> aliases;
  std::string description;
  int nodes = 1;
  NodeSpec node;
  NetworkSpec network;
  NcclSystemSpec nccl;
  /// (config path, source) for every figure; (file, sha256) for every file read (GPU's too).
  std::vector<std::pair<std::string, std::string>> sources;
  std::vector<std::pair<std::string, std::string>> files;

  int total_gpus() const { return nodes * node.gpus; }
};

/// Figures derived from a system, for `ridge system show` and the models.
struct SystemFigures {
  int total_gpus = 0;
  double nvlink_per_gpu = 0;      ///< B/s per direction, line rate (0 without NVLink)
  double scale_out_per_gpu = 0;   ///< B/s per direction of NIC bandwidth per GPU
  double scale_out_per_node = 0;  ///< B/s per direction, all NICs of a node
  double bisection = 0;           ///< B/s per direction across the worst halving of the GPUs
  int leaves_per_rail = 0;        ///< rail-optimized fat tree: leaf switches per rail
  int nodes_per_leaf = 0;
  int spines = 0;
  double leaf_uplink_per_rail = 0;  ///< B/s per direction a leaf sends up to the spines
};

SystemFigures derive_figures(const SystemSpec& s);

std::string_view intra_fabric_name(IntraFabric f);
std::string_view network_kind_name(NetworkKind k);
std::string_view cpu_vendor_name(CpuVendor c);

}  // namespace ridge::hw
