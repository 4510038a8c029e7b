#include "models/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>

namespace ridge::models {

using hw::NcclAlgo;
using hw::NcclProto;

bool parse_nccl_algo(std::string_view s, NcclAlgo& out) {
  std::string k;
  for (char c : s)
    k += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (k == "collnet") k = "collnet_direct";
  if (k == "nvlstree") k = "nvls_tree";
  for (int a = 0; a < hw::kNcclAlgos; ++a)
    if (hw::nccl_algo_name(static_cast<NcclAlgo>(a)) == k) {
      out = static_cast<NcclAlgo>(a);
      return true;
    }
  return false;
}

bool parse_nccl_proto(std::string_view s, NcclProto& out) {
  std::string k;
  for (char c : s) k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (int p = 0; p < hw::kNcclProtos; ++p)
    if (hw::nccl_proto_name(static_cast<NcclProto>(p)) == k) {
      out = static_cast<NcclProto>(p);
      return true;
    }
  return false;
}

CollectiveResult choose_collective(const NcclTuner& tuner, const CollectiveRequest& req) {
  CollectiveResult r;
  r.op = req.op;
  r.bytes = req.bytes;
  r.gpus = req.gpus;
  r.p2p = is_p2p(req.op) || req.gpus < 2;
  r.forced = req.algo.has_value() || req.proto.has_value();
  r.channels = tuner.channels();
  r.tune = tuner.tune(req.op, req.bytes);
  if (r.p2p) {
    // NCCL sends a peer's data with LL while it is at most NCCL_P2P_LL_THRESHOLD (16 KiB) per
    // channel of the peer's channels (src/enqueue.cc addP2pToPlan), else Simple, spread over a
    // number of channels that grows with its size; NCCL_ALGO and NCCL_PROTO do not apply
    // (measured: send/recv with LL forced moves 8 GiB at 365 GB/s on two H200s, as Simple).
    const double per_peer =
        req.op == CollOp::kAllToAll ? req.bytes / std::max(1, req.gpus) : req.bytes;
    const NcclTuner::P2pPlan pp = tuner.p2p_plan(per_peer);
    r.proto = pp.proto;
    r.forced = false;
    r.channels = pp.channels;
    const int peers = req.op == CollOp::kAllToAll ? std::max(1, req.gpus) : 1;
    r.sm_blocks = std::min(pp.total, pp.channels * peers);
    r.why = req.gpus < 2 ? "one rank: a local copy"
                         : fmt::format(
                               "point-to-point, {} on {} channels per peer (NCCL: LL up to {} "
                               "KiB per peer; NCCL_ALGO/NCCL_PROTO do not apply)",
                               hw::nccl_proto_name(r.proto), pp.channels,
                               pp.per_peer_max * tuner.tuning().p2p.ll_threshold / 1024);
    // Ring's base latency and one hop of the link class crossed (NVLink, PCIe, network).
    const int link_class = tuner.nodes() > 1 ? 2 : tuner.intra_link_class();
    const int pi = static_cast<int>(r.proto);
    const double lat =
        tuner.tuning().base_lat_us[1][pi] + tuner.tuning().hw_lat_us[link_class][1][pi];
    r.latency_s = lat * 1e-6;
    r.nccl_model_us = 0;
    return r;
  }
  int best = -1;
  double best_t = std::numeric_limits<double>::infinity();
  std::vector<std::string> enabled;
  for (std::size_t i = 0; i < r.tune.cells.size(); ++i) {
    const TuneCell& c = r.tune.cells[i];
    if (req.algo && c.algo != *req.algo) continue;
    if (req.proto && c.proto != *req.proto) continue;
    if (!c.enabled) continue;
    if (!req.nvls_enabled && (c.algo == NcclAlgo::kNvls || c.algo == NcclAlgo::kNvlsTree)) continue;
    enabled.push_back(
        fmt::format("{}/{}", hw::nccl_algo_name(c.algo), hw::nccl_proto_name(c.proto)));
    if (c.time_us < best_t) best_t = c.time_us, best = static_cast<int>(i);
  }
  if (best < 0) {
    // Every distinct reason over the forced cells (one protocol's reason alone can mislead).
    std::string why;
    for (const TuneCell& c : r.tune.cells)
      if ((!req.algo || c.algo == *req.algo) && (!req.proto || c.proto == *req.proto)) {
        const std::string w = c.enabled ? "NVLS turned off (NCCL_NVLS_ENABLE=0)" : c.why_disabled;
        if (why.find(w) == std::string::npos) why += (why.empty() ? "" : "; ") + w;
      }
    std::vector<std::string> all;
    for (const TuneCell& c : r.tune.cells)
      if (c.enabled &&
          (req.nvls_enabled || (c.algo != NcclAlgo::kNvls && c.algo != NcclAlgo::kNvlsTree)))
        all.push_back(
            fmt::format("{}/{}", hw::nccl_algo_name(c.algo), hw::nccl_proto_name(c.proto)));
    throw std::invalid_argument(
        fmt::format("--algo/--proto: {}{}{} is not available for {} on {} GPUs: {}; available: {}",
                    req.algo ? hw::nccl_algo_name(*req.algo) : "any", req.proto ? "/" : "",
                    req.proto ? hw::nccl_proto_name(*req.proto) : "", coll_op_name(req.op),
                    req.gpus, why, fmt::join(all, ", ")));
  }
  const TuneCell& c = r.tune.cells[static_cast<std::size_t>(best)];
  r.algo = c.algo;
  r.proto = c.proto;
  r.latency_s = c.latency_us * 1e-6;
  r.nccl_model_us = c.time_us;
  const bool nvls = c.algo == NcclAlgo::kNvls || c.algo == NcclAlgo::kNvlsTree;
  r.channels = nvls ? tuner.nvls_channels() : tuner.channels();
  // NCCL launches twice the channels its search found on NVLink (one block each); a ring uses
  // fewer for small sizes (NCCL's trimming and its cells of 16 KiB traffic), and so does a tree
  // inside one node (the same rule; checked against NCCL's logged counts there only).
  r.sm_blocks = nvls                        ? r.channels
                : c.algo == NcclAlgo::kRing ? tuner.ring_channels(req.op, req.bytes, c.proto)
                : c.algo == NcclAlgo::kTree && tuner.nodes() == 1
                    ? tuner.tree_channels(req.bytes, c.proto)
                    : 2 * r.channels;
  if (r.forced) {
    r.why = fmt::format("forced; NCCL's model prices it at {:.1f} us", c.time_us);
  } else {
    // The runner-up, to say by how much this one wins.
    double second = std::numeric_limits<double>::infinity();
    std::string second_name;
    for (const TuneCell& o : r.tune.cells)
      if (o.enabled && &o != &c && o.time_us < second &&
          (req.nvls_enabled || (o.algo != NcclAlgo::kNvls && o.algo != NcclAlgo::kNvlsTree)))
        second = o.time_us, second_name = fmt::format("{}/{}", hw::nccl_algo_name(o.algo),
                                                      hw::nccl_proto_name(o.proto));
    r.why = second_name.empty()
                ? fmt::format("NCCL's model: the only enabled choice ({:.1f} us)", c.time_us)
                : fmt::format("NCCL's model: {:.1f} us, fastest of {} enabled (next {} {:.1f} us)",
                              c.time_us, enabled.size(), second_name, second);
  }
  return r;
}

namespace {

// Loads + stores per byte a ring rank sends, over one loop of NCCL's ring kernels (NCCL
// 2.28.9 src/device/all_reduce.h, all_gather.h, reduce_scatter.h, broadcast.h, reduce.h runRing
// and the primitives of prims_simple.h / prims_ll*.h). Each primitive's loads + stores per
// byte: send 2 (source, peer's buffer), receive 2 (own buffer, output), copy-send 3 (source;
// output and peer), receive-copy-send 3, receive-reduce-send 3 (buffer and source; peer),
// receive-reduce-copy 3, receive-reduce-copy-send 4. Per loop each rank sends n-1 chunks
// (all-gather, reduce-scatter) or 2(n-1) (all-reduce):
//   all-reduce: send + (n-2) recv-reduce-send + recv-reduce-copy-send + (n-2) recv-copy-send
//               + recv = 2 + 3(n-2) + 4 + 3(n-2) + 2 = 6n-4 over 2(n-1) chunks sent;
//   all-gather: copy-send + (n-2) recv-copy-send + recv = 3n-1 over n-1;
//   reduce-scatter: send + (n-2) recv-reduce-send + recv-reduce-copy = 3n-1 over n-1;
//   broadcast, reduce: a middle rank's recv-copy-send or recv-reduce-send, 3 per byte (the
//   root's copy-send is 3 too; the last rank's receive 2).
double ring_memory_ops(CollOp op, int n) {
  const double k = std::max(2, n);
  switch (op) {
    case CollOp::kAllReduce:
      return (6 * k - 4) / (2 * (k - 1));
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
      return (3 * k - 1) / (k - 1);
    default:
      return 3.0;
  }
}

// Loads + stores per byte of a channel's share, for the busiest block of NCCL's tree
// all-reduce on a chain inside one node (NCCL 2.28.9 src/device/all_reduce.h runTreeSplit, the
// kernel of every tree protocol; a chain's channels are rooted at either end, each end root of
// half of them). The root's block runs recv-reduce-copy-send on all its threads: its buffer and
// its source loaded, its output and the next rank's buffer stored, 4. A leaf's block splits its
// threads between a send (source, peer's buffer: 2) and a receive (own buffer, output: 2), 4
// for the block. A middle rank's block splits them between recv-reduce-send up (3) and
// recv-copy-send down (3), 6. Counted per block, as the ring's are: the per-block rate is one
// SM's loads and stores, whichever warps issue them. Two ranks: 4 (root and leaf alike);
// more: 6.
double tree_memory_ops(int n) {
  return n <= 2 ? 4.0 : 6.0;
}

// A tree LL128 all-reduce inside one node: the bytes that pass through a GPU's L2 between a
// receive FIFO line's write (by the peer, over NVLink) and its read. A tree's stages are
// decoupled by FIFOs of NCCL_STEPS slots of one chunk each, and a slower consumer keeps each
// one full (on two ranks a leaf block's receive runs on 30% of its threads, NCCL 2.28.9
// src/device/all_reduce.h runTreeSplit), so a line waits NCCL_STEPS steps; in that time every
// channel's FIFOs take NCCL_STEPS chunks each on the wire (x16/15), and its source and output
// stream through the L2, one chunk each per step. Busiest GPU: one FIFO per channel at the ends
// of the chain, two in the middle. Remote stores are taken to be cached at their destination's
// L2, not the sender's. Two H200s, 24 channels: 8 x 24 x chunk x (16/15 + 2) = 588.8 x chunk, 339
// MB at the full 576,000 B chunk, 41.8 MB at 71,040 B (128 MiB), against a 60 MiB L2. A ring's
// reader runs one step behind its writer (the peers run the same loop in step), so its reuse
// distance is about NCCL_STEPS times smaller and stays inside the L2.
double tree_ll128_reuse_bytes(const NcclTuner& tuner, int channels, int ranks, double bytes) {
  const hw::NcclTuning& t = tuner.tuning();
  const auto pi = static_cast<std::size_t>(NcclProto::kLL128);
  const int ch = std::max(1, channels);
  const double chunk = tuner.tree_ll128_chunk(bytes / ch);
  const double fifos = ranks > 2 ? 2 : 1;
  return t.steps * ch * chunk * (fifos * t.wire_factor[pi] + 2);
}

// One transfer of the plan: bytes on the wire over a path (links [first, first + count) of the
// plan's flat link list), capped, started after a delay.
struct PlannedFlow {
  std::uint32_t first = 0, count = 0;
  double wire_bytes = 0;
  double cap = sim::FlowNetwork::kNoRateLimit;  // wire B/s
  double delay_s = 0;                           // after the collective's latency
};

struct Planner {
  const Fabric& fabric;
  const NcclTuner& tuner;
  const CollectiveRequest& req;
  const CollectiveResult& choice;
  std::vector<int> ranks;
  std::vector<PlannedFlow> flows;
  std::vector<sim::LinkId> links{};    // every flow's path, one after another
  std::vector<sim::LinkId> scratch{};  // the path being built (reused: no allocation per flow)
  double wire = 1.0;                   // wire bytes per data byte
  double cap_data = 0;    // the protocol's data-rate cap for the whole collective, B/s (inf: none)
  double step_s = 0;      // one pipeline step of one chunk at the line rate, plus its latency
  double sm_cap = 0;      // a ring's SM-side bound, B/s of data (0: none)
  double sm_ops = 0;      // its loads + stores per byte sent
  double fifo_reuse = 0;  // a tree LL128 receive FIFO's reuse distance, bytes (0: none)
  bool fifo_past_l2 = false;  // beyond the GPU's L2
  bool fifo_rate = false;     // and the blocks' rate measured past it applies

  int n() const { return static_cast<int>(ranks.size()); }
  int gpu(int rank) const { return ranks[static_cast<std::size_t>(rank)]; }

  void add(const std::vector<sim::LinkId>& path, double data_bytes, double cap_share,
           double delay) {
    if (path.empty() || data_bytes <= 0) return;
    PlannedFlow f;
    f.first = static_cast<std::uint32_t>(links.size());
    f.count = static_cast<std::uint32_t>(path.size());
    links.insert(links.end(), path.begin(), path.end());
    f.wire_bytes = data_bytes * wire;
    f.cap = std::isfinite(cap_data) ? cap_data * cap_share * wire : sim::FlowNetwork::kNoRateLimit;
    f.delay_s = delay;
    flows.push_back(std::move(f));
  }
  // Links of a chain of ranks a -> b -> c ... (one hop per consecutive pair) on `rail`.
  // (Built in `scratch`: valid until the next chain() or hop().)
  const std::vector<sim::LinkId>& chain(const std::vector<int>& order, int rail, bool closed) {
    std::vector<sim::LinkId>& p = scratch;
    p.clear();
    for (std::size_t i = 0; i + 1 < order.size(); ++i)
      fabric.append_path(p, gpu(order[i]), gpu(order[i + 1]), rail);
    if (closed && order.size() > 1)
      fabric.append_path(p, gpu(order.back()), gpu(order.front()), rail);
    return p;
  }
  // One GPU's path to another (fabric.path), built in `scratch`.
  const std::vector<sim::LinkId>& hop(int src_gpu, int dst_gpu, int rail = -1) {
    scratch.clear();
    fabric.append_path(scratch, src_gpu, dst_gpu, rail);
    return scratch;
  }
  // Nodes taking part, and the ranks of each, in rank order.
  std::vector<std::vector<int>> by_node() const {
    std::vector<std::vector<int>> out;
    int last = -1;
    for (int r = 0; r < n(); ++r) {
      const int node = fabric.nvlink_between(gpu(r), gpu(0)) &&
                               fabric.system().network.kind == hw::NetworkKind::kNvlinkDomain
                           ? 0
                           : fabric.node_of(gpu(r));
      if (node != last) out.emplace_back(), last = node;
      out.back().push_back(r);
    }
    return out;
  }
  // A node's ranks starting at the one on `rail` (its leader for that rail).
  std::vector<int> local_order(const std::vector<int>& local, int rail) const {
    std::size_t start = 0;
    for (std::size_t i = 0; i < local.size(); ++i)
      if (fabric.rail_of(gpu(local[i])) == rail) {
        start = i;
        break;
      }
    std::vector<int> out;
    for (std::size_t i = 0; i < local.size(); ++i) out.push_back(local[(start + i) % local.size()]);
    return out;
  }
  // Past one node, channels are bundled by NIC rail: one bundle per rail of the node's taking
  // part GPUs' own NICs (NCCL's search puts a channel on a GPU's nearest NIC; a group of one GPU
  // per node reaches the network through that GPU's NIC alone), at most one per channel.
  std::vector<int> rails_used{};
  int bundles(std::size_t nodes) const {
    return nodes > 1 ? std::max(1, std::min(static_cast<int>(rails_used.size()), choice.channels))
                     : 1;
  }
  int rail(int b) const {
    return rails_used.empty() ? b : rails_used[static_cast<std::size_t>(b) % rails_used.size()];
  }

  void ring(double per_edge) {
    const auto nodes = by_node();
    const int b_count = bundles(nodes.size());
    for (int b = 0; b < b_count; ++b) {
      std::vector<int> order;
      if (nodes.size() == 1) {
        for (int r = 0; r < n(); ++r) order.push_back(r);
      } else {
        for (const auto& local : nodes) {
          const auto lo = local_order(local, rail(b));
          order.insert(order.end(), lo.begin(), lo.end());
        }
      }
      const bool rooted = req.op == CollOp::kBroadcast || req.op == CollOp::kReduce;
      if (rooted) std::rotate(order.begin(), order.begin() + (req.root % n()), order.end());
      add(chain(order, rail(b), !rooted), per_edge / b_count, 1.0 / b_count, 0.0);
    }
  }

  // NCCL's double binary tree over `m` nodes: tree 0 a heap-ordered binary tree rooted at 0,
  // tree 1 the same over the nodes in reverse, so that tree 0's inner nodes are tree 1's leaves.
  static int parent(int k, int t, int m) {
    const int i = t == 0 ? k : m - 1 - k;
    if (i == 0) return -1;
    const int p = (i - 1) / 2;
    return t == 0 ? p : m - 1 - p;
  }
  void tree() {
    const auto nodes = by_node();
    const int m = static_cast<int>(nodes.size());
    const int b_count = bundles(nodes.size());
    const double data = req.bytes / (2.0 * b_count);  // two trees, each half the data
    const double share = 1.0 / (2.0 * b_count);
    // Heights (up) and depths (down) of each node in each tree (the same for every bundle).
    std::array<std::vector<int>, 2> height, depth;
    std::array<int, 2> root_height{};
    if (m > 1)
      for (int t = 0; t < 2; ++t) {
        height[t].assign(static_cast<std::size_t>(m), 0);
        depth[t].assign(static_cast<std::size_t>(m), 0);
        for (int k = m - 1; k >= 0; --k) {
          const int p = parent(k, t, m);
          if (p >= 0) height[t][p] = std::max(height[t][p], height[t][k] + 1);
        }
        for (int k = 0; k < m; ++k) {
          int d = 0;
          for (int p = parent(k, t, m); p >= 0; p = parent(p, t, m)) ++d;
          depth[t][k] = d;
        }
        root_height[t] = *std::max_element(height[t].begin(), height[t].end());
      }
    std::vector<std::vector<int>> order(static_cast<std::size_t>(m)), up(order.size());
    for (int b = 0; b < b_count; ++b) {
      // Each node's chain for this bundle's rail, led by the rail's GPU, and its reverse.
      if (m > 1)
        for (int k = 0; k < m; ++k) {
          order[k] = local_order(nodes[k], rail(b));
          up[k].assign(order[k].rbegin(), order[k].rend());
        }
      for (int t = 0; t < 2; ++t) {
        if (m == 1) {
          std::vector<int> o;  // root first; tree 1 runs the chain the other way
          for (int r = 0; r < n(); ++r) o.push_back(t == 0 ? r : n() - 1 - r);
          std::vector<int> u(o.rbegin(), o.rend());
          const double hops = n() - 1;
          add(chain(u, b, false), data, share, (hops - 1) * step_s);
          add(chain(o, b, false), data, share, (2 * hops - 1) * step_s);
          continue;
        }
        const int ppn = static_cast<int>(nodes[0].size());
        const double down0 = (ppn - 1 + root_height[t]) * step_s;
        for (int k = 0; k < m; ++k) {
          if (order[k].size() > 1) {
            // Both trees reduce up the same chain at the same time: one flow for the two.
            if (t == 0) add(chain(up[k], rail(b), false), 2 * data, 2 * share, (ppn - 2) * step_s);
            add(chain(order[k], rail(b), false), data, share,
                down0 + (depth[t][k] + ppn - 2) * step_s);
          }
          const int p = parent(k, t, m);
          if (p < 0) continue;
          const int me = gpu(order[k].front());
          const int boss = gpu(order[p].front());
          add(hop(me, boss, rail(b)), data, share, (ppn - 1 + height[t][k]) * step_s);
          add(hop(boss, me, rail(b)), data, share, down0 + (depth[t][k] - 1) * step_s);
        }
      }
    }
  }

  // NVLS: per GPU, S(n+1)/n up to the switch and down for an all-reduce (the reduced shards it
  // reads and the shard it multicasts), S/n up and S down for an all-gather, S up and S/n down for
  // a reduce-scatter; the switch's reduction and multicast run at NCCL's NVLS efficiency.
  void nvls(double eff, int ppn_ranks, double inter_share) {
    const double s = req.bytes, k = ppn_ranks;
    double up = s * (k + 1) / k, down = up;
    if (req.op == CollOp::kAllGather) up = s / k, down = s;
    if (req.op == CollOp::kReduceScatter) up = s, down = s / k;
    (void)inter_share;
    for (int r = 0; r < n(); ++r) {
      add({fabric.nvlink_up(gpu(r))}, up / eff, 1.0, 0.0);
      add({fabric.nvlink_down(gpu(r))}, down / eff, 1.0, step_s);
    }
  }
  // Across nodes, each GPU's shard (S / ppn) through its own rail: a double binary tree over the
  // nodes (NVLS-tree), or the switches' reduction (CollNet).
  void inter_shards(bool in_network) {
    const auto nodes = by_node();
    const int m = static_cast<int>(nodes.size());
    const int ppn = static_cast<int>(nodes[0].size());
    const double shard = req.bytes / ppn;
    for (int k = 0; k < m; ++k)
      for (int r : nodes[k]) {
        const int g = gpu(r), rail = fabric.rail_of(g);
        if (in_network) {
          add(fabric.to_network(g, rail), shard, 1.0 / n(), step_s);
          add(fabric.from_network(g, rail), shard, 1.0 / n(), 2 * step_s);
          continue;
        }
        for (int t = 0; t < 2; ++t) {
          const int p = parent(k, t, m);
          if (p < 0) continue;
          const int peer = gpu(nodes[p][static_cast<std::size_t>(r - nodes[k].front())]);
          add(hop(g, peer, rail), shard / 2, 0.5 / n(), step_s);
          add(hop(peer, g, rail), shard / 2, 0.5 / n(), 2 * step_s);
        }
      }
  }

  void p2p() {
    if (req.op == CollOp::kSendRecv) {
      for (int r = 0; r < n(); ++r) add(hop(gpu(r), gpu((r + 1) % n())), req.bytes, 1.0, 0.0);
      return;
    }
    const double each = req.bytes / n();  // all-to-all: every rank sends S/n to every other
    for (int a = 0; a < n(); ++a)
      for (int d = 1; d < n(); ++d) add(hop(gpu(a), gpu((a + d) % n())), each, 1.0, 0.0);
  }

  void plan() {
    const hw::NcclTuning& t = tuner.tuning();
    const int pi = static_cast<int>(choice.proto);
    wire = t.wire_factor[static_cast<std::size_t>(pi)];
    const double step_bytes = t.buffer_bytes[static_cast<std::size_t>(pi)] / t.steps / wire;
    const double line = fabric.has_nvlink() ? fabric.nvlink_rate() : fabric.pcie_rate();
    step_s = step_bytes * wire / line;
    cap_data = std::numeric_limits<double>::infinity();
    if (n() < 2) return;
    {
      const auto nodes = by_node();
      for (int r : nodes.front()) rails_used.push_back(fabric.rail_of(gpu(r)));
      std::sort(rails_used.begin(), rails_used.end());
      rails_used.erase(std::unique(rails_used.begin(), rails_used.end()), rails_used.end());
    }
    if (choice.p2p) {
      // Inside a node each channel's block sends its share to the peer and receives the
      // peer's (2 + 2 loads + stores per byte): a peer's transfer moves at most channels x
      // rate / 4 (rate fitted on send/recv, Simple; none for LL, nor across nodes).
      const double rate = t.p2p_block_rate(tuner.arch_class());
      if (rate > 0 && tuner.nodes() == 1 && choice.proto == NcclProto::kSimple) {
        sm_ops = 4;
        sm_cap = choice.channels * rate / sm_ops;
        cap_data = sm_cap;
      }
      return p2p();
    }
    // The SM side of LL and LL128 channels caps them (NCCL's busbw caps); Simple is link-bound.
    const TuneCell* cell = nullptr;
    for (const TuneCell& c : choice.tune.cells)
      if (c.algo == choice.algo && c.proto == choice.proto) cell = &c;
    if (cell && choice.proto != NcclProto::kSimple) cap_data = cell->busbw_gbps * 1e9;
    const double s = req.bytes, nn = n();
    // A channel's block loads and stores every byte its primitives touch; with a measured
    // per-block rate that bounds a ring (inside a node it replaces NCCL's single LL/LL128 cap,
    // which is NCCL's model of the same SM side; across nodes the lower holds) and a tree inside
    // one node, a chain (the same rates, measured on rings, replacing NCCL's tree caps there).
    const bool is_ring = choice.algo == NcclAlgo::kRing;
    if (is_ring || (choice.algo == NcclAlgo::kTree && tuner.nodes() == 1)) {
      double rate = t.channel_mem_rate(tuner.arch_class(), choice.proto);
      if (!is_ring && choice.proto == NcclProto::kLL128) {
        // A tree LL128 FIFO's reuse distance against the L2 (tree_ll128_reuse_bytes): past it,
        // the blocks run at the rate measured there (fitted; none: the SM side as before).
        fifo_reuse = tree_ll128_reuse_bytes(tuner, choice.sm_blocks, n(), req.bytes);
        const double miss = t.tree_ll128_miss_rate(tuner.arch_class());
        const double l2 = fabric.system().node.gpu.memory.l2_size;
        fifo_past_l2 = l2 > 0 && fifo_reuse > l2;
        if (fifo_past_l2 && miss > 0) rate = miss, fifo_rate = true;
      }
      if (rate > 0) {
        sm_ops = is_ring ? ring_memory_ops(req.op, n()) : tree_memory_ops(n());
        sm_cap = choice.sm_blocks * rate / sm_ops;
        cap_data = tuner.nodes() == 1 ? sm_cap : std::min(cap_data, sm_cap);
      }
    }
    switch (choice.algo) {
      case NcclAlgo::kRing: {
        double per_edge = s;
        if (req.op == CollOp::kAllReduce) per_edge = 2 * (nn - 1) / nn * s;
        if (req.op == CollOp::kAllGather || req.op == CollOp::kReduceScatter)
          per_edge = (nn - 1) / nn * s;
        return ring(per_edge);
      }
      case NcclAlgo::kTree:
        return tree();
      case NcclAlgo::kNvls:
        return nvls(t.nvls_eff(tuner.arch_class()), n(), 0);
      case NcclAlgo::kNvlsTree: {
        const int ppn = static_cast<int>(by_node()[0].size());
        nvls(t.nvls_eff(tuner.arch_class()), ppn, 0);
        return inter_shards(false);
      }
      case NcclAlgo::kCollNetDirect:
      case NcclAlgo::kCollNetChain: {
        // Inside each node a ring reduce-scatter and all-gather over NVLink, across nodes each
        // GPU's shard through the switches' reduction.
        const auto nodes = by_node();
        const double k = static_cast<double>(nodes[0].size());
        for (const auto& local : nodes) {
          if (local.size() < 2) continue;
          add(chain(local, 0, true), 2 * (k - 1) / k * s, 1.0 / nodes.size(), 0.0);
        }
        return inter_shards(true);
      }
    }
  }
};

struct Running {
  CollectiveResult result;
  sim::Simulator* sim = nullptr;
  sim::FlowNetwork* net = nullptr;
  sim::Time start;
  std::size_t pending = 0;
  double latency_s = 0;
  std::vector<sim::LinkId> links;  // the links it crosses, for its bottleneck
  std::vector<double> bytes_before;
  std::vector<sim::LinkId> paths;  // the plan's flat path list
  std::vector<PlannedFlow> flows;
  // Flows by start time: the flows of group g are order[group_first[g] .. group_first[g+1]).
  std::vector<std::uint32_t> order, group_first;
  std::function<void(const CollectiveResult&)> done;

  void finish() {
    CollectiveResult& r = result;
    r.time_s = (sim->now() - start).seconds();
    r.algbw = r.time_s > 0 ? r.bytes / r.time_s : 0;
    r.busbw = r.algbw * busbw_factor(r.op, std::max(1, r.gpus));
    const double transfer = std::max(1e-15, r.time_s - latency_s);
    for (std::size_t i = 0; i < links.size(); ++i) {
      const double moved = net->link_stats(links[i]).bytes - bytes_before[i];
      const double cap = net->link_capacity(links[i]);
      const double u = cap > 0 ? moved / (cap * transfer) : 0;
      if (moved > 0 && u > r.bottleneck_utilisation) {
        r.bottleneck_utilisation = u;
        r.bottleneck = net->link_name(links[i]);
        r.bottleneck_capacity = cap;
      }
    }
    if (done) done(r);
  }
};

}  // namespace

void start_collective(sim::Simulator& sim, sim::FlowNetwork& net, const Fabric& fabric,
                      const NcclTuner& tuner, const CollectiveRequest& req,
                      std::function<void(const CollectiveResult&)> done) {
  auto run = std::make_shared<Running>();
  run->result = choose_collective(tuner, req);
  run->sim = &sim;
  run->net = &net;
  run->start = sim.now();
  run->done = std::move(done);
  Planner plan{fabric, tuner, req, run->result, req.ranks, {}};
  if (plan.ranks.empty())
    for (int g = 0; g < req.gpus; ++g) plan.ranks.push_back(g);
  plan.plan();
  run->result.flows = static_cast<long long>(plan.flows.size());
  auto path_of = [&plan](const PlannedFlow& f) {
    return std::span<const sim::LinkId>(plan.links.data() + f.first, f.count);
  };
  run->result.sm_bound = plan.sm_cap;
  run->result.sm_loads_stores_per_byte = plan.sm_ops;
  run->result.fifo_reuse_bytes = plan.fifo_reuse;
  run->result.fifo_past_l2 = plan.fifo_past_l2;
  run->result.fifo_miss_rate = plan.fifo_rate;
  // The SM side binds where the cap it sets on a flow is below that flow's slowest link (for
  // point-to-point and trees, below its even share of that link among the plan's flows crossing
  // it: an all-to-all's peers share each GPU's port, and so do a tree's up and down chains).
  if (plan.sm_cap > 0) {
    std::vector<std::uint32_t> crossing;
    if (run->result.p2p || run->result.algo == NcclAlgo::kTree) {
      crossing.assign(net.link_count(), 0);
      for (sim::LinkId id : plan.links) ++crossing[id.index];
    }
    for (const PlannedFlow& f : plan.flows) {
      double slowest = std::numeric_limits<double>::infinity();
      for (sim::LinkId id : path_of(f))
        slowest = std::min(slowest,
                           net.link_capacity(id) / (crossing.empty() ? 1.0 : crossing[id.index]));
      if (f.cap < slowest * (1 - 1e-9)) run->result.sm_bound_binds = true;
    }
  }
  // The collective's latency is NCCL's model for its algorithm and protocol, the links' own
  // hop latencies included: flows start once it has passed, less their paths' latency.
  double path_latency = 0;
  for (const PlannedFlow& f : plan.flows) {
    double l = 0;
    for (sim::LinkId id : path_of(f)) l += net.link_latency(id).seconds();
    path_latency = std::max(path_latency, l);
  }
  const double lead = std::max(0.0, run->result.latency_s - path_latency) + req.host_issue_s;
  run->result.latency_s += req.host_issue_s;
  run->latency_s = run->result.latency_s;
  // The links this collective crosses, for its bottleneck.
  std::vector<char> seen(net.link_count(), 0);
  for (sim::LinkId id : plan.links)
    if (!seen[id.index]) seen[id.index] = 1, run->links.push_back(id);
  std::sort(run->links.begin(), run->links.end());
  run->bytes_before.reserve(run->links.size());
  for (sim::LinkId id : run->links) run->bytes_before.push_back(net.link_stats(id).bytes);
  if (plan.flows.empty()) {
    sim.schedule_after(sim::Time::from_seconds(run->result.latency_s), [run] { run->finish(); });
    return;
  }
  run->pending = plan.flows.size();
  // One event per distinct start time, starting its flows in plan order: the engine runs
  // same-time events in the order they were scheduled, so the flows start in the same order as
  // with one event each (and results are the same bit for bit), with far fewer events and no
  // allocation per flow (each closure fits the engine's inline callback).
  std::vector<std::pair<std::int64_t, std::uint32_t>> at;
  at.reserve(plan.flows.size());
  for (std::size_t i = 0; i < plan.flows.size(); ++i)
    at.emplace_back(sim::Time::from_seconds(lead + plan.flows[i].delay_s).ps,
                    static_cast<std::uint32_t>(i));
  std::stable_sort(at.begin(), at.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  run->order.reserve(at.size());
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (i == 0 || at[i].first != at[i - 1].first)
      run->group_first.push_back(static_cast<std::uint32_t>(i));
    run->order.push_back(at[i].second);
  }
  run->group_first.push_back(static_cast<std::uint32_t>(at.size()));
  run->paths = std::move(plan.links);
  run->flows = std::move(plan.flows);
  for (std::size_t g = 0; g + 1 < run->group_first.size(); ++g) {
    const sim::Time when{at[run->group_first[g]].first};
    sim.schedule_after(when, [run, g]() {
      Running& r = *run;
      for (std::uint32_t i = r.group_first[g]; i < r.group_first[g + 1]; ++i) {
        const PlannedFlow& f = r.flows[r.order[i]];
        r.net->start_flow(
            std::span<const sim::LinkId>(r.paths.data() + f.first, f.count), f.wire_bytes,
            [run]() {
              if (--run->pending == 0) run->finish();
            },
            f.cap);
      }
    });
  }
}

CollectiveResult simulate_collective(const hw::SystemSpec& system, const hw::NcclTuning& tuning,
                                     const CollectiveRequest& req) {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  if (req.ranks.empty()) {
    const Fabric fabric(system, req.gpus, net);
    const NcclTuner tuner(system, tuning, req.gpus);
    CollectiveResult out;
    start_collective(sim, net, fabric, tuner, req, [&out](const CollectiveResult& r) { out = r; });
    sim.run();
    return out;
  }
  // A group of chosen GPUs: a fabric of the whole nodes they sit on, and NCCL's view of the
  // group (its nodes and ranks per node).
  if (static_cast<int>(req.ranks.size()) != req.gpus)
    throw std::invalid_argument("collective: ranks must list `gpus` GPUs");
  const int per_node = system.node.gpus;
  const int top = *std::max_element(req.ranks.begin(), req.ranks.end());
  const Fabric fabric(system, std::max(per_node, (top / per_node + 1) * per_node), net);
  std::vector<int> count(static_cast<std::size_t>(top / per_node + 1), 0);
  for (int g : req.ranks) ++count[static_cast<std::size_t>(g / per_node)];
  int nodes = 0, ppn = 0;
  for (int c : count)
    if (c > 0) ++nodes, ppn = std::max(ppn, c);
  const NcclTuner tuner(system, tuning, nodes, ppn);
  CollectiveResult out;
  start_collective(sim, net, fabric, tuner, req, [&out](const CollectiveResult& r) { out = r; });
  sim.run();
  return out;
}

}  // namespace ridge::models
