#include "models/nccl_tuner.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace ridge::models {

using hw::NcclAlgo;
using hw::NcclProto;

std::string_view coll_op_name(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce:
      return "all_reduce";
    case CollOp::kAllGather:
      return "all_gather";
    case CollOp::kReduceScatter:
      return "reduce_scatter";
    case CollOp::kAllToAll:
      return "all_to_all";
    case CollOp::kBroadcast:
      return "broadcast";
    case CollOp::kReduce:
      return "reduce";
    case CollOp::kSendRecv:
      return "send_recv";
  }
  return "?";
}

bool parse_coll_op(std::string_view s, CollOp& out) {
  std::string k;
  for (char c : s)
    if (c != '_' && c != '-') k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (CollOp op : kAllCollOps) {
    std::string n;
    for (char c : coll_op_name(op))
      if (c != '_') n += c;
    if (n == k) {
      out = op;
      return true;
    }
  }
  return false;
}

double busbw_factor(CollOp op, int n) {
  switch (op) {
    case CollOp::kAllReduce:
      return 2.0 * (n - 1) / n;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAllToAll:
      return static_cast<double>(n - 1) / n;
    case CollOp::kBroadcast:
    case CollOp::kReduce:
    case CollOp::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

bool is_p2p(CollOp op) {
  return op == CollOp::kAllToAll || op == CollOp::kSendRecv;
}

NcclTuner::NcclTuner(const hw::SystemSpec& system, const hw::NcclTuning& tuning, int gpus)
    : sys_(system), t_(tuning), gpus_(gpus) {
  ppn_ = std::min(gpus, system.node.gpus);
  nodes_ = (gpus + system.node.gpus - 1) / system.node.gpus;
  channels_ = system.nccl.channels;
  nvls_channels_ = system.nccl.nvls_channels > 0 ? system.nccl.nvls_channels : channels_;
  arch_ = hw::nccl_arch_class(system.node.gpu.architecture);
  // An NVLink domain spanning nodes is one node to NCCL.
  if (system.network.kind == hw::NetworkKind::kNvlinkDomain) {
    ppn_ = gpus;
    nodes_ = 1;
  }
}

NcclTuner::NcclTuner(const hw::SystemSpec& system, const hw::NcclTuning& tuning, int nodes, int ppn)
    : NcclTuner(system, tuning, nodes * ppn) {
  if (system.network.kind != hw::NetworkKind::kNvlinkDomain) {
    nodes_ = nodes;
    ppn_ = ppn;
  }
}

namespace {
int pow2_up(int x) {
  int y = 1;
  while (y < x) y *= 2;
  return y;
}
}  // namespace

int NcclTuner::ring_channels(CollOp op, double bytes, NcclProto p) const {
  return coll_channels(op, bytes, p, true);
}

int NcclTuner::tree_channels(double bytes, NcclProto p) const {
  return coll_channels(CollOp::kAllReduce, bytes, p, false);
}

double NcclTuner::tree_ll128_chunk(double channel_bytes) const {
  // NCCL 2.28.9 src/include/device.h: an LL128 line is 16 words of which 15 carry data; a
  // grain is one warp's 32 threads x 8 words of lines, in data bytes (32 x 8 / 16 x 15 x 8).
  constexpr double kLineWords = 16, kDataWords = 15, kGrain = 32.0 * 8 / 16 * 15 * 8;
  const auto pi = static_cast<std::size_t>(NcclProto::kLL128);
  const double step = std::floor(t_.buffer_bytes[pi] / t_.steps);
  double chunk = std::floor(step / kLineWords) * kDataWords;
  // enqueue.cc calcCollChunking, tree LL128: ppn = nRanks / nNodes (a float), log2i the whole
  // part of log2; the quotient on the left is an integer division.
  const double ppn = static_cast<double>(gpus_) / std::max(1, nodes_);
  const double nsteps = 1 + std::floor(std::log2(std::max(1, nodes_))) + 0.1 * ppn;
  const double bytes = std::floor(channel_bytes);
  while (std::floor(bytes / chunk) < nsteps * 64 / ppn && chunk > 131072)
    chunk = std::floor(chunk / 2);
  while (std::floor(bytes / chunk) < nsteps * 16 / ppn && chunk > 32768)
    chunk = std::floor(chunk / 2);
  return std::floor(chunk / kGrain) * kGrain;
}

int NcclTuner::coll_channels(CollOp op, double bytes, NcclProto p, bool ring) const {
  const auto& cc = t_.coll_channels;
  const int pi = static_cast<int>(p);
  const int max_ch = 2 * channels_;  // NCCL duplicates the search's channels
  // Ring and tree share the trimming rule (enqueue.cc topoGetAlgoInfo, "Ring/Tree channel
  // tuning") and, on two H200s, their threads per block (512, 640, 512 as logged).
  const double nt = cc.ring_max_threads[static_cast<std::size_t>(pi)];
  double thr = cc.thread_threshold[static_cast<std::size_t>(pi)];
  if (ring && p == NcclProto::kLL) thr *= gpus_;  // tuning.cc: ring LL's threshold x nRanks
  if (nt <= 0 || thr <= 0) return max_ch;
  int nc = max_ch;
  while (bytes < nc * nt * thr && nc >= 2) --nc;
  // Cells of MinTrafficPerChannel traffic, shared out channel by channel (a collective alone:
  // it starts at channel 0 with nothing before it).
  const double n = std::max(1, gpus_);
  double count_bytes = bytes, per_byte = 1;
  if (op == CollOp::kAllReduce) per_byte = 2;
  if (op == CollOp::kAllGather || op == CollOp::kReduceScatter)
    count_bytes = bytes / n, per_byte = n;
  if (count_bytes <= 0) return 1;
  const double min_traffic = cc.min_traffic_per_channel;
  // LL's traffic counts 4 per byte (its flags and its lower rate; enqueue.cc, where the
  // collectives are ordered), in the channels' share and in the cell size.
  const double cell_per_byte = per_byte * (p == NcclProto::kLL ? 4 : 1);
  const double traffic = std::max(min_traffic, count_bytes * cell_per_byte);
  const double per_channel = std::max(min_traffic, std::floor(traffic / nc));
  const double cell = std::ceil(std::ceil(min_traffic / cell_per_byte) / 16) * 16;
  const double cells = std::ceil(count_bytes / cell);
  const double cell_traffic = cell * cell_per_byte;
  double per_ch_cells = std::min(cells, std::ceil(per_channel / cell_traffic));
  const double lo = max_ch == 1 ? cells : std::min(cells, std::ceil(per_channel / cell_traffic));
  double mid = std::floor((cells - lo) / per_ch_cells);
  double hi = std::fmod(cells - lo, per_ch_cells);
  if ((lo != 0 ? 1 : 0) + mid + (hi != 0 ? 1 : 0) > max_ch) return max_ch;  // overflowed
  if (hi == 0 && mid != 0) hi = per_ch_cells, mid -= 1;
  return static_cast<int>((lo != 0 ? 1 : 0) + mid + (hi != 0 ? 1 : 0));
}

NcclTuner::P2pPlan NcclTuner::p2p_plan(double bytes) const {
  const auto& q = t_.p2p;
  P2pPlan r;
  // paths.cc ncclTopoComputeP2pChannels: p2pnChannels = the communicator's channels rounded up
  // to a power of 2; per peer, the fewest any peer path allows (2 per NVLink link inside a
  // node, 2 over PCIe, NCCL_NCHANNELS_PER_NET_PEER across nodes), rounded up likewise.
  const int comm_ch = std::min(2 * channels_, q.max_channels);
  int peer_ch = sys_.node.intra == hw::IntraFabric::kNvSwitch && sys_.node.nvlink.links > 0
                    ? 2 * sys_.node.nvlink.links
                    : 2;
  if (nodes_ > 1) {
    int net = q.net_channels_per_peer;
    while (net * gpus_ > comm_ch * 4 && net > 1) net /= 2;  // before rounding up
    peer_ch = std::min(peer_ch, net);
  }
  r.total = std::min(pow2_up(comm_ch), q.max_channels);
  r.per_peer_max = std::min(pow2_up(std::min(comm_ch, peer_ch)), r.total);
  // enqueue.cc scheduleP2pTasksToPlan / addP2pToPlan.
  int min_ch = r.per_peer_max;
  while (min_ch * gpus_ > r.total && min_ch > 1) min_ch /= 2;
  r.proto = bytes <= r.per_peer_max * q.ll_threshold ? NcclProto::kLL : NcclProto::kSimple;
  double step = t_.buffer_bytes[static_cast<std::size_t>(r.proto)] / std::max(1, t_.steps);
  if (r.proto == NcclProto::kSimple)
    step = nodes_ > 1                                      ? q.net_chunk
           : sys_.node.intra == hw::IntraFabric::kNvSwitch ? q.nvl_chunk
                                                           : q.pci_chunk;
  if (bytes <= 0) return r.channels = 1, r;
  const double min_part = nodes_ > 1 ? step / 2 : step / 8;
  const double max_part = nodes_ > 1 ? step : step * 32;
  int nc = static_cast<int>(std::min<double>(min_ch, std::ceil(bytes / min_part)));
  double part = std::max(min_part, std::ceil(bytes / nc));
  while (part > max_part && nc <= r.per_peer_max / 2) {
    nc *= 2;
    part = std::ceil(bytes / nc);
  }
  r.channels = std::max(1, nc);
  return r;
}

TuneResult NcclTuner::tune(CollOp op, double bytes) const {
  TuneResult r;
  double best = std::numeric_limits<double>::infinity();
  for (int a = 0; a < hw::kNcclAlgos; ++a)
    for (int p = 0; p < hw::kNcclProtos; ++p) {
      TuneCell c = price(op, bytes, static_cast<NcclAlgo>(a), static_cast<NcclProto>(p));
      if (c.enabled && c.time_us < best) {
        best = c.time_us;
        r.best = static_cast<int>(r.cells.size());
      }
      r.cells.push_back(std::move(c));
    }
  return r;
}

TuneCell NcclTuner::price(CollOp op, double bytes, NcclAlgo a, NcclProto p) const {
  TuneCell c;
  c.algo = a;
  c.proto = p;
  const int ai = static_cast<int>(a), pi = static_cast<int>(p);
  const int n = gpus_;
  auto disable = [&](std::string why) {
    c.enabled = false;
    c.why_disabled = std::move(why);
    return c;
  };
  if (is_p2p(op)) return disable("point-to-point: not tuned by algorithm");
  if (n < 2) return disable("one rank: a local copy");
  const bool nvls = a == NcclAlgo::kNvls || a == NcclAlgo::kNvlsTree;
  const bool collnet = a == NcclAlgo::kCollNetDirect || a == NcclAlgo::kCollNetChain;
  if (a == NcclAlgo::kTree && op != CollOp::kAllReduce) return disable("tree runs all-reduce only");
  if (nvls && !sys_.node.nvlink.multicast) return disable("no NVLink multicast (NVLS)");
  if (nvls && p != NcclProto::kSimple) return disable("NVLS runs Simple only");
  // ncclNvlsInit (transport/nvls.cc): no NVLS when the node holds fewer than 2 of the group's GPUs.
  if (nvls && ppn_ < 2) return disable("NVLS needs 2 or more of the group's GPUs in a node");
  if (a == NcclAlgo::kNvls && nodes_ > 1) return disable("NVLS within one node");
  if (a == NcclAlgo::kNvlsTree && (nodes_ == 1 || op != CollOp::kAllReduce))
    return disable("NVLS-tree: all-reduce past one node");
  if (a == NcclAlgo::kNvls && op != CollOp::kAllReduce && op != CollOp::kAllGather &&
      op != CollOp::kReduceScatter)
    return disable("NVLS runs all-reduce, all-gather and reduce-scatter");
  if (collnet && (!sys_.network.in_network_reduction || nodes_ == 1))
    return disable("no in-network reduction (CollNet)");
  if (collnet && p != NcclProto::kSimple) return disable("CollNet runs Simple only");
  if (a == NcclAlgo::kCollNetChain && op != CollOp::kAllReduce)
    return disable("CollNet chain runs all-reduce only");
  if (a == NcclAlgo::kCollNetDirect && op != CollOp::kAllReduce && op != CollOp::kAllGather &&
      op != CollOp::kReduceScatter)
    return disable("CollNet direct runs all-reduce, all-gather and reduce-scatter");

  const hw::NcclArchCaps& caps = t_.arch_caps(arch_);
  const int idx = nodes_ <= 1 ? 0 : nodes_ == 2 ? 1 : 2;
  const int nch = nvls ? nvls_channels_ : channels_;
  const double bw_intra = sys_.nccl.channel_bw_intra / 1e9;
  const double bw_inter =
      sys_.nccl.channel_bw_inter > 0 ? sys_.nccl.channel_bw_inter / 1e9 : bw_intra;
  double bw_ch = (nodes_ == 1 || collnet) ? bw_intra : bw_inter;
  // NCCL's tree graph is searched apart from the ring's (src/graph/search.cc): a tree channel
  // is a chain charged only forward (ncclTopoFollowPath), and on one node of two GPUs the
  // chains alternate direction, so each GPU's port carries half the channels one way, where a
  // ring channel crosses both ports both ways. The search then fits twice the ring's channel
  // speed (its first sm90 speed, 60 GB/s, x 6 channels per direction within 370.8 GB/s) and
  // keeps the channel count, while the ring's 6 x 60 are (we read) duplicated into 12 x 30
  // (ncclTopoDupChannels). NCCL logged on two H200s "Pattern 1, nChannels 12, bw 60" beside
  // the ring's "Pattern 4, nChannels 12, bw 30" (validate/data/h200x2/logs.tar.gz). With three
  // or more GPUs a middle GPU's port carries both directions' chains: the ring's speed (assumed,
  // not logged).
  if (a == NcclAlgo::kTree && nodes_ == 1 && ppn_ == 2) bw_ch = 2 * bw_intra;
  double bus = nch * bw_ch;
  const bool intel = sys_.node.cpu != hw::CpuVendor::kAmd;
  const double ll_max =
      nodes_ == 1 ? caps.ll_max[0]
                  : (intel ? t_.ll_max_multinode_intel : t_.ll_max_multinode_amd)[idx == 1 ? 0 : 1];
  const int nsteps = op == CollOp::kAllReduce                                     ? 2 * (n - 1)
                     : (op == CollOp::kAllGather || op == CollOp::kReduceScatter) ? n - 1
                                                                                  : n;
  if (a == NcclAlgo::kRing) {
    if (p == NcclProto::kLL) bus = std::min(ll_max, 0.5 * bus);
    if (p == NcclProto::kLL128) bus = std::min(0.92 * bus, nch * caps.ring_ll128[idx]);
  } else if (a == NcclAlgo::kTree) {
    bus = std::min(0.92 * bus, nch * caps.tree[idx]);
    if (p == NcclProto::kLL) bus = std::min(bus / 3.8, ll_max);
    if (p == NcclProto::kLL128)
      bus = std::min(bus * (nodes_ == 1 ? 7.0 / 9.0 : 120.0 / 128.0), nch * caps.tree_ll128[idx]);
  } else if (nvls) {
    const double eff = t_.nvls_eff(arch_);
    if (eff <= 0) return disable("NCCL has no NVLS efficiency for this architecture");
    double intra = bw_intra * eff * (nch - 1) / nch;
    intra *= op == CollOp::kAllReduce ? 2.0 : static_cast<double>(ppn_ - 1) / ppn_;
    double bw = intra;
    if (nodes_ > 1) bw = std::min(bw, bw_inter * (a == NcclAlgo::kNvlsTree && nodes_ <= 2 ? 2 : 1));
    if (a == NcclAlgo::kNvlsTree) bw = std::min(bw, caps.nvls_tree[idx]);
    bus = nch * bw;
  } else if (collnet) {
    const double f = static_cast<double>(ppn_) / nch;
    if (a == NcclAlgo::kCollNetDirect && op != CollOp::kAllReduce)
      bus = ppn_ * std::min(bw_intra, 0.9 * bw_inter);
    else
      bus /= (f - (f - 1) / 2);
    if (arch_ != "ampere") bus *= 0.85;
  }
  if (bus <= 0) return disable("zero bandwidth in NCCL's tables");
  c.busbw_gbps = bus;
  // Ring, NVLS: algbw = busbw x nranks / nsteps; tree and CollNet all-reduce: x 0.5.
  double alg = (a == NcclAlgo::kRing || nvls)                                    ? bus * n / nsteps
               : (a == NcclAlgo::kTree || (collnet && op == CollOp::kAllReduce)) ? bus * 0.5
                                                                                 : bus;

  // Latency.
  const int intra_class = intra_link_class();
  double lat = t_.base_lat_us[ai][pi];
  double intra_lat = t_.hw_lat_us[intra_class][ai][pi];
  const int net_algo = ppn_ == 1 ? static_cast<int>(NcclAlgo::kTree) : ai;
  const double inter_lat = t_.hw_lat_us[2][net_algo][pi];
  if (a == NcclAlgo::kRing) {
    if (op == CollOp::kAllReduce || op == CollOp::kAllGather || op == CollOp::kReduceScatter) {
      const int inter_steps =
          nodes_ == 1 ? 0 : (op == CollOp::kAllReduce ? 2 * (nodes_ - 1) : nodes_ - 1);
      double overhead = nodes_ == 1 ? 0.0
                        : intel     ? t_.net_overhead_intel_us
                                    : t_.net_overhead_amd_us;
      if (p == NcclProto::kSimple) overhead *= 3;
      intra_lat = std::max(intra_lat, overhead);
      lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
      if (p == NcclProto::kSimple && op == CollOp::kAllReduce && nodes_ > 1 &&
          bytes / (channels_ * n) >= 64)
        lat *= t_.ring_simple_plateau;
    } else {
      lat += nodes_ > 1 ? inter_lat : intra_lat;
    }
  } else if (a == NcclAlgo::kTree) {
    lat += 2 * ((ppn_ - 1) * intra_lat + std::log2(std::max(1, nodes_)) * inter_lat);
  } else if (a == NcclAlgo::kCollNetDirect) {
    lat += 2 * (std::min(1, ppn_ - 1) * intra_lat + (ppn_ - 1) * 0.4) + inter_lat;
  } else if (a == NcclAlgo::kCollNetChain) {
    lat += 2 * (ppn_ - 1) * intra_lat + inter_lat;
  } else if (a == NcclAlgo::kNvls) {
    lat = intra_lat;
  } else if (a == NcclAlgo::kNvlsTree) {
    lat += intra_lat + 2 * std::log2(nodes_) * inter_lat;
  }
  if (a == NcclAlgo::kTree && op == CollOp::kAllReduce) {
    const double log_size = std::floor(std::log2(std::max(1.0, bytes / 64.0)));
    const auto& corr = t_.tree_correction[pi];
    if (bytes >= 64 && log_size < static_cast<double>(corr.size()))
      alg *= corr[static_cast<std::size_t>(log_size)];
  }
  c.algbw_gbps = alg;
  c.latency_us = lat;
  c.time_us = lat + bytes / (1000.0 * alg);
  c.enabled = true;
  return c;
}

}  // namespace ridge::models
