// NCCL's tuning-model constants as versioned data (configs/nccl/<version>.yaml): per-algorithm
// and per-protocol base and per-hop latencies, per-channel throughput caps by GPU architecture,
// the tree correction table, the protocols' wire formats, and (fitted, not NCCL's) the SM-side
// loads + stores rate of one channel's block by architecture. Behaviour-free; the models in
// models/nccl_tuner.* use them.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ridge::hw {

/// NCCL's algorithms, in the order its tables use.
enum class NcclAlgo { kTree, kRing, kCollNetDirect, kCollNetChain, kNvls, kNvlsTree };
inline constexpr int kNcclAlgos = 6;
/// NCCL's protocols.
enum class NcclProto { kLL, kLL128, kSimple };
inline constexpr int kNcclProtos = 3;
/// The link class a step crosses, for hwLat.
enum class NcclLinkClass { kNvlink, kPcie, kNet };

std::string_view nccl_algo_name(NcclAlgo a);    ///< "ring", "tree", "nvls", ...
std::string_view nccl_proto_name(NcclProto p);  ///< "ll", "ll128", "simple"

/// Per-channel throughput caps of one GPU architecture class, GB/s, [1 node, 2, 3+].
struct NcclArchCaps {
  std::array<double, 3> ll_max{}, ring_ll128{}, tree_ll128{}, tree{}, nvls_tree{};
};

struct NcclTuning {
  std::string version;
  double base_lat_us[kNcclAlgos][kNcclProtos] = {};
  double hw_lat_us[3][kNcclAlgos][kNcclProtos] = {};       ///< [link class][algo][proto]
  std::vector<std::pair<std::string, NcclArchCaps>> caps;  ///< "ampere", "hopper", "blackwell"
  std::array<double, 2> ll_max_multinode_intel{}, ll_max_multinode_amd{};  ///< [2 nodes, 3+]
  double net_overhead_intel_us = 0, net_overhead_amd_us = 0;
  std::vector<std::pair<std::string, double>> nvls_efficiency;
  double ring_simple_plateau = 1.0;
  std::array<std::vector<double>, kNcclProtos> tree_correction;
  std::array<double, kNcclProtos> wire_factor{};   ///< wire bytes per data byte
  std::array<double, kNcclProtos> buffer_bytes{};  ///< per channel
  int steps = 8;                                   ///< slots per buffer (NCCL_STEPS)
  /// A channel's SM-side data rate, bytes loaded + stored per second by its one CUDA block, by
  /// architecture class, [LL, LL128, Simple] (fitted; empty for a class without a measurement).
  std::vector<std::pair<std::string, std::array<double, kNcclProtos>>> channel_memory_rate;
  /// A tree LL128 channel's block rate (B/s of loads + stores) once its receive FIFO's reuse
  /// distance exceeds the L2, by architecture class (fitted; empty where none is measured).
  std::vector<std::pair<std::string, double>> tree_ll128_l2_miss_rate;
  /// How NCCL sizes a collective's and a point-to-point transfer's channels (enqueue.cc).
  struct Channels {
    std::array<double, kNcclProtos> ring_max_threads{};  ///< a ring block's threads
    std::array<double, kNcclProtos> thread_threshold{};  ///< bytes per thread per channel
    double min_traffic_per_channel = 16384;              ///< bytes (MinTrafficPerChannel)
  } coll_channels;
  struct P2p {
    double ll_threshold = 16384;    ///< bytes per channel (NCCL_P2P_LL_THRESHOLD)
    double nvl_chunk = 524288;      ///< Simple step over NVLink (NCCL_P2P_NVL_CHUNKSIZE)
    double net_chunk = 131072;      ///< over the network (NCCL_P2P_NET_CHUNKSIZE)
    double pci_chunk = 131072;      ///< over PCIe (NCCL_P2P_PCI_CHUNKSIZE)
    int net_channels_per_peer = 2;  ///< NCCL_NCHANNELS_PER_NET_PEER's default
    int max_channels = 64;          ///< MAXCHANNELS
    /// A point-to-point channel's block: loads + stores per second (Simple), by architecture
    /// class (fitted; empty where none is measured).
    std::vector<std::pair<std::string, double>> block_rate;
  } p2p;
  std::vector<std::pair<std::string, std::string>> sources, files;

  /// The caps of an architecture class ("hopper"); throws std::invalid_argument if unknown.
  const NcclArchCaps& arch_caps(std::string_view arch_class) const;
  /// NVLS efficiency of an architecture class (0 if NCCL has none for it).
  double nvls_eff(std::string_view arch_class) const;
  /// A channel's SM-side memory rate (B/s) for an architecture class and protocol; 0 if none.
  double channel_mem_rate(std::string_view arch_class, NcclProto p) const;
  /// A point-to-point channel's block rate (B/s of loads + stores) for a class; 0 if none.
  double p2p_block_rate(std::string_view arch_class) const;
  /// A tree LL128 block's rate past the L2 (B/s of loads + stores) for a class; 0 if none.
  double tree_ll128_miss_rate(std::string_view arch_class) const;
};

/// Loads configs/nccl/<version>.yaml (or a path). Throws ConfigException.
NcclTuning load_nccl_tuning(const std::string& version_or_path);

/// NCCL's architecture class for a GPU architecture name ("ampere", "hopper", "blackwell").
std::string nccl_arch_class(std::string_view gpu_architecture);

}  // namespace ridge::hw
