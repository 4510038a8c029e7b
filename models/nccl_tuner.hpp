// NCCL's tuning model: for a collective of a size on a set of GPUs, NCCL estimates every enabled
// (algorithm, protocol) as latency + bytes / bandwidth and runs the fastest. Ridge evaluates the
// same model, with NCCL's constants as versioned data (hw/nccl_tuning.hpp), to choose what NCCL
// would choose and to take each protocol's per-step latency and per-channel throughput caps.
//
// Captures (NVIDIA/nccl v2.28.9 src/graph/tuning.cc, src/enqueue.cc): ring, tree, NVLS, NVLS-tree,
// CollNet direct and chain; LL, LL128 and Simple; the per-channel caps by architecture and node
// count, the LL cap by host CPU past one node, the tree correction table, the ring Simple
// plateau factor past one node, the enablement rules (tree only for all-reduce, NVLS only with
// NVLink multicast and Simple, NVLS-tree and CollNet only past one node, CollNet only with
// in-network reduction), the tree graph's own channel speed on one node of two GPUs (twice the
// ring's: a 2-GPU chain crosses each port one way; as NCCL logged). Also NCCL's plan of a
// call's channels: a ring's channels trimmed for small sizes and dealt out in cells of 16 KiB
// traffic (enqueue.cc topoGetAlgoInfo, scheduleCollTasksToPlan), and point-to-point's protocol
// and channels per peer by size (enqueue.cc addP2pToPlan, graph/paths.cc
// ncclTopoComputeP2pChannels). Ignores: PAT (one GPU per node), the thread trimming (it changes no
// channel count), several collectives in one group sharing channels, tuner plugins and environment
// overrides other than a forced algo/proto. Validated: its choices against NCCL's on two H200s
// (validate/data/h200x2, tests/systems), its ring channel counts against the 26 NCCL logged there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hw/nccl_tuning.hpp"
#include "hw/system_spec.hpp"

namespace ridge::models {

/// The collectives, as nccl-tests names them.
enum class CollOp {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kBroadcast,
  kReduce,
  kSendRecv
};
inline constexpr CollOp kAllCollOps[] = {
    CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kAllToAll,
    CollOp::kBroadcast, CollOp::kReduce,    CollOp::kSendRecv};

std::string_view coll_op_name(CollOp op);  ///< "all_reduce", ...
/// Parses "all_reduce", "allreduce", "all-reduce" (any case); false if unknown.
bool parse_coll_op(std::string_view s, CollOp& out);
/// nccl-tests' bus bandwidth factor: busbw = algbw x factor (2(n-1)/n all-reduce, ...).
double busbw_factor(CollOp op, int nranks);
/// Whether NCCL runs this op as point-to-point transfers (all-to-all, send/recv), not through
/// the tuner's algorithms.
bool is_p2p(CollOp op);

/// One (algorithm, protocol) as NCCL's model prices it.
struct TuneCell {
  hw::NcclAlgo algo = hw::NcclAlgo::kRing;
  hw::NcclProto proto = hw::NcclProto::kSimple;
  bool enabled = false;
  std::string why_disabled;
  double latency_us = 0;  ///< lat x latCount
  double busbw_gbps = 0;  ///< NCCL's bus bandwidth (after caps), GB/s
  double algbw_gbps = 0;  ///< what its time formula divides bytes by, GB/s
  double time_us = 0;
};

struct TuneResult {
  std::vector<TuneCell> cells;  ///< every algorithm x protocol, enabled or not
  int best = -1;                ///< index in cells of the fastest enabled one
  const TuneCell& chosen() const { return cells.at(static_cast<std::size_t>(best)); }
};

/// NCCL's model for one system (and its GPU count).
class NcclTuner {
 public:
  NcclTuner(const hw::SystemSpec& system, const hw::NcclTuning& tuning, int gpus);
  /// A group of `nodes` nodes with `ppn` of its ranks on each (e.g. one GPU per node: ppn 1).
  NcclTuner(const hw::SystemSpec& system, const hw::NcclTuning& tuning, int nodes, int ppn);
  /// Every cell for `op` of `bytes` (nccl-tests' size convention); best = NCCL's choice.
  TuneResult tune(CollOp op, double bytes) const;
  int nodes() const { return nodes_; }
  int ppn() const { return ppn_; }
  int channels() const { return channels_; }
  int nvls_channels() const { return nvls_channels_; }
  const std::string& arch_class() const { return arch_; }
  /// NCCL's hwLat row for steps inside a node: 0 NVLink, 1 PCIe.
  int intra_link_class() const { return sys_.node.intra == hw::IntraFabric::kNvSwitch ? 0 : 1; }
  const hw::NcclTuning& tuning() const { return t_; }
  /// The channels NCCL gives one ring collective of `bytes` (nccl-tests' size) with protocol
  /// `p`: its channels (twice the search's) trimmed while bytes < channels x threads x
  /// threshold (enqueue.cc topoGetAlgoInfo), then the channels its cells of 16 KiB traffic
  /// fill (enqueue.cc scheduleCollTasksToPlan, one collective alone).
  int ring_channels(CollOp op, double bytes, hw::NcclProto p) const;
  /// The channels (CUDA blocks) a tree all-reduce of `bytes` runs on: the ring's rule with the
  /// thread threshold unscaled (NCCL multiplies only ring LL's by nRanks; tuning.cc).
  int tree_channels(double bytes, hw::NcclProto p) const;
  /// The chunk (data bytes per pipeline step) of a tree LL128 all-reduce whose channels carry
  /// `channel_bytes` each: one step's data (buffer / NCCL_STEPS x 15/16: 576,000 B), halved
  /// while channel_bytes / chunk (whole) < (1 + log2 nodes + 0.1 ppn) x 64 / ppn and the chunk
  /// exceeds 128 KiB, then while it is < ... x 16 / ppn and the chunk exceeds 32 KiB, then cut
  /// to whole 1920 B grains (NCCL 2.28.9 src/enqueue.cc calcCollChunking, which
  /// scheduleCollTasksToPlan calls per channel on its own bytes; device.h ncclProtoGrainSize).
  double tree_ll128_chunk(double channel_bytes) const;
  /// NCCL's point-to-point plan for one peer of `bytes` (enqueue.cc addP2pToPlan).
  struct P2pPlan {
    hw::NcclProto proto = hw::NcclProto::kSimple;
    int channels = 1;      ///< channels this peer's transfer is spread over
    int per_peer_max = 1;  ///< p2pnChannelsPerPeer
    int total = 1;         ///< p2pnChannels
  };
  P2pPlan p2p_plan(double bytes_per_peer) const;

 private:
  int coll_channels(CollOp op, double bytes, hw::NcclProto p, bool ring) const;
  TuneCell price(CollOp op, double bytes, hw::NcclAlgo a, hw::NcclProto p) const;
  const hw::SystemSpec& sys_;
  const hw::NcclTuning& t_;
  int gpus_, nodes_, ppn_, channels_, nvls_channels_;
  std::string arch_;
};

}  // namespace ridge::models
