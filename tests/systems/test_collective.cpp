// Collectives on a system's links: closed-form cases, properties, and contention.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/nccl_tuning.hpp"
#include "hw/system_loader.hpp"
#include "models/collective.hpp"

using namespace ridge;
using models::CollectiveRequest;
using models::CollOp;

namespace {

const hw::SystemSpec& h200() {
  static const hw::SystemSpec s = hw::find_system("dgx-h200");
  return s;
}
const hw::NcclTuning& nccl() {
  static const hw::NcclTuning t = hw::load_nccl_tuning("2.28.9");
  return t;
}
models::CollectiveResult run(const hw::SystemSpec& s, CollOp op, double bytes, int gpus,
                             std::optional<hw::NcclAlgo> algo = {},
                             std::optional<hw::NcclProto> proto = {}) {
  CollectiveRequest r;
  r.op = op;
  r.bytes = bytes;
  r.gpus = gpus;
  r.algo = algo;
  r.proto = proto;
  return models::simulate_collective(s, nccl(), r);
}

}  // namespace

TEST_CASE("ring all-reduce: 2(n-1)/n * S/B + NCCL's ring latency", "[analytic]") {
  // One node of H200s, ring, Simple: every GPU's NVLink port carries 2(n-1)/n * S at the lower
  // of its payload rate B = 450 GB/s x 0.82 = 369 GB/s and the ring's SM-side bound: 24 blocks
  // (2 x 12 channels) x 58.75 GB/s of loads + stores each (configs/nccl) over (3n-2)/(n-1)
  // loads + stores per byte sent (NCCL's ring all-reduce loop: send 2 + (n-2) x 3 + 4 +
  // (n-2) x 3 + receive 2 = 6n-4 per 2(n-1) chunks sent). n = 2: 4 -> 352.5 GB/s (binds);
  // n = 4: 10/3 -> 423 GB/s; n = 8: 22/7 -> 448.6 GB/s (the link binds). NCCL's latency for
  // ring Simple all-reduce in one node: baseLat 8.4 us + 2(n-1) steps x hwLat 3.4 us.
  const double s = 1073741824.0, b = 450e9 * 0.82;
  for (int n : {2, 4, 8}) {
    INFO(n);
    const auto r =
        run(h200(), CollOp::kAllReduce, s, n, hw::NcclAlgo::kRing, hw::NcclProto::kSimple);
    const double lat = (8.4 + 2 * (n - 1) * 3.4) * 1e-6;
    const double rate = std::min(b, 24 * 58.75e9 * (n - 1) / (3.0 * n - 2));
    const double expect = lat + 2.0 * (n - 1) / n * s / rate;
    CHECK(r.time_s == Approx(expect).epsilon(1e-6));
    // busbw = algbw x 2(n-1)/n = S/t x 2(n-1)/n -> the rate as S grows.
    CHECK(r.busbw == Approx(2.0 * (n - 1) / n * s / expect).epsilon(1e-9));
  }
}

TEST_CASE("LL128 puts 16/15 of the bytes on the wire; LL is bound by its SM side", "[analytic]") {
  // Send/recv ignores NCCL_PROTO, so use a ring broadcast (one chain from the root). Its data
  // rate is the lower of the port's payload rate over the wire factor and the channels' SM side:
  // 24 blocks x the protocol's loads + stores rate / 3 per byte (a copy-send: source load,
  // output and peer stores).
  const double s = 1073741824.0, b = 450e9 * 0.82;
  const auto ll128 =
      run(h200(), CollOp::kBroadcast, s, 2, hw::NcclAlgo::kRing, hw::NcclProto::kLL128);
  // LL128: SM side 24 x 55.66 / 3 = 445.3 GB/s, above the link's 369 / 1.0666667 = 345.9: the
  // link binds, with 16/15 of the bytes on the wire (the configs' wire factor 1.0666667).
  CHECK(ll128.time_s - ll128.latency_s == Approx(s * 1.0666667 / b).epsilon(1e-6));
  const auto ll = run(h200(), CollOp::kBroadcast, s, 2, hw::NcclAlgo::kRing, hw::NcclProto::kLL);
  // LL: SM side 24 x 20.65 / 3 = 165.2 GB/s of data, 330.4 on the wire < 369: the SM side binds.
  CHECK(ll.time_s - ll.latency_s == Approx(s / (24 * 20.65e9 / 3)).epsilon(1e-6));
  // Its wire carries twice the data: the busiest port moved 2 S in the transfer time.
  CHECK(ll.bottleneck_utilisation == Approx(2 * 165.2e9 / b).epsilon(1e-3));
}

TEST_CASE("a ring channel's SM side: loads + stores per byte by op", "[analytic]") {
  // Two H200s, ring LL (the SM side binds for every op): the transfer time is the bytes each
  // rank sends over 24 blocks x 20.65 GB/s / (loads + stores per byte sent): all-reduce S x 4
  // (send 2 + receive-reduce-copy-send 4 + receive 2, over 2 chunks), all-gather and
  // reduce-scatter S/2 x 5 (copy-send 3 + receive 2; send 2 + receive-reduce-copy 3),
  // broadcast S x 3. So all-gather takes 5/8 of all-reduce's time, broadcast 3/4.
  const double s = 1073741824.0, r = 24 * 20.65e9;
  auto transfer = [&](CollOp op) {
    const auto x = run(h200(), op, s, 2, hw::NcclAlgo::kRing, hw::NcclProto::kLL);
    return x.time_s - x.latency_s;
  };
  CHECK(transfer(CollOp::kAllReduce) == Approx(s * 4 / r).epsilon(1e-6));
  CHECK(transfer(CollOp::kAllGather) == Approx(s / 2 * 5 / r).epsilon(1e-6));
  CHECK(transfer(CollOp::kReduceScatter) == Approx(s / 2 * 5 / r).epsilon(1e-6));
  CHECK(transfer(CollOp::kBroadcast) == Approx(s * 3 / r).epsilon(1e-6));
  // Reported: the bound and whether it is below the links. Simple, 2 GPUs: 24 x 58.75 / 4 =
  // 352.5 GB/s < 369 (binds); 8 GPUs: 24 x 58.75 x 7/22 = 448.6 GB/s > 369 (does not).
  const auto two =
      run(h200(), CollOp::kAllReduce, s, 2, hw::NcclAlgo::kRing, hw::NcclProto::kSimple);
  CHECK(two.sm_bound == Approx(352.5e9).epsilon(1e-9));
  CHECK(two.sm_loads_stores_per_byte == Approx(4.0));
  CHECK(two.sm_bound_binds);
  const auto eight =
      run(h200(), CollOp::kAllReduce, s, 8, hw::NcclAlgo::kRing, hw::NcclProto::kSimple);
  CHECK(eight.sm_bound == Approx(24 * 58.75e9 * 7 / 22).epsilon(1e-9));
  CHECK_FALSE(eight.sm_bound_binds);
}

TEST_CASE("NCCL's tuning table on two H200s is the one NCCL 2.28.9 logged", "[analytic]") {
  // Expected: the latency (us) / bandwidth (GB/s) table NCCL printed for this communicator
  // (NCCL_DEBUG_SUBSYS=TUNING, validate/data/h200x2/logs.tar.gz, nccl-debug-default-default.log,
  // AllReduce row), a measurement, not this code's output. Its tree figures come from the tree
  // graph NCCL's search found, 12 channels of 60 GB/s (a 2-GPU chain crosses each port one way),
  // not the ring's 12 of 30: tree LL min(0.92 x 720, 12 x 38.7) / 3.8 x 0.5 = 61.1, LL128
  // 464.4 x 7/9 x 0.5 = 180.6, Simple 464.4 x 0.5 = 232.2; ring LL min(141, 180) = 141, LL128
  // min(0.92 x 360, 12 x 36.7) = 331.2, Simple 360 (x nRanks / nSteps = 1). At 1 GiB the tree
  // correction table no longer applies (it ends at 256 MiB), so the cells are the table's.
  const models::NcclTuner t(h200(), nccl(), 2);
  const auto res = t.tune(CollOp::kAllReduce, 1073741824.0);
  using A = hw::NcclAlgo;
  using P = hw::NcclProto;
  struct Logged {
    A a;
    P p;
    double lat_us, bw_gbps;
  };
  const Logged logged[] = {
      {A::kTree, P::kLL, 8.0, 61.1},       {A::kTree, P::kLL128, 16.5, 180.6},
      {A::kTree, P::kSimple, 16.4, 232.2}, {A::kRing, P::kLL, 7.8, 141.0},
      {A::kRing, P::kLL128, 17.8, 331.2},  {A::kRing, P::kSimple, 15.2, 360.0},
  };
  for (const Logged& l : logged)
    for (const auto& c : res.cells)
      if (c.algo == l.a && c.proto == l.p) {
        INFO(hw::nccl_algo_name(l.a) << "/" << hw::nccl_proto_name(l.p));
        CHECK(c.enabled);
        // NCCL prints one decimal: within half a unit of the last digit.
        CHECK(std::abs(c.latency_us - l.lat_us) <= 0.05 + 1e-9);
        CHECK(std::abs(c.algbw_gbps - l.bw_gbps) <= 0.05 + 1e-9);
      }
  // And with NVLS off (as in those runs) NCCL chose ring Simple for every all-reduce of 2 MiB
  // and more (same log): the fastest of the ring and tree cells.
  for (double b : {2097152.0, 134217728.0, 8589934592.0}) {
    const auto tuned = t.tune(CollOp::kAllReduce, b);  // `best` points into it
    const models::TuneCell* best = nullptr;
    for (const auto& c : tuned.cells)
      if (c.enabled && (c.algo == A::kRing || c.algo == A::kTree) &&
          (!best || c.time_us < best->time_us))
        best = &c;
    REQUIRE(best);
    CHECK(best->algo == A::kRing);
    CHECK(best->proto == P::kSimple);
  }
}

TEST_CASE("a tree's SM side inside a node: loads + stores per byte of the busiest block",
          "[analytic]") {
  // Two H200s: each channel's root block runs recv-reduce-copy-send on all its threads (4 loads
  // + stores per byte of the channel's share), each leaf block a send (2) and a receive (2) on
  // split threads: 4 per block. 24 blocks, each channel S/24: the data moves at 24 x rate / 4
  // per port direction (both trees' flows on a port, each half the data at half the bound),
  // and the second tree half finishes one step (buffer / 8 at the line rate) after the first
  // started, the down chain starting one step after the up.
  const double s = 1073741824.0, line = 450e9 * 0.82;
  auto check = [&](hw::NcclProto p, double rate, double buffer) {
    const auto x = run(h200(), CollOp::kAllReduce, s, 2, hw::NcclAlgo::kTree, p);
    INFO(hw::nccl_proto_name(p));
    CHECK(x.sm_loads_stores_per_byte == Approx(4.0));
    CHECK(x.sm_bound == Approx(24 * rate / 4).epsilon(1e-9));
    CHECK(x.sm_bound_binds);  // below the 369 / 2 GB/s each of a port's two flows gets
    CHECK(x.time_s - x.latency_s == Approx(s * 4 / (24 * rate) + buffer / 8 / line).epsilon(1e-6));
  };
  check(hw::NcclProto::kLL, 20.65e9, 524288);  // 123.9 GB/s (x2 on the wire: 247.8 < 369)
  // LL128 at 1 GiB: full 576,000 B chunks, its FIFO past the L2 (the next test), so the rate
  // fitted past it: 24 x 38.71 / 4 = 232.26 GB/s (x16/15: 247.7 < 369).
  check(hw::NcclProto::kLL128, 38.71e9, 4915200);
  check(hw::NcclProto::kSimple, 58.75e9, 4194304);  // 352.5 GB/s < 369
  // Eight GPUs: a middle rank's block splits recv-reduce-send up (3) and recv-copy-send down
  // (3): 6 per byte, 24 x 58.75 / 6 = 235 GB/s. But a middle GPU's port also carries both
  // trees' up and down chains, S/2 each, 2 S in all, at 369 GB/s (the ring's 2(n-1)/n S = 1.75
  // S): the link, not the SM side, binds, and the transfer takes at least 2 S / 369 GB/s.
  const auto e = run(h200(), CollOp::kAllReduce, s, 8, hw::NcclAlgo::kTree, hw::NcclProto::kSimple);
  CHECK(e.sm_loads_stores_per_byte == Approx(6.0));
  CHECK(e.sm_bound == Approx(235e9).epsilon(1e-9));
  CHECK_FALSE(e.sm_bound_binds);
  CHECK(e.time_s - e.latency_s >= 2 * s / line);
}

TEST_CASE("a tree's LL128 chunk follows NCCL's calcCollChunking", "[analytic]") {
  // NCCL 2.28.9 src/enqueue.cc calcCollChunking, tree LL128, called per channel on its bytes.
  // The step's data: 4,915,200 / 8 = 614,400 B of lines, x 15/16 = 576,000 B. Two ranks in one
  // node: nsteps = 1 + log2(1) + 0.1 x 2 = 1.2; halve while bytes / chunk (whole) < 1.2 x 64 / 2
  // = 38.4 and chunk > 131,072, then while < 1.2 x 16 / 2 = 9.6 and chunk > 32,768; then whole
  // grains of 32 x 8 / 16 x 15 x 8 = 1920 B.
  const models::NcclTuner two(h200(), nccl(), 2);
  struct Case {
    double channel_bytes, chunk;
  };
  const Case cases[] = {
      // 8 GiB / 24: 357,913,941 / 576,000 = 621 >= 38.4 and >= 9.6: the full step.
      {8589934592.0 / 24, 576000},
      // 512 MiB / 24 = 22,369,621: / 576,000 = 38 < 38.4 -> 288,000: 77, stop; 150 grains.
      {536870912.0 / 24, 288000},
      // 128 MiB / 24 = 5,592,405: 9 -> 288,000: 19 -> 144,000: 38 -> 72,000 (not > 131,072:
      // stop); / 72,000 = 77 >= 9.6; 72,000 / 1920 = 37.5 -> 37 grains = 71,040.
      {134217728.0 / 24, 71040},
      // 8 MiB / 24 = 349,525: 0, 1, 2 -> 72,000; then 4 < 9.6 -> 36,000: 9 < 9.6 -> 18,000
      // (36,000 > 32,768); 18,000 / 1920 = 9.4 -> 9 grains = 17,280.
      {8388608.0 / 24, 17280},
  };
  for (const Case& c : cases) {
    INFO(c.channel_bytes);
    CHECK(two.tree_ll128_chunk(c.channel_bytes) == c.chunk);
  }
  // 16 nodes of 8: nsteps = 1 + 4 + 0.8 = 5.8; thresholds 5.8 x 64 / 8 = 46.4 and 11.6.
  // 10,000,000 B: / 576,000 = 17 -> 288,000: 34 -> 144,000: 69 >= 46.4, stop; 75 grains.
  const models::NcclTuner big(hw::find_system("h100-1024"), nccl(), 16 * 8);
  CHECK(big.tree_ll128_chunk(1e7) == 144000);
}

TEST_CASE("a tree's LL128 FIFO past the L2 runs its blocks at the rate fitted there",
          "[analytic]") {
  // Two H200s (L2 60 MiB = 62,914,560 B), 24 channels, one receive FIFO per channel per GPU:
  // reuse = 8 steps x 24 x chunk x (1.0666667 on the wire + 2 for the source and output).
  const double per = 8 * 24 * (1.0666667 + 2);  // 588.8 bytes per byte of chunk
  using A = hw::NcclAlgo;
  using P = hw::NcclProto;
  // 128 MiB: chunk 71,040 (previous test): 41.83 MB, within the L2: the ring-fitted 55.66.
  const auto in = run(h200(), CollOp::kAllReduce, 134217728.0, 2, A::kTree, P::kLL128);
  CHECK(in.fifo_reuse_bytes == Approx(per * 71040).epsilon(1e-9));
  CHECK_FALSE(in.fifo_past_l2);
  CHECK(in.sm_bound == Approx(24 * 55.66e9 / 4).epsilon(1e-9));
  // 512 MiB: chunk 288,000: 169.6 MB, past it: 24 x 38.71 / 4 = 232.26 GB/s.
  const auto past = run(h200(), CollOp::kAllReduce, 536870912.0, 2, A::kTree, P::kLL128);
  CHECK(past.fifo_reuse_bytes == Approx(per * 288000).epsilon(1e-9));
  CHECK(past.fifo_past_l2);
  CHECK(past.fifo_miss_rate);
  CHECK(past.sm_bound == Approx(24 * 38.71e9 / 4).epsilon(1e-9));
  // Eight GPUs: a middle rank holds two FIFOs per channel (up and down): 8 x 24 x 576,000 x
  // (2 x 1.0666667 + 2) at 8 GiB, 457 MB.
  const auto eight = run(h200(), CollOp::kAllReduce, 8589934592.0, 8, A::kTree, P::kLL128);
  CHECK(eight.fifo_reuse_bytes == Approx(8 * 24 * 576000 * (2 * 1.0666667 + 2)).epsilon(1e-9));
  CHECK(eight.fifo_past_l2);
  // Not modelled for rings, for other protocols or across nodes: no reuse figure, rates as before.
  CHECK(run(h200(), CollOp::kAllReduce, 536870912.0, 2, A::kRing, P::kLL128).fifo_reuse_bytes == 0);
  CHECK(run(h200(), CollOp::kAllReduce, 536870912.0, 2, A::kTree, P::kLL).fifo_reuse_bytes == 0);
  CHECK(run(h200(), CollOp::kAllReduce, 536870912.0, 2, A::kTree, P::kSimple).fifo_reuse_bytes ==
        0);
  CHECK(run(hw::find_system("h100-1024"), CollOp::kAllReduce, 536870912.0, 16, A::kTree, P::kLL128)
            .fifo_reuse_bytes == 0);
  // More L2 never makes it slower: with twice the L2 (120 MiB) the 512 MiB FIFO (169.6 MB)
  // is still past it; with 4x (240 MiB = 251.7 MB) it fits and the ring-fitted rate returns.
  hw::SystemSpec big_l2 = h200();
  big_l2.node.gpu.memory.l2_size = 4 * 62914560.0;
  const auto fits = run(big_l2, CollOp::kAllReduce, 536870912.0, 2, A::kTree, P::kLL128);
  CHECK_FALSE(fits.fifo_past_l2);
  CHECK(fits.time_s < past.time_s);
  // No rate measured past the L2 for an architecture class (HGX B200, Blackwell: 2 x 8
  // channels, 126 MiB = 132.1 MB of L2): at 8 GiB the FIFO, 8 x 16 x 576,000 x 3.0666667 =
  // 226.1 MB, is reported past the L2, but no rate is applied.
  const auto b200 =
      run(hw::find_system("hgx-b200"), CollOp::kAllReduce, 8589934592.0, 2, A::kTree, P::kLL128);
  CHECK(b200.fifo_reuse_bytes == Approx(8 * 16 * 576000 * (1.0666667 + 2)).epsilon(1e-9));
  CHECK(b200.fifo_past_l2);
  CHECK_FALSE(b200.fifo_miss_rate);
}

TEST_CASE("NVLS all-reduce: S(n+1)/n per port direction at NCCL's NVLS efficiency", "[analytic]") {
  // Each GPU sends its part of every shard up (S) and its reduced shard for multicast (S/n), and
  // receives its reduced shard (S/n) and every multicast shard (S): S(n+1)/n each way. So
  // algbw = n/(n+1) x B x eff and busbw = 2(n-1)/(n+1) x B x eff: it grows with n (0.67 B eff at
  // 2 GPUs, 1.56 B eff at 8), rather than being independent of n as NCCL's model has it.
  // Time = NCCL's NVLS latency (25 us), less the up port's own 0.7 us hop (part of it; the flows
  // start that much earlier and the down port has no hop latency of its own), + one pipeline
  // step (a 512 KiB Simple step at the port's rate) before the multicast starts + the transfer.
  const double s = 4294967296.0, b = 450e9 * 0.82, eff = 0.85;
  const double step = 4194304.0 / 8 / b;
  for (int n : {2, 4, 8}) {
    INFO(n);
    const auto r = run(h200(), CollOp::kAllReduce, s, n, hw::NcclAlgo::kNvls);
    CHECK(r.time_s == Approx(25e-6 - 0.7e-6 + step + s * (n + 1) / n / (eff * b)).epsilon(1e-6));
  }
  const auto r2 = run(h200(), CollOp::kAllReduce, s, 2, hw::NcclAlgo::kNvls);
  const auto r8 = run(h200(), CollOp::kAllReduce, s, 8, hw::NcclAlgo::kNvls);
  CHECK(r8.busbw / r2.busbw == Approx((14.0 / 9.0) / (2.0 / 3.0)).epsilon(0.01));
}

TEST_CASE("tree all-reduce latency grows with log2 of the nodes", "[analytic]") {
  // NCCL: lat = baseLat + 2((ppn-1) intraLat + log2(nNodes) interLat): each doubling of the nodes
  // adds 2 x interLat (tree, Simple: hwLat NET 14 us) = 28 us.
  const hw::SystemSpec big = hw::find_system("h100-1024");
  double prev = 0;
  for (int nodes = 2; nodes <= 128; nodes *= 2) {
    const models::NcclTuner t(big, nccl(), nodes * 8);
    const auto res = t.tune(CollOp::kAllReduce, 1 << 20);
    double lat = 0;
    for (const auto& c : res.cells)
      if (c.algo == hw::NcclAlgo::kTree && c.proto == hw::NcclProto::kSimple) lat = c.latency_us;
    if (prev > 0) CHECK(lat - prev == Approx(28.0));
    prev = lat;
  }
}

TEST_CASE("more link bandwidth never makes a collective slower", "[property]") {
  hw::SystemSpec fast = h200();
  fast.node.nvlink.bandwidth *= 2;
  hw::SystemSpec cluster = hw::find_system("h100-1024");
  hw::SystemSpec cluster_fast = cluster;
  cluster_fast.node.nics.bandwidth *= 2;
  for (CollOp op : models::kAllCollOps)
    for (double bytes : {1e3, 1e6, 1e9}) {
      INFO(std::string(models::coll_op_name(op)) << " " << bytes);
      CHECK(run(fast, op, bytes, 8).time_s <= run(h200(), op, bytes, 8).time_s);
      CHECK(run(cluster_fast, op, bytes, 32).time_s <= run(cluster, op, bytes, 32).time_s);
    }
}

TEST_CASE("busbw never above the bottleneck's line rate without in-network reduction",
          "[property]") {
  // Ring, tree and point-to-point move every byte over GPU ports: busbw <= the port's payload
  // rate. NVLS reduces in the switch: its busbw may pass the line rate but stays below
  // 2(n-1)/(n+1) x the rate.
  const double b = 450e9 * 0.82;
  for (CollOp op : models::kAllCollOps)
    for (int n : {2, 4, 8})
      for (double bytes : {1e6, 1e8, 4e9}) {
        CollectiveRequest q;
        q.op = op;
        q.bytes = bytes;
        q.gpus = n;
        q.nvls_enabled = false;
        const auto r = models::simulate_collective(h200(), nccl(), q);
        INFO(std::string(models::coll_op_name(op)) << " n=" << n << " " << bytes);
        CHECK(r.busbw <= b * (1 + 1e-9));
        if (op == CollOp::kAllReduce) {
          const auto v = run(h200(), op, bytes, n, hw::NcclAlgo::kNvls);
          CHECK(v.busbw <= 2.0 * (n - 1) / (n + 1) * b);
        }
      }
}

TEST_CASE("two collectives at once share the links and slow each other", "[property]") {
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const models::Fabric fabric(h200(), 8, net);
  const models::NcclTuner tuner(h200(), nccl(), 8);
  CollectiveRequest q;
  q.op = CollOp::kAllReduce;
  q.bytes = 1 << 30;
  q.gpus = 8;
  q.algo = hw::NcclAlgo::kRing;
  q.proto = hw::NcclProto::kSimple;
  const double alone = models::simulate_collective(h200(), nccl(), q).time_s;
  double t1 = 0, t2 = 0;
  models::start_collective(sim, net, fabric, tuner, q, [&](const auto& r) { t1 = r.time_s; });
  models::start_collective(sim, net, fabric, tuner, q, [&](const auto& r) { t2 = r.time_s; });
  sim.run();
  // Same links, same shares: each moves its bytes at half the rate.
  const double lat = (8.4 + 14 * 3.4) * 1e-6;  // NCCL's ring Simple latency, 8 GPUs
  CHECK(t1 == Approx(lat + 2 * (alone - lat)).epsilon(1e-6));
  CHECK(t2 == Approx(t1));
}

TEST_CASE("a collective beside a host copy over the same PCIe link slows down", "[property]") {
  // Two nodes: a ring all-reduce leaves each node through GPU PCIe links into the NICs. A copy
  // from GPU 7 to the host shares GPU 7's PCIe link (63 GB/s) with its NIC traffic (49.5 GB/s):
  // max-min gives each 31.5 GB/s, so the ring (bound by its slowest link) slows.
  const hw::SystemSpec big = hw::find_system("h100-1024");
  CollectiveRequest q;
  q.op = CollOp::kAllReduce;
  q.bytes = 1 << 30;
  q.gpus = 16;
  q.algo = hw::NcclAlgo::kRing;
  q.proto = hw::NcclProto::kSimple;
  const double alone = models::simulate_collective(big, nccl(), q).time_s;
  sim::Simulator sim;
  sim::FlowNetwork net(sim);
  const models::Fabric fabric(big, 16, net);
  const models::NcclTuner tuner(big, nccl(), 16);
  double with_copy = 0;
  models::start_collective(sim, net, fabric, tuner, q,
                           [&](const auto& r) { with_copy = r.time_s; });
  for (int g = 0; g < 16; ++g) net.start_flow(fabric.to_host(g), 8e9, [] {});
  sim.run();
  CHECK(with_copy > 1.2 * alone);
}

TEST_CASE("the same request gives the same result, bit for bit", "[property]") {
  const auto a = run(hw::find_system("h100-1024"), CollOp::kAllReduce, 1e9, 256);
  const auto b = run(hw::find_system("h100-1024"), CollOp::kAllReduce, 1e9, 256);
  CHECK(a.time_s == b.time_s);
  CHECK(a.bottleneck == b.bottleneck);
}

TEST_CASE("all-to-all across PCIe switches is bound by the switch uplinks", "[analytic]") {
  // 4 GPUs, 2 per PCIe switch, every link 50 GB/s per direction. All-to-all of S per rank: each
  // GPU sends S/4 to each of 3 others, 3S/4 through its own link; the 2 GPUs under a switch send
  // 2 x 2 x S/4 = S through its uplink. So the uplink binds: transfer = S / 50 GB/s (max-min: the
  // 4 flows through an uplink get 12.5 GB/s each; the same-switch flow then gets the rest of its
  // GPU's link and finishes first, which does not shorten the uplink's S).
  const hw::SystemSpec s =
      hw::load_system_spec(std::string(RIDGE_TEST_DATA_DIR) + "/systems/pcie-4gpu.yaml");
  const double bytes = 4e9;
  const auto r = run(s, CollOp::kAllToAll, bytes, 4);
  // NCCL's p2p latency on PCIe, Simple: ring baseLat 8.4 us + hwLat PCI 5.7 us.
  CHECK(r.time_s == Approx(14.1e-6 + bytes / 50e9).epsilon(1e-6));
  CHECK(r.bottleneck.find("pcie_switch") != std::string::npos);
}

TEST_CASE("a group of one GPU per node goes through that GPU's own NIC", "[analytic]") {
  // DP groups are strided: GPU 0 of each of 8 DGX H100 nodes. NCCL's channels use each GPU's
  // nearest NIC, so the ring crosses GPU 0's PCIe link (63 GB/s) and rail 0's NICs (400 Gb/s
  // x 0.99 = 49.5 GB/s): the NIC binds. Transfer = 2(n-1)/n x S / 49.5 GB/s with n = 8.
  const hw::SystemSpec big = hw::find_system("h100-1024");
  CollectiveRequest q;
  q.op = CollOp::kAllReduce;
  q.bytes = 1073741824.0;
  q.gpus = 8;
  q.algo = hw::NcclAlgo::kRing;
  q.proto = hw::NcclProto::kSimple;
  for (int k = 0; k < 8; ++k) q.ranks.push_back(8 * k);
  const auto r = models::simulate_collective(big, nccl(), q);
  CHECK(r.time_s - r.latency_s == Approx(2.0 * 7 / 8 * q.bytes / 49.5e9).epsilon(1e-6));
  CHECK(r.bottleneck.find("nic0") != std::string::npos);
}

namespace {

// The shipped NCCL constants with `good` (one whole line) replaced by `bad`, loaded from `path`:
// the errors reported, and the 1-based line where the replacement starts.
struct EditedNccl {
  std::vector<std::string> errors;
  std::string line;
};

EditedNccl load_edited_nccl(const std::string& good, const std::string& bad,
                            const std::string& path) {
  std::ifstream in(hw::config_dir() + "/nccl/2.28.9.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto at = text.find(good);
  REQUIRE(at != std::string::npos);
  text.replace(at, good.size(), bad);
  std::ofstream(path) << text;
  EditedNccl out;
  try {
    hw::load_nccl_tuning(path);
  } catch (const hw::ConfigException& e) {
    for (const auto& err : e.errors()) out.errors.push_back(err.str());
  }
  std::remove(path.c_str());
  out.line =
      std::to_string(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n') + 1);
  return out;
}

}  // namespace

TEST_CASE("NCCL constants: a bad SM-side rate list is a file:line:col error", "[config-errors]") {
  // The shipped file with its Hopper rates cut to two values and a rate list for an architecture
  // NCCL's classes do not have: both reported at once, each with its place in the file.
  const std::string path = "test_collective_bad_nccl.yaml";
  const auto r = load_edited_nccl("    hopper: [20.65, 55.66, 58.75]\n",
                                  "    hopper: [20.65, 55.66]\n    volta: [1, 2, 3]\n", path);
  REQUIRE(r.errors.size() == 2);
  // The line of each: the file's own count of lines up to the replaced one.
  CHECK(r.errors[0].find(path + ":" + r.line + ":") != std::string::npos);
  CHECK(r.errors[0].find("channel_memory_gbps.hopper") != std::string::npos);
  CHECK(r.errors[0].find("expected 3 values, got 2") != std::string::npos);
  CHECK(r.errors[1].find("volta") != std::string::npos);
}

TEST_CASE("a ring's channels by size are the ones NCCL 2.28.9 logged on two H200s", "[analytic]") {
  // Expected: the channel{Lo..Hi} NCCL printed for each call (NCCL_DEBUG=INFO,
  // validate/data/h200x2/logs.tar.gz, nccl-debug-Ring-*.log; sizes there are nccl-tests' per-rank
  // counts, so all-gather's and reduce-scatter's are half the sizes below), a measurement, not
  // this code's output. 24 = twice the 12 channels NCCL's search found.
  const models::NcclTuner t(h200(), nccl(), 2);
  using P = hw::NcclProto;
  struct Case {
    CollOp op;
    P p;
    double bytes;
    int channels;
  };
  const Case cases[] = {
      {CollOp::kAllReduce, P::kSimple, 32768, 1},    {CollOp::kAllReduce, P::kSimple, 131072, 4},
      {CollOp::kAllReduce, P::kSimple, 524288, 16},  {CollOp::kAllReduce, P::kSimple, 2097152, 24},
      {CollOp::kAllReduce, P::kLL, 8192, 1},         {CollOp::kAllReduce, P::kLL, 32768, 4},
      {CollOp::kAllReduce, P::kLL, 131072, 16},      {CollOp::kAllReduce, P::kLL, 524288, 24},
      {CollOp::kAllReduce, P::kLL128, 8192, 1},      {CollOp::kAllReduce, P::kLL128, 32768, 4},
      {CollOp::kAllReduce, P::kLL128, 131072, 16},   {CollOp::kAllReduce, P::kLL128, 524288, 22},
      {CollOp::kAllGather, P::kSimple, 131072, 4},   {CollOp::kAllGather, P::kSimple, 524288, 16},
      {CollOp::kAllGather, P::kSimple, 2097152, 22}, {CollOp::kAllGather, P::kSimple, 8388608, 24},
      {CollOp::kAllGather, P::kLL128, 32768, 2},     {CollOp::kAllGather, P::kLL128, 131072, 8},
      {CollOp::kReduceScatter, P::kLL, 32768, 4},    {CollOp::kReduceScatter, P::kLL, 524288, 22},
      {CollOp::kBroadcast, P::kSimple, 131072, 4},   {CollOp::kBroadcast, P::kSimple, 2097152, 22},
      {CollOp::kBroadcast, P::kLL128, 32768, 2},     {CollOp::kBroadcast, P::kLL128, 131072, 8},
      {CollOp::kBroadcast, P::kLL, 524288, 22},      {CollOp::kBroadcast, P::kLL, 8589934592.0, 24},
  };
  for (const Case& c : cases) {
    INFO(models::coll_op_name(c.op) << " " << hw::nccl_proto_name(c.p) << " " << c.bytes);
    CHECK(t.ring_channels(c.op, c.bytes, c.p) == c.channels);
  }
}

TEST_CASE("a tree's channels by size are the ones NCCL 2.28.9 logged on two H200s", "[analytic]") {
  // Expected: channel{Lo..Hi} of every tree all-reduce NCCL printed (nccl-debug-Tree-*.log in
  // validate/data/h200x2/logs.tar.gz), a measurement. The ring's rule, but tree LL's thread
  // threshold is not multiplied by nRanks, so tree LL keeps twice ring LL's channels (8 KiB:
  // 2 against 1) while LL128 and Simple match the ring's.
  const models::NcclTuner t(h200(), nccl(), 2);
  using P = hw::NcclProto;
  struct Case {
    P p;
    double bytes;
    int channels;
  };
  const Case cases[] = {
      {P::kLL, 2048, 1},        {P::kLL, 8192, 2},         {P::kLL, 32768, 8},
      {P::kLL, 131072, 22},     {P::kLL, 524288, 24},      {P::kLL128, 8192, 1},
      {P::kLL128, 32768, 4},    {P::kLL128, 131072, 16},   {P::kLL128, 524288, 22},
      {P::kLL128, 2097152, 24}, {P::kSimple, 32768, 1},    {P::kSimple, 131072, 4},
      {P::kSimple, 524288, 16}, {P::kSimple, 2097152, 24}, {P::kSimple, 8589934592.0, 24},
  };
  for (const Case& c : cases) {
    INFO(hw::nccl_proto_name(c.p) << " " << c.bytes);
    CHECK(t.tree_channels(c.bytes, c.p) == c.channels);
  }
  // The collective's blocks follow it inside a node.
  CHECK(run(h200(), CollOp::kAllReduce, 32768, 2, hw::NcclAlgo::kTree, P::kLL).sm_blocks == 8);
}

TEST_CASE("point-to-point: NCCL's protocol and channels per peer by size", "[analytic]") {
  // NCCL 2.28.9 on a DGX H200 (src/graph/paths.cc, src/enqueue.cc): p2pnChannels = 24 channels
  // rounded up to 32; per peer min(24, 2 x 18 NVLink links) rounded up = 32; on 2 ranks
  // nChannelsMin = 32 halved while x 2 ranks > 32: 16. LL while a peer's bytes <= 32 x 16 KiB
  // = 512 KiB. Simple steps of 512 KiB: parts of 64 KiB to 16 MiB, so ceil(bytes / 64 KiB)
  // channels up to 16, doubled to 32 once a part would pass 16 MiB (bytes > 256 MiB).
  const models::NcclTuner t(h200(), nccl(), 2);
  CHECK(t.p2p_plan(524288).proto == hw::NcclProto::kLL);
  CHECK(t.p2p_plan(524289).proto == hw::NcclProto::kSimple);
  CHECK(t.p2p_plan(1048576).channels == 16);
  CHECK(t.p2p_plan(786432).channels == 12);
  CHECK(t.p2p_plan(268435456).channels == 16);
  CHECK(t.p2p_plan(268435457).channels == 32);
  CHECK(t.p2p_plan(8589934592.0).channels == 32);
  // Send/recv on 16 channels inside a node: each block sends and receives its share (4 loads
  // + stores per byte) at 77.12 GB/s (configs/nccl), so 16 x 77.12 / 4 = 308.48 GB/s, below
  // NVLink's 369 GB/s: time = latency + S / 308.48 GB/s; on 32 channels (617 GB/s) the link
  // binds: latency + S / 369 GB/s. Latency: ring Simple's base 8.4 us + one NVLink hop 3.4.
  const double lat = (8.4 + 3.4) * 1e-6;
  const double s = 134217728.0;
  const auto mid = run(h200(), CollOp::kSendRecv, s, 2);
  CHECK(mid.time_s == Approx(lat + s / (16 * 77.12e9 / 4)).epsilon(1e-6));
  CHECK(mid.sm_bound_binds);
  const auto big = run(h200(), CollOp::kSendRecv, 4 * s, 2);
  CHECK(big.time_s == Approx(lat + 4 * s / (450e9 * 0.82)).epsilon(1e-6));
  CHECK_FALSE(big.sm_bound_binds);
  // Across nodes (one GPU in each of 2 H100 nodes): a network peer gets
  // NCCL_NCHANNELS_PER_NET_PEER's 2 channels (2 x 2 ranks <= 24 x 4: not halved), so
  // p2pnChannelsPerPeer = 2; LL up to 2 x 16 KiB; Simple steps of 128 KiB
  // (NCCL_P2P_NET_CHUNKSIZE), parts of 64 to 128 KiB: 1 channel up to 64 KiB, then 2, never
  // doubled past p2pnChannelsPerPeer.
  static const hw::SystemSpec cluster = hw::find_system("h100-1024");
  const models::NcclTuner net(cluster, nccl(), 2, 1);
  CHECK(net.p2p_plan(32768).proto == hw::NcclProto::kLL);
  CHECK(net.p2p_plan(32769).proto == hw::NcclProto::kSimple);
  CHECK(net.p2p_plan(65536).channels == 1);
  CHECK(net.p2p_plan(65537).channels == 2);
  CHECK(net.p2p_plan(1073741824.0).channels == 2);
  CHECK(net.p2p_plan(1073741824.0).per_peer_max == 2);
}

TEST_CASE("NCCL constants: a bad tree LL128 L2 rate is a file:line:col error", "[config-errors]") {
  // The shipped file with the rate negative and an architecture NCCL's classes do not have:
  // both reported at once, each naming its key.
  const std::string path = "test_collective_bad_l2.yaml";
  const auto r = load_edited_nccl("    hopper: 38.71\n", "    hopper: -2\n    volta: 1\n", path);
  REQUIRE(r.errors.size() == 2);
  CHECK(r.errors[0].find(path + ":" + r.line + ":") != std::string::npos);
  CHECK(r.errors[0].find("tree_ll128_l2_miss_gbps.hopper") != std::string::npos);
  CHECK(r.errors[1].find("volta") != std::string::npos);
}

TEST_CASE("NCCL constants: bad point-to-point and channel keys are file:line:col errors",
          "[config-errors]") {
  // The shipped file with a negative p2p block rate, a thread threshold list of two values and an
  // unknown p2p key: all three reported at once, each naming its key.
  std::ifstream in(hw::config_dir() + "/nccl/2.28.9.yaml");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const auto swap = [&text](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  swap("      hopper: 77.12\n", "      hopper: -1\n");
  swap("    thread_threshold: [8, 8, 64]\n", "    thread_threshold: [8, 8]\n");
  swap("    max_channels: 64\n", "    max_channels: 64\n    chunk_bytes: 1\n");
  const std::string path = "test_collective_bad_p2p.yaml";
  std::ofstream(path) << text;
  std::vector<std::string> errors;
  try {
    hw::load_nccl_tuning(path);
  } catch (const hw::ConfigException& e) {
    for (const auto& err : e.errors()) errors.push_back(err.str());
  }
  std::remove(path.c_str());
  REQUIRE(errors.size() == 3);
  std::string all;
  for (const auto& e : errors) all += e + "\n";
  INFO(all);
  CHECK(all.find("channels.thread_threshold") != std::string::npos);
  CHECK(all.find("p2p.block_memory_gbps.hopper") != std::string::npos);
  CHECK(all.find("chunk_bytes") != std::string::npos);
  for (const auto& e : errors) CHECK(e.find(path + ":") == 0);
}
