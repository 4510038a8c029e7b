// NCCL collectives as flows on a system's links.
//
// Captures: all-reduce, all-gather, reduce-scatter, broadcast and reduce by ring, tree (a chain
// inside a node, NCCL's double binary tree across nodes), NVLS (NVLink SHARP: each GPU reads the
// switch-reduced shards and multicasts results; per GPU and direction S(n+1)/n bytes for an
// all-reduce), NVLS-tree and CollNet (in-network reduction past one node); all-to-all and
// send/recv as point-to-point transfers. Algorithm and protocol are chosen by NCCL's tuning model
// (models/nccl_tuner.hpp) or forced. Channels are bundled per NIC rail (inside a node every
// channel crosses the same ports, so one bundle is exact there). Each protocol puts its wire
// format on the links (LL: 16 B lines of 8 B data, x2; LL128: 120 of 128 B, x16/15; Simple x1).
// The SM side of a ring: each channel is one CUDA block that loads and stores every byte its
// primitives touch, so a ring moves at most blocks x rate / (loads + stores per byte sent: NCCL's
// ring loop, (3n-2)/(n-1) all-reduce, (3n-1)/(n-1) all-gather and reduce-scatter, 3 broadcast
// and reduce), the per-block rate of each protocol fitted on ring all-reduce (configs/nccl;
// Hopper); inside a node it replaces NCCL's LL/LL128 cap, across nodes the lower holds. A tree
// inside one node (a chain) is bound the same way, at the same rates, by its busiest block's
// loads + stores per byte of its share (NCCL's runTreeSplit: 4 on two ranks, 6 with middle
// ranks), replacing NCCL's tree caps there; a tree's LL128 receive FIFO, kept full by its
// slower consumer, is reread NCCL_STEPS chunks after it is written, and once that reuse
// distance (with the channels' source and output streams) passes the GPU's L2, the blocks run
// at a lower rate, fitted on tree LL128 at 2-8 GiB (NCCL's chunk rule sets which sizes). A ring
// runs on NCCL's channels for its size (trimmed for small sizes, then cells of 16 KiB traffic:
// NcclTuner::ring_channels, checked against NCCL's logged channels). Point-to-point: NCCL's
// protocol (LL up to channels-per-peer x 16 KiB) and channels per peer by size
// (NcclTuner::p2p_plan); inside a node each channel's block sends and receives its share, so a
// peer's Simple transfer moves at most channels x rate / 4 (rate fitted on send/recv). Other
// algorithms keep NCCL's LL/LL128 caps; Simple outside rings is bounded by the links.
// Pipelining: a ring streams data through every rank in 2(n-1) (all-reduce) steps; its fluid
// limit is one flow whose path is the whole ring, so the ring runs at the max-min share of its
// slowest link, as the step-synchronous ring does (step time = the slowest edge's), and it
// feels every other transfer on every link it crosses. A tree's edges are flows of their own,
// started as the pipeline fills: an edge at height h starts h steps of one NCCL chunk
// (buffer / NCCL_STEPS) after the leaves, at the line rate; a chain inside a node is one flow
// over its hops, started after (hops - 1) steps. Time = NCCL's latency model for the
// algorithm and protocol (base + per-step hardware latencies; the links' own latencies are
// part of it) + the flows' simulated transfer.
// Ignores: PXN, adaptive routing, the reduction's arithmetic (its loads and stores are in the
// SM side), the SM side of NVLS kernels, of trees across nodes and of point-to-point across
// nodes or with LL (no measured rate), all-to-all's copy to itself, the mid-size ramp of
// Simple/LL128 rings (not explained; docs/collectives.md), the L2 for any FIFO but a tree
// LL128's inside a node, and partial hits (past the L2, every FIFO read is taken to miss).
// Validated: against NCCL on two H200s (validate/data/h200x2) and the published 8-GPU figures
// (tests/systems/test_collective_validation.cpp; docs/collectives.md).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/nccl_tuning.hpp"
#include "hw/system_spec.hpp"
#include "models/fabric.hpp"
#include "models/nccl_tuner.hpp"
#include "sim/flow.hpp"
#include "sim/simulator.hpp"

namespace ridge::models {

struct CollectiveRequest {
  CollOp op = CollOp::kAllReduce;
  double bytes = 0;  ///< nccl-tests' size: all-gather's output, reduce-scatter's input, ...
  int gpus = 0;
  std::optional<hw::NcclAlgo> algo;    ///< forced (NCCL_ALGO), else NCCL's choice
  std::optional<hw::NcclProto> proto;  ///< forced (NCCL_PROTO), else NCCL's choice
  int root = 0;                        ///< broadcast and reduce
  bool nvls_enabled = true;            ///< NCCL_NVLS_ENABLE: false turns NVLS and NVLS-tree off
  /// Host time to issue the call before the GPUs start (back-to-back calls from one thread that
  /// drives every rank pay it serially; 0 when each rank has its own process and calls overlap).
  double host_issue_s = 0;
  std::vector<int> ranks;  ///< the fabric's GPUs taking part, in rank order (empty: 0..gpus-1)
};

struct CollectiveResult {
  CollOp op = CollOp::kAllReduce;
  double bytes = 0;
  int gpus = 0;
  hw::NcclAlgo algo = hw::NcclAlgo::kRing;
  hw::NcclProto proto = hw::NcclProto::kSimple;
  bool p2p = false;     ///< run as point-to-point transfers
  bool forced = false;  ///< algorithm or protocol forced by the request
  std::string why;      ///< why this algorithm and protocol
  TuneResult tune;      ///< NCCL's model, every cell
  double time_s = 0;
  double latency_s = 0;      ///< the latency part (NCCL's model for the chosen cell)
  double algbw = 0;          ///< B/s, bytes / time
  double busbw = 0;          ///< B/s, algbw x nccl-tests' factor
  double nccl_model_us = 0;  ///< NCCL's own estimate for the chosen cell
  int channels = 0;
  int sm_blocks = 0;  ///< CUDA blocks (one SM each) the collective's kernel occupies per GPU
  long long flows = 0;
  /// A ring's SM-side bound: B/s of data per edge its channels' blocks can load and store
  /// (blocks x rate / loads + stores per byte sent); 0 where Ridge has none.
  double sm_bound = 0;
  double sm_loads_stores_per_byte = 0;  ///< of that bound
  bool sm_bound_binds = false;  ///< below the ring's slowest link: the SMs, not a link, limit
  /// A tree LL128 all-reduce inside a node: bytes through a GPU's L2 between a receive FIFO
  /// line's write and its read (0 where not modelled); whether that is past the GPU's L2; and
  /// whether the blocks then run at the rate measured past it (configs/nccl
  /// tree_ll128_l2_miss_gbps; none measured for the GPU's class: the SM side as within).
  double fifo_reuse_bytes = 0;
  bool fifo_past_l2 = false;
  bool fifo_miss_rate = false;
  std::string bottleneck;             ///< the busiest link while it ran
  double bottleneck_utilisation = 0;  ///< its bytes / (capacity x transfer time)
  double bottleneck_capacity = 0;     ///< B/s
};

/// Chooses the algorithm and protocol (NCCL's model, or the forced ones). Throws
/// std::invalid_argument if a forced combination is disabled, naming why and what is enabled.
CollectiveResult choose_collective(const NcclTuner& tuner, const CollectiveRequest& req);

/// Starts a collective on a fabric inside a running simulation; `done` runs when its last flow
/// completes, with the result filled (time from the start call).
void start_collective(sim::Simulator& sim, sim::FlowNetwork& net, const Fabric& fabric,
                      const NcclTuner& tuner, const CollectiveRequest& req,
                      std::function<void(const CollectiveResult&)> done);

/// Runs one collective alone on a fresh fabric of `system`.
CollectiveResult simulate_collective(const hw::SystemSpec& system, const hw::NcclTuning& tuning,
                                     const CollectiveRequest& req);

/// Parses "ring", "tree", "nvls", "nvls_tree", "collnet" (= collnet_direct), "collnet_chain".
bool parse_nccl_algo(std::string_view s, hw::NcclAlgo& out);
/// Parses "ll", "ll128", "simple" (any case).
bool parse_nccl_proto(std::string_view s, hw::NcclProto& out);

}  // namespace ridge::models
