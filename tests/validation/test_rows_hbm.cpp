// Issue 18, round 3: row kernels (softmax / layernorm / rmsnorm) and HBM traffic by direction,
// against every committed H200 record of those classes (validate/data/h200 kernels.json,
// memory.json, own-set1..8). The figures these tests guard are FITS or were shaped on the same
// records (docs/accuracy.md, "Row kernels and HBM direction"): they guard the mechanisms against
// regression, they are not predictions.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/gpu_loader.hpp"
#include "models/calibration.hpp"
#include "models/records.hpp"

using namespace ridge;

namespace {

std::vector<models::Record> committed(const std::vector<std::string>& ops) {
  std::vector<std::string> files = {"kernels.json", "memory.json"};
  for (int i = 1; i <= 8; ++i)
    files.push_back("own-set" + std::to_string(i) + "/own-set" + std::to_string(i) + ".json");
  std::vector<models::Record> out;
  for (const auto& f : files) {
    auto file = models::read_records(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/" + f);
    for (auto& r : file.records)
      for (const auto& op : ops)
        if (r.op == op) out.push_back(std::move(r));
  }
  return out;
}

const hw::GpuSpec& calibrated() {
  static const hw::GpuSpec g =
      hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml");
  return g;
}

models::ClassStats all_of(const std::vector<models::Record>& recs) {
  const auto c = models::compare(calibrated(), recs, models::Mode::kFast, false);
  REQUIRE(c.classes.back().op_class == "all");
  return c.classes.back();
}

// The committed records of `ops` that `keep` selects: exactly `count` of them, each predicted
// within `limit` (relative).
template <class Keep>
void each_within(const std::vector<std::string>& ops, Keep keep, std::size_t count, double limit) {
  std::vector<models::Record> picked;
  for (auto& r : committed(ops))
    if (keep(r.params)) picked.push_back(std::move(r));
  const auto c = models::compare(calibrated(), picked, models::Mode::kFast, false);
  CHECK(c.rows.size() == count);
  for (const auto& row : c.rows) {
    INFO(row.id << " (" << row.file << "): " << row.error);
    CHECK(std::fabs(row.error) <= limit);
  }
}

double buffers_of(const nlohmann::json& p) {
  return p.contains("buffers") ? p.at("buffers").get<double>() : 1;
}

}  // namespace

// Before this round the 201 row records scored 5.5% median, 12.8% p90 and set 8's 24 alone 7.0% /
// 18.4%; with overlapped waves, the row layout's registers and the serial load / reduce / store
// at low occupancy, 4.2% / 12.8% and 4.5% / 15.3%; with the cold read ramp (second pass) 4.4% /
// 11.1% and 4.7% / 12.3%. Limits: the first pass's figures plus about half a point (a guard on
// shaped figures, not a target).
TEST_CASE("row kernels: all committed softmax / layernorm / rmsnorm records", "[validation]") {
  const auto s = all_of(committed({"softmax", "layernorm", "rmsnorm"}));
  INFO("median " << s.median_abs << ", p90 " << s.p90_abs << ", max " << s.max_abs);
  CHECK(s.cases == 201);
  CHECK(s.median_abs <= 0.047);
  CHECK(s.p90_abs <= 0.135);
}

// Few rows, long rows (at most 1600 rows of 16384 columns or more: one or two blocks per SM, a
// few waves): the case set 8 missed by 17-31% (softmax bf16 256 x 31744, layernorm fp32 512 x
// 24576, rmsnorm bf16 512 x 29568). The registers of the row layout (ptxas: 55 for the bf16
// norms' 4-vector variant, so one 640-thread block per SM, not two) and the unoverlapped
// arithmetic of a lone block take these 25 records from a median signed error of -11.3% to
// -7.6% and the largest from 33.1% to 25.6% (layernorm bf16 512 x 20480, own-set1). Limit 27%.
TEST_CASE("row kernels: few long rows within 27%", "[validation]") {
  each_within(
      {"softmax", "layernorm", "rmsnorm"},
      [](const nlohmann::json& p) {
        return p.at("rows").get<double>() <= 1600 && p.at("cols").get<double>() >= 16384;
      },
      25, 0.27);
}

// Large cold streams: read-only and write-only membw records of 256 MiB and more run at
// hbm_read_stream_gain / hbm_write_stream_gain times the mixed rate (FITS over these very records:
// geometric means 1.121 and 1.072, records spread 1.086-1.152 and 1.049-1.080, so each lies
// within 3.2% of the fit; the limit, 4%, allows for kernel_startup and latency within the time).
// Before this round they were 8-15% (reads) and 5-8% (writes) too slow, in every set.
TEST_CASE("membw: large read-only and write-only streams at their own rates", "[validation]") {
  each_within(
      {"membw"},
      [](const nlohmann::json& p) {
        return p.at("kind").get<std::string>() != "copy" &&
               p.at("bytes").get<double>() >= 256.0 * (1 << 20) && buffers_of(p) <= 1;
      },
      33, 0.04);
}

// cudaMemcpy device to device of 256 MiB and more: copy_d2d_gain (FIT, 1.058 over these 25
// records, spread 1.046-1.068: each within 1.2% of it; limit 3%). Before: +4% to +7%, every set.
TEST_CASE("copy d2d: large copies at the driver copy's rate", "[validation]") {
  each_within(
      {"copy"},
      [](const nlohmann::json& p) {
        return p.at("direction").get<std::string>() == "d2d" &&
               p.at("bytes").get<double>() >= 256.0 * (1 << 20);
      },
      25, 0.03);
}

// Issue 18 round 3, second pass: a cold read stream ramps up (hbm_read_ramp 1.15 us,
// hbm_read_ramp_bytes 16 MiB, FITS over the cold membw reads; hw/model_params.cpp). The cold
// membw reads under 256 MiB (rotated buffers, footprint past L2) were -17% to +4% off (12-100
// MiB 5-17% too fast); with the ramp each lies within 3.5% (a fit on these records: limit 4%).
TEST_CASE("membw: cold reads under 256 MiB with the read ramp", "[validation]") {
  each_within(
      {"membw"},
      [](const nlohmann::json& p) {
        const double bytes = p.at("bytes").get<double>();
        return p.at("kind").get<std::string>() == "read" && bytes < 256.0 * (1 << 20) &&
               bytes * buffers_of(p) > 60.0 * (1 << 20);
      },
      18, 0.04);
}

// The same ramp on cudaMemcpy device to device (its reads are half its bytes): no d2d record
// shaped the ramp's two figures. Copies of 7-255 MiB were -13.6% to -2% (11 MiB, own-set8, the
// worst); with the ramp -5.9% to +1.3%. Limit 6.5%. Copies under 7 MiB stay 8-16% too fast
// (docs/accuracy.md): they are left out, not guarded.
TEST_CASE("copy d2d: mid-size copies with the read ramp", "[validation]") {
  each_within(
      {"copy"},
      [](const nlohmann::json& p) {
        const double bytes = p.at("bytes").get<double>();
        return p.at("direction").get<std::string>() == "d2d" && bytes >= 7.0 * (1 << 20) &&
               bytes < 256.0 * (1 << 20);
      },
      21, 0.065);
}

// ---- Issue 18, round 6 (docs/accuracy.md "Round 6: row kernels at both ends of the row count").

namespace {

// The row records of own-set1..4 and 7..11 and kernels.json (sets 5 and 6 hold none).
std::vector<models::Record> row_records_round6() {
  std::vector<std::string> files = {"kernels.json"};
  for (int i : {1, 2, 3, 4, 7, 8, 9, 10, 11})
    files.push_back("own-set" + std::to_string(i) + "/own-set" + std::to_string(i) + ".json");
  std::vector<models::Record> out;
  for (const auto& f : files) {
    auto file = models::read_records(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/" + f);
    for (auto& r : file.records)
      if (r.op == "softmax" || r.op == "layernorm" || r.op == "rmsnorm")
        out.push_back(std::move(r));
  }
  return out;
}

double dtype_size(const std::string& d) {
  return d == "fp32" ? 4 : 2;
}

// Many short rows: 32-thread blocks (as the device reported them) over rows of at most 512 bytes
// and 30000 rows or more, where the SM's block rate binds.
std::vector<models::Record> short_row_records() {
  std::vector<models::Record> out;
  for (auto& r : row_records_round6()) {
    const double rows = r.params.at("rows").get<double>(), cols = r.params.at("cols").get<double>();
    const double bytes = cols * dtype_size(r.params.at("dtype").get<std::string>());
    if (r.raw.at("kernel").at("block").at(0).get<int>() == 32 && rows >= 30000 && bytes <= 512)
      out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

// row_block_dispatch is a FIT: the least-squares slope of the measured time against rows per SM
// (132 SMs) over these records. The test redoes the fit from the committed records, so the
// figure in hw/model_params.cpp cannot drift from them: within 0.5 ns (it is written to 0.1 ns).
TEST_CASE("row kernels: row_block_dispatch is the slope of the short-row records", "[validation]") {
  const auto recs = short_row_records();
  REQUIRE(recs.size() == 18);
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& r : recs) {
    const double x = r.params.at("rows").get<double>() / 132, y = r.median_s;
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  INFO("slope " << slope * 1e9 << " ns per block per SM");
  CHECK(std::fabs(slope - calibrated().param("row_block_dispatch")) <= 0.5e-9);
}

// Before round 6 these 18 records were all 9.9% to 13.0% too slow (the calibrated block_dispatch,
// 90 ns, over their 80 ns slope); with row_block_dispatch they lie within -1.6% to +0.4%. The
// limit, 4%, is the line's own scatter (every record within 1.2% of it) plus the model's
// intercept, 0.35 us short of the line's 4.1 us (at most 1.2% of the smallest, 30 us), plus room.
TEST_CASE("row kernels: many short rows at the SM's block rate", "[validation]") {
  const auto c = models::compare(calibrated(), short_row_records(), models::Mode::kFast, false);
  CHECK(c.rows.size() == 18);
  for (const auto& row : c.rows) {
    INFO(row.id << " (" << row.file << "): " << row.error);
    CHECK(std::fabs(row.error) <= 0.04);
  }
}

// One-wave row kernels (no more rows than the device's resident blocks, 132 x blocks_per_sm as it
// reported them): all blocks load, reduce and store in step, so the arithmetic is exposed whole.
// Before round 6 the 9 such records scored 13.1% median |error| (all too fast); with the rule 2.0%.
// The guard: median within 5% (the class target) and count 9, so a rule lost or widened fails.
TEST_CASE("row kernels: one-wave kernels expose their arithmetic", "[validation]") {
  std::vector<models::Record> picked;
  for (auto& r : row_records_round6()) {
    const double slots = 132.0 * r.raw.at("kernel").at("blocks_per_sm").get<double>();
    if (r.params.at("rows").get<double>() <= slots) picked.push_back(std::move(r));
  }
  const auto s = all_of(picked);
  INFO("median " << s.median_abs << ", p90 " << s.p90_abs << ", max " << s.max_abs);
  CHECK(s.cases == 9);
  CHECK(s.median_abs <= 0.05);
}

namespace {

// Round 7: the row records of kernels.json and own-set1..4, 7..12, with the blocks per SM the
// device reported, picked by `keep(rows, blocks_per_sm)`.
template <class Keep>
std::vector<models::Record> row_records_round7(const std::vector<std::string>& ops, Keep keep) {
  std::vector<std::string> files = {"kernels.json"};
  for (int i : {1, 2, 3, 4, 7, 8, 9, 10, 11, 12})
    files.push_back("own-set" + std::to_string(i) + "/own-set" + std::to_string(i) + ".json");
  std::vector<models::Record> out;
  for (const auto& f : files) {
    auto file = models::read_records(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/" + f);
    for (auto& r : file.records) {
      bool want = false;
      for (const auto& op : ops) want = want || r.op == op;
      if (!want) continue;
      const double rows = r.params.at("rows").get<double>();
      const double n = r.raw.at("kernel").at("blocks_per_sm").get<double>();
      if (keep(rows, n)) out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

// Softmax with one or two blocks per SM over several waves: its arithmetic (the SFU's exp) is a
// large share of a block's cycle, and round 6's charge (1/n of it exposed) put these 9-16% too
// slow. With the SMs out of phase, the others' loads cover an SM's arithmetic up to
// row_sm_stream_share (a FIT on all row records, these among them: a regression guard, not a
// prediction). Before round 7 the 23 records scored 9.6% median |error|, 17 of them too
// slow (-3.5% to +15.8%); with the rule 3.0% (-2.1% to +12.0%). Guard: the class target, 5%.
TEST_CASE("row kernels: softmax of one or two blocks per SM over several waves", "[validation]") {
  const auto recs = row_records_round7(
      {"softmax"}, [](double rows, double n) { return n <= 2 && rows > 132 * n; });
  const auto s = all_of(recs);
  INFO("median " << s.median_abs << ", p90 " << s.p90_abs << ", max " << s.max_abs);
  CHECK(s.cases == 23);
  CHECK(s.median_abs <= 0.05);
}

// Norms of long rows, one or two blocks per SM, two to four waves: the first wave's blocks run
// their serial chain (HBM latency, block reductions at row_reduction_sync, the weights' L2 round
// trip) in step, and the SM's cycle holds it after. Before round 7 the 14 records scored 7.5%
// median |error|, all but one too fast, the worst -19.8% (layernorm bf16 512 x 20480); now 6.0%,
// the worst -14.0% (layernorm fp32 512 x 24576). Guard: worst within 15% (was 19.8%) and median
// within 7% (6.0% plus a point).
TEST_CASE("row kernels: norms of a few waves of long rows", "[validation]") {
  const auto recs = row_records_round7({"layernorm", "rmsnorm"}, [](double rows, double n) {
    return n <= 2 && rows > 132 * n && rows <= 4 * 132 * n;
  });
  const auto s = all_of(recs);
  INFO("median " << s.median_abs << ", p90 " << s.p90_abs << ", max " << s.max_abs);
  CHECK(s.cases == 14);
  CHECK(s.median_abs <= 0.07);
  CHECK(s.max_abs <= 0.15);
}
