// Collectives against measurements: NCCL 2.28.9 on two H200s (validate/data/h200x2) and the
// published 8-GPU and per-NIC figures. What was fitted: the NVLink 4 payload efficiency (0.82),
// on one record (broadcast, 8 GiB, ring Simple, two H200s), and the host's per-rank issue time
// of the measuring program (7.98 us, the median of validate/data/h200x1's one-rank calls up to
// 64 KiB: a different data set). Everything else is NCCL's constants or a datasheet figure.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "hw/nccl_tuning.hpp"
#include "hw/system_loader.hpp"
#include "models/collective.hpp"
#include "models/collective_compare.hpp"

using namespace ridge;
using models::CollOp;

namespace {

const hw::NcclTuning& nccl() {
  static const hw::NcclTuning t = hw::load_nccl_tuning("2.28.9");
  return t;
}

nlohmann::json load(const std::string& rel) {
  std::ifstream in(std::string(RIDGE_SOURCE_DIR) + "/" + rel);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

struct Row {
  std::string series;  // op/algo/proto as measured
  double bytes = 0, measured_us = 0, predicted_us = 0;
  double err() const { return predicted_us / measured_us - 1; }
};

// The harness's host time per call: one thread issues every rank's call (validate/nccl_bench.cu),
// so n ranks cost n x the one-rank floor.
double one_rank_floor_us() {
  const auto d = load("validate/data/h200x1/collectives.json");
  std::vector<double> v;
  for (const auto& r : d["records"])
    if (r["bytes"].get<double>() <= 65536) v.push_back(r["timing"]["median_us"].get<double>());
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

std::string read(const std::string& rel) {
  std::ifstream in(std::string(RIDGE_SOURCE_DIR) + "/" + rel);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::vector<Row>& h200x2_rows() {
  static const std::vector<Row> rows = [] {
    const std::string file = "validate/data/h200x2/collectives.json";
    const auto measured = models::read_collective_records(file, read(file));
    // The lent machine runs with NCCL_NVLS_ENABLE=0; one thread issues both ranks' calls.
    const auto cmp = models::compare_collectives(hw::find_system("dgx-h200"), nccl(), measured,
                                                 false, one_rank_floor_us());
    std::vector<Row> out;
    for (const auto& c : cmp)
      out.push_back({c.m.series, c.m.request.bytes, c.m.measured_us, c.predicted_us});
    return out;
  }();
  return rows;
}

double median_abs(std::vector<double> v) {
  for (double& x : v) x = std::fabs(x);
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

TEST_CASE("published: 8 x H200 all-reduce ~475 GB/s busbw (nccl-tests#272)", "[validation]") {
  // A prediction: NVLS at NCCL's efficiency on the fitted NVLink payload rate; nothing here saw
  // the published figure. Budget 10% (the issue's).
  models::CollectiveRequest q;
  q.op = CollOp::kAllReduce;
  q.bytes = 1073741824.0;
  q.gpus = 8;
  const auto r = models::simulate_collective(hw::find_system("dgx-h200"), nccl(), q);
  CHECK(r.algo == hw::NcclAlgo::kNvls);  // NCCL's choice at 1 GiB on NVLink SHARP
  CHECK(r.busbw / 1e9 == Approx(475).epsilon(0.10));
}

TEST_CASE("published: 8 x H100 all-reduce ~480 GB/s with NVLS, ~370 with ring (nccl-tests#212)",
          "[validation]") {
  models::CollectiveRequest q;
  q.op = CollOp::kAllReduce;
  q.bytes = 4294967296.0;  // "messages well above 256 MB"
  q.gpus = 8;
  const hw::SystemSpec s = hw::find_system("dgx-h100");
  CHECK(models::simulate_collective(s, nccl(), q).busbw / 1e9 == Approx(480).epsilon(0.10));
  q.algo = hw::NcclAlgo::kRing;
  CHECK(models::simulate_collective(s, nccl(), q).busbw / 1e9 == Approx(370).epsilon(0.10));
}

TEST_CASE("published: InfiniBand NDR 400 Gb/s, 46-48 GB/s per NIC across nodes (nccl-tests#290)",
          "[validation]") {
  // Two DGX H100 nodes, ring all-reduce of 8 GiB: each of a node's 8 NICs carries one ring's
  // inter-node hop, so busbw / 8 is the per-NIC rate. Budget 10% around 47 GB/s.
  models::CollectiveRequest q;
  q.op = CollOp::kAllReduce;
  q.bytes = 8589934592.0;
  q.gpus = 16;
  q.algo = hw::NcclAlgo::kRing;
  const auto r = models::simulate_collective(hw::find_system("h100-1024"), nccl(), q);
  CHECK(r.busbw / 8 / 1e9 == Approx(47).epsilon(0.10));
}

TEST_CASE("h200x2: NCCL's own choice of algorithm matches at 1 MiB and above", "[validation]") {
  // NCCL picked ring for every size on this machine (its GRAPH/TUNING log); so does its model.
  const hw::SystemSpec sys = hw::find_system("dgx-h200");
  const models::NcclTuner t(sys, nccl(), 2);
  for (double b = 1 << 20; b <= 8589934592.0; b *= 4) {
    models::CollectiveRequest q;
    q.op = CollOp::kAllGather;
    q.bytes = b;
    q.gpus = 2;
    q.nvls_enabled = false;
    CHECK(models::choose_collective(t, q).algo == hw::NcclAlgo::kRing);
  }
}

TEST_CASE("h200x2: regression guard on the 8 GiB rows (not the target)", "[validation]") {
  // Guard, not a target: the median |error| over the 33 series at 8 GiB stays within 3% (1.3%
  // since the SM-side bound of ring channels; 8.2% before), every one within 35% (tree LL runs
  // 32% faster than NCCL's LL tree cap that Ridge keeps, having no measured SM-side rate for the
  // tree kernels).
  std::vector<double> errs;
  for (const Row& r : h200x2_rows())
    if (r.bytes == 8589934592.0) {
      INFO(r.series << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.35);
      errs.push_back(r.err());
    }
  CHECK(errs.size() == 33);
  CHECK(median_abs(errs) <= 0.03);
}

TEST_CASE("h200x2: the ring SM-side bound predicts the ops it was not fitted on", "[validation]") {
  // The per-block loads + stores rate of each protocol was fitted on ring all-reduce alone
  // (configs/nccl/2.28.9.yaml). Predictions: ring all-gather, reduce-scatter and broadcast of
  // every protocol at 2 and 8 GiB (bandwidth-bound sizes), within 10% (the budget;
  // same-configuration repeats in these records differ by up to 5%: all-gather default vs
  // forced Ring/Simple at 8 GiB, 13.90 vs 14.66 ms). Before this bound they were 15-30% off.
  int n = 0;
  for (const Row& r : h200x2_rows()) {
    const bool ring = r.series.find("/Ring/") != std::string::npos;
    const bool op = r.series.rfind("allgather", 0) == 0 ||
                    r.series.rfind("reducescatter", 0) == 0 || r.series.rfind("broadcast", 0) == 0;
    if (ring && op && r.bytes >= 2147483648.0) {
      INFO(r.series << " " << r.bytes << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.10);
      ++n;
    }
  }
  CHECK(n == 18);  // 3 ops x 3 protocols x 2 sizes
}

TEST_CASE("h200x2: point-to-point channels by size predict all-to-all at 32-512 MiB",
          "[validation]") {
  // NCCL spreads a peer's transfer over 16 channels up to 256 MiB per peer on two ranks, 32
  // above (src/enqueue.cc addP2pToPlan; NcclTuner::p2p_plan), and each channel's block sends
  // and receives its share; the block rate was fitted on send/recv alone (configs/nccl). So
  // all-to-all (S/2 per peer) is a prediction: every series (NCCL_ALGO/NCCL_PROTO do not
  // apply to it, so these are 7 repeats of one configuration) at 32, 128 and 512 MiB within
  // 10%, the budget; before this they were 13-23% fast.
  int n = 0;
  for (const Row& r : h200x2_rows())
    if (r.series.rfind("alltoall", 0) == 0 && r.bytes >= 33554432.0 && r.bytes <= 536870912.0) {
      INFO(r.series << " " << r.bytes << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.10);
      ++n;
    }
  CHECK(n == 21);  // 7 series x 3 sizes
}

TEST_CASE("h200x2: tree all-reduce, LL and Simple, 128 MiB to 8 GiB, by the SM side",
          "[validation]") {
  // A tree on two GPUs is a chain whose busiest block loads + stores 4 bytes per byte of its
  // share (NCCL's runTreeSplit), at the per-block rates fitted on ring all-reduce: 123.9 GB/s
  // for LL, 352.5 for Simple (models/collective.cpp tree_memory_ops). Not refitted on trees,
  // but the per-block (not per-thread-group) count was chosen with these rows in view, so this
  // is a guard, not a clean prediction (docs/collectives.md). Bandwidth-bound sizes, within 10%
  // (the budget); before, tree LL was 32% slow at every one of them (NCCL's LL tree cap
  // on the ring's channel speed).
  int n = 0;
  for (const Row& r : h200x2_rows())
    if ((r.series == "allreduce/Tree/LL" || r.series == "allreduce/Tree/Simple") &&
        r.bytes >= 134217728.0) {
      INFO(r.series << " " << r.bytes << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.10);
      ++n;
    }
  CHECK(n == 8);  // 2 series x 4 sizes
}

TEST_CASE("h200x2: tree LL128 all-reduce at 512 MiB-8 GiB by its FIFO past the L2",
          "[validation]") {
  // Measured 231-243 GB/s from 32 MiB, 0.69 of ring LL128 at full chunks. NCCL cuts a tree
  // LL128 all-reduce into 288,000 B chunks at 512 MiB and 576,000 B at 2 and 8 GiB
  // (calcCollChunking): its full FIFOs are reread after 170-339 MB have passed a 60 MiB L2, so
  // the blocks run at the rate fitted past it (2-8 GiB marginal, 38.71 GB/s per block): 2 and
  // 8 GiB are the fit, 512 MiB a prediction made with the rows in view (before: 24-33% fast).
  int n = 0;
  for (const Row& r : h200x2_rows())
    if (r.series == "allreduce/Tree/LL128" && r.bytes >= 536870912.0) {
      INFO(r.series << " " << r.bytes << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.10);
      ++n;
    }
  CHECK(n == 3);
}

TEST_CASE("h200x2: tree LL128 all-reduce within 10% at 32-128 MiB (not met)",
          "[validation][!shouldfail]") {
  // 71,040 B chunks: the FIFO (41.8 MB) is within the L2 and Ridge uses the ring-fitted rate,
  // 16% and 24% fast. Ring LL128 is 12% and 16% fast at the same sizes (the rings' mid-size
  // ramp, not explained); tree LL128 takes 1.05x and 1.11x its time there.
  for (const Row& r : h200x2_rows())
    if (r.series == "allreduce/Tree/LL128" && r.bytes >= 33554432.0 && r.bytes <= 134217728.0) {
      INFO(r.series << " " << r.bytes << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.10);
    }
}

TEST_CASE("h200x2: busbw within 10% at every size of 1 MiB and more (target, not met)",
          "[validation][!shouldfail]") {
  // The target. Not met: from 32 to 512 MiB NCCL on this machine runs up to 9-16%
  // slower than Ridge for Simple and LL128 rings (and than NCCL's own model, nccl_estimate_us
  // in the records), a ramp that NCCL's channels and chunks do not explain (constant from
  // 2 MiB up, by its logs and source); send/recv at 8-32 MiB runs in two modes 15% apart
  // between repeats; 2-8 MiB is up to 40% over; docs/collectives.md has the table.
  for (const Row& r : h200x2_rows())
    if (r.bytes >= 1048576) {
      INFO(r.series << " " << r.bytes << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.10);
    }
}

TEST_CASE("h200x2: small-message latency within 20% (target, not met)",
          "[validation][!shouldfail]") {
  // Up to 64 KiB. About two thirds of the cases are within 20%; ring LL128 is 70-85% over
  // (NCCL's 14 us LL128 base latency does not show on this machine), tree Simple and LL128
  // 20-30%. Not reachable by any model of NCCL alone: repeats of one configuration sit in two
  // modes, ~18 and ~26 us (all-to-all, whose protocol NCCL_PROTO does not change: 29.9 us at
  // 8 B in one run, 17.3 us at 2 KiB in another; no time is within 20% of both).
  for (const Row& r : h200x2_rows())
    if (r.bytes <= 65536) {
      INFO(r.series << " " << r.bytes << " " << r.err());
      CHECK(std::fabs(r.err()) <= 0.20);
    }
}

TEST_CASE("h200x2: small-message latency guard", "[validation]") {
  // Guard on the same rows: at least 60% within 20% and the median |error| within 20%.
  std::vector<double> errs;
  int within = 0;
  for (const Row& r : h200x2_rows())
    if (r.bytes <= 65536) {
      errs.push_back(r.err());
      within += std::fabs(r.err()) <= 0.20;
    }
  REQUIRE(errs.size() == 231);
  CHECK(within >= 0.6 * errs.size());
  CHECK(median_abs(errs) <= 0.20);
}
