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
