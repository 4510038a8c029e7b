// ridge sweep: the grid a sweep block expands to, point keys, a point against `ridge run`, threads
// against one thread, resume, failed points, bad input.
#include <stdlib.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "../cli/harness.hpp"
#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/sweep.hpp"

using ridge::test::contains;
using ridge::test::run_ridge;
using ridge::test::Scratch;

namespace {

const std::string kStudy =
    "study:\n"
    "  model: gpt2-small\n"
    "  gpu: h200\n"
    "  workloads:\n"
    "    - {label: decode, kind: decode, batch: 1, context: 512, graph: true}\n";

std::string grid_file(const Scratch& s, const std::string& sweep,
                      const std::string& study = kStudy) {
  return s.write("s.yaml", study + sweep);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

}  // namespace

TEST_CASE("sweep: a grid is the cartesian product, the first key slowest", "[unit]") {
  Scratch s;
  // hbm_bandwidth: linear from 2 to 6 TB/s in 3 steps is 2 + 4 x i/2 TB/s = 2, 4, 6 TB/s;
  // batch: log from 1 to 8 in 4 steps is 8^(i/3) = 2^i = 1, 2, 4, 8.
  const auto sw = ridge::workloads::load_sweep(
      grid_file(s,
                "sweep:\n  grid:\n    hbm_bandwidth: {from: 2 TB/s, to: 6 TB/s, steps: 3}\n"
                "    batch: {from: 1, to: 8, steps: 4, scale: log}\n"),
      "test");
  REQUIRE(sw.points.size() == 12);
  REQUIRE(sw.grid_shape == std::vector<std::size_t>{3, 4});
  REQUIRE(sw.keys == std::vector<std::string>{"hbm_bandwidth", "batch"});
  const double bw[] = {2e12, 4e12, 6e12};
  const char* batch[] = {"1", "2", "4", "8"};
  for (std::size_t i = 0; i < 12; ++i) {
    CHECK(sw.points[i].values[0].number == Approx(bw[i / 4]).epsilon(1e-15));
    CHECK(sw.points[i].values[1].text == batch[i % 4]);
    CHECK(sw.studies.at(sw.points[i].study).workloads[0].infer.batch == std::stoll(batch[i % 4]));
  }
  CHECK(sw.studies.size() == 5);  // the base study and one per batch
  // One column triple per workload.
  CHECK(sw.columns ==
        std::vector<std::string>{"decode.step_s", "decode.peak_memory_bytes", "decode.fits"});
}

TEST_CASE("sweep: point keys follow the study and the point, not the point's index", "[unit]") {
  Scratch s;
  const auto a =
      ridge::workloads::load_sweep(grid_file(s, "sweep:\n  grid:\n    batch: [1, 16]\n"), "test");
  const auto b = ridge::workloads::load_sweep(
      grid_file(s, "sweep:\n  grid:\n    batch: [4, 16, 1]\n"), "test");
  REQUIRE(a.points.size() == 2);
  CHECK(a.points[0].key != a.points[1].key);
  CHECK(a.study_hash == b.study_hash);        // the sweep block is not part of the study
  CHECK(a.points[0].key == b.points[2].key);  // batch 1 in both
  CHECK(a.points[1].key == b.points[1].key);  // batch 16
  // A change to the study (context 512 -> 256) changes every key; so does the tool's version.
  std::string other = kStudy;
  other.replace(other.find("context: 512"), 12, "context: 256");
  const auto c = ridge::workloads::load_sweep(
      grid_file(s, "sweep:\n  grid:\n    batch: [1, 16]\n", other), "test");
  CHECK(c.points[0].key != a.points[0].key);
  const auto d = ridge::workloads::load_sweep(grid_file(s, "sweep:\n  grid:\n    batch: [1, 16]\n"),
                                              "another version");
  CHECK(d.points[0].key != a.points[0].key);
}

TEST_CASE("sweep: a point equals ridge run of the same study", "[property]") {
  Scratch s;
  // The study's own values as the one point: the same step time, to the last bit.
  s.write("run.yaml", kStudy);
  s.write("sweep.yaml", kStudy + "sweep:\n  points:\n    - {batch: 1}\n");
  const auto run = run_ridge("run run.yaml --json", s.dir.string());
  REQUIRE(run.status == 0);
  const auto sweep = run_ridge("sweep sweep.yaml --json --out o", s.dir.string());
  REQUIRE(sweep.status == 0);
  const double run_s = nlohmann::json::parse(run.output)["workloads"][0]["step_time_s"];
  const auto j = nlohmann::json::parse(s.read("o/sweep.json"));
  CHECK(j["points"][0]["results"][0].get<double>() == run_s);

  // An absolute figure is the what-if with factor value / base: 1.5 x the H200's HBM bandwidth
  // equals `--what-if hbm_bandwidth*1.5` re-simulated (1.5 x base / base = 1.5 exactly, as base
  // is a whole number of B/s well below 2^53).
  const double base = ridge::hw::find_gpu("h200").memory.hbm_bandwidth;
  s.write("bw.yaml", kStudy + "sweep:\n  points:\n    - {hbm_bandwidth: " +
                         std::to_string(static_cast<long long>(1.5 * base)) + " B/s}\n");
  const auto wi = run_ridge("run run.yaml --json --what-if hbm_bandwidth*1.5", s.dir.string());
  REQUIRE(wi.status == 0);
  REQUIRE(run_ridge("sweep bw.yaml --out b", s.dir.string()).status == 0);
  const double wi_s = nlohmann::json::parse(wi.output)["workloads"][0]["what_if"][0]["step_time_s"];
  CHECK(nlohmann::json::parse(s.read("b/sweep.json"))["points"][0]["results"][0].get<double>() ==
        wi_s);
}

TEST_CASE("sweep: a parallel study's point equals ridge run", "[property]") {
  Scratch s;
  // GPT-2 small on one DGX H100 (TP 2 x DP 4): small enough for the ASan pass.
  const std::string study =
      "study:\n"
      "  model: gpt2-small\n"
      "  parallel: {system: dgx-h100, tp: 2, dp: 4, micro_batch: 2, global_batch: 16, seq: 1024}\n";
  s.write("run.yaml", study);
  s.write("p.yaml", study + "sweep:\n  points:\n    - {nvlink_bandwidth*: 1, tp: 2}\n");
  const auto run = run_ridge("run run.yaml --json", s.dir.string());
  REQUIRE(run.status == 0);
  REQUIRE(run_ridge("sweep p.yaml --out o", s.dir.string()).status == 0);
  const auto r = nlohmann::json::parse(s.read("o/sweep.json"))["points"][0]["results"];
  const auto j = nlohmann::json::parse(run.output);
  CHECK(r[0].get<double>() == j["step_s"].get<double>());
  CHECK(r[1].get<double>() == j["tokens_per_s"].get<double>());
  CHECK(r[2].get<double>() == j["mfu"].get<double>());
}

TEST_CASE("sweep: threads write the same bytes as one thread", "[property]") {
  Scratch s;
  const std::string study = std::string(RIDGE_SOURCE_DIR) + "/tests/sweep/data/decode-grid.yaml";
  REQUIRE(run_ridge("sweep '" + study + "' -j 1 --out one", s.dir.string()).status == 0);
  REQUIRE(run_ridge("sweep '" + study + "' -j 3 --out three", s.dir.string()).status == 0);
  for (const char* f : {"sweep.csv", "sweep.json", "sweep.svg", "sweep.points.jsonl"}) {
    INFO(f);
    CHECK(!s.read(std::string("one/") + f).empty());
    CHECK(s.read(std::string("one/") + f) == s.read(std::string("three/") + f));
  }
  // 3 x 2 grid: a header and 6 rows; the heatmap of a 2-key grid.
  CHECK(lines(s.read("one/sweep.csv")).size() == 7);
  CHECK(contains(s.read("one/sweep.svg"), "<svg"));
}

TEST_CASE("sweep: a rerun computes only the points missing from the journal", "[property]") {
  Scratch s;
  const std::string study = std::string(RIDGE_SOURCE_DIR) + "/tests/sweep/data/decode-grid.yaml";
  const auto first = run_ridge("sweep '" + study + "' --out o", s.dir.string());
  REQUIRE(first.status == 0);
  CHECK(contains(first.output, "6 to compute, 0 from"));
  const std::string csv = s.read("o/sweep.csv"), json = s.read("o/sweep.json");
  // An interrupted run: two finished points gone and a torn last line.
  auto journal = lines(s.read("o/sweep.points.jsonl"));
  REQUIRE(journal.size() == 6);
  std::string cut;
  for (std::size_t i = 0; i < journal.size(); ++i)
    if (i != 1 && i != 4) cut += journal[i] + "\n";
  cut += journal[4].substr(0, journal[4].size() / 2);
  std::filesystem::remove(s.path("o/sweep.csv"));
  s.write("o/sweep.points.jsonl", cut);
  const auto again = run_ridge("sweep '" + study + "' --out o", s.dir.string());
  REQUIRE(again.status == 0);
  CHECK(contains(again.output, "2 to compute, 4 from"));
  CHECK(s.read("o/sweep.csv") == csv);
  CHECK(s.read("o/sweep.json") == json);
  // Nothing left to do: a third run computes nothing and writes the same.
  const auto third = run_ridge("sweep '" + study + "' --out o", s.dir.string());
  CHECK(contains(third.output, "0 to compute, 6 from"));
  CHECK(s.read("o/sweep.csv") == csv);
}

TEST_CASE("sweep: a failed point is reported, exits non-zero, and a rerun completes it",
          "[property]") {
  Scratch s;
  const std::string study = std::string(RIDGE_SOURCE_DIR) + "/tests/sweep/data/decode-grid.yaml";
  // The test hook makes point 3 throw (as a model error would).
  ::setenv("RIDGE_SWEEP_TEST_FAIL_AT", "3", 1);
  const auto failed = run_ridge("sweep '" + study + "' --out o", s.dir.string());
  ::unsetenv("RIDGE_SWEEP_TEST_FAIL_AT");
  REQUIRE(failed.status == 3);
  CHECK(contains(failed.output, "point 3 (hbm_bandwidth=4000000000000 batch=16): failed"));
  CHECK(contains(failed.output, "1 of 6 points have no result"));
  CHECK(!s.exists("o/sweep.csv"));
  CHECK(lines(s.read("o/sweep.points.jsonl")).size() == 5);
  const auto again = run_ridge("sweep '" + study + "' --out o", s.dir.string());
  REQUIRE(again.status == 0);
  CHECK(contains(again.output, "1 to compute, 5 from"));
  CHECK(lines(s.read("o/sweep.csv")).size() == 7);
}

TEST_CASE("sweep: bad sweeps name file:line:col and key, exit 2, write nothing",
          "[config-errors]") {
  struct Case {
    std::string sweep, expected;
  };
  // Lines 1-5 are the study; the sweep block starts on line 6.
  const Case cases[] = {
      {"sweep: {}\n", "s.yaml:6:8: sweep: an empty sweep"},
      {"sweep:\n  grid: {}\n", "s.yaml:7:9: sweep.grid: an empty sweep"},
      {"sweep:\n  points: []\n", "s.yaml:7:11: sweep.points: an empty sweep"},
      {"sweep:\n  grid:\n    hbm_bandwith: [1 TB/s]\n",
       "s.yaml:8:19: sweep.grid.hbm_bandwith: unknown sweep key 'hbm_bandwith' (did you mean "
       "'hbm_bandwidth'?)"},
      {"sweep:\n  grid:\n    hbm_bandwidth: {from: 1 TB/s, to: 2 TB/s, steps: 0}\n",
       "s.yaml:8:54: sweep.grid.hbm_bandwidth.steps: a range of zero steps"},
      {"sweep:\n  grid:\n    hbm_bandwidth: [3 TB/s, -1 TB/s]\n",
       "s.yaml:8:29: sweep.grid.hbm_bandwidth[1]: expected a positive hbm_bandwidth"},
      {"sweep:\n  grid:\n    nvlink_bandwidth: [1 TB/s]\n",
       "sweep.grid.nvlink_bandwidth: unknown sweep key 'nvlink_bandwidth' (a system figure"},
      {"sweep:\n  grid:\n    batch: [0, 4]\n",
       "s.yaml:8:13: study.workloads[0].batch: value out of range: 0 is not in"},
  };
  for (const auto& c : cases) {
    Scratch s;
    grid_file(s, c.sweep);
    const auto r = run_ridge("sweep s.yaml --out o", s.dir.string());
    INFO(c.sweep << r.output);
    CHECK(r.status == 2);
    CHECK(contains(r.output, c.expected));
    CHECK(contains(r.output, "nothing was written"));
    CHECK(!s.exists("o"));
  }
}
