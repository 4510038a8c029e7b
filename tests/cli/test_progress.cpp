// The progress displays of long runs, driven with a fake clock into a temporary file standing for
// a stderr that is not a terminal (a log): the detailed-mode display (cli/detailed_progress.cpp),
// also fed by a real detailed-mode run, and the sweep's bar (cli/progress.cpp). Expected lines are
// written from the formats' rules (cadence and number formatting), not copied from output.
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "cli/detailed_progress.hpp"
#include "cli/progress.hpp"
#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/graph_yaml.hpp"
#include "workloads/progress.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

/// A temporary file standing for stderr; lines() reads back what was written.
struct Capture {
  std::FILE* f = std::tmpfile();
  ~Capture() {
    if (f) std::fclose(f);
  }
  std::string text() const {
    std::fflush(f);
    std::rewind(f);
    std::string s;
    for (int c = std::fgetc(f); c != EOF; c = std::fgetc(f)) s += static_cast<char>(c);
    return s;
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::string cur;
    for (char c : text()) {
      if (c == '\n') {
        out.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    if (!cur.empty()) out.push_back(cur);
    return out;
  }
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

TEST_CASE("progress: detailed-mode line text follows its format", "[unit]") {
  // {:.3g} of 2,500,000 blocks is "2.5e+06"; 2.5e6 / 1e7 is 25% ({:.0f}); {:.0e} of the 1e7
  // budget is "1e+07"; 7.4 s rounds to "7 s".
  CHECK(ridge::cli::detailed_progress_line({"detailed mode", 2.5e6, 1e7, 3}, 7.4) ==
        "ridge: detailed mode: 2.5e+06 thread blocks simulated (25% of the budget 1e+07), 3 op "
        "shapes, 7 s");
  // 123,456 blocks to 3 significant digits is "1.23e+05"; 1.23456% rounds to "1%".
  CHECK(ridge::cli::detailed_progress_line({"detailed mode", 123456, 1e7, 12}, 65) ==
        "ridge: detailed mode: 1.23e+05 thread blocks simulated (1% of the budget 1e+07), 12 op "
        "shapes, 65 s");
}

TEST_CASE("progress: detailed mode prints plain lines every 5 s when not a terminal", "[unit]") {
  Capture cap;
  const auto t0 = Clock::time_point{};
  ridge::cli::DetailedProgressPrinter printer(false, cap.f, t0);
  // A report every second for 12 s: nothing before 2 s (short runs print nothing) nor within 5 s
  // of the last line (the start counts as the last), so lines at 5 s and 10 s only.
  for (int s = 0; s <= 12; ++s) printer.report({"detailed mode", 1e5 * s, 1e7, s}, t0 + seconds(s));
  const auto lines = cap.lines();
  REQUIRE(lines.size() == 2);
  // At 5 s: 5e5 blocks ("5e+05"), 5% of 1e7, 5 shapes; at 10 s: 1e6 ("1e+06"), 10%, 10 shapes.
  CHECK(lines[0] ==
        "ridge: detailed mode: 5e+05 thread blocks simulated (5% of the budget 1e+07), 5 op "
        "shapes, 5 s");
  CHECK(lines[1] ==
        "ridge: detailed mode: 1e+06 thread blocks simulated (10% of the budget 1e+07), 10 op "
        "shapes, 10 s");
  CHECK_FALSE(printer.line_shown());  // no in-place line to clear at exit
}

TEST_CASE("progress: detailed mode on a terminal rewrites one line, at most 5 per second",
          "[unit]") {
  Capture cap;
  const auto t0 = Clock::time_point{};
  ridge::cli::DetailedProgressPrinter printer(true, cap.f, t0);
  // Reports every 100 ms from 1.9 s to 2.9 s: the first at or after 2 s (2.0 s) is shown, then
  // one whenever 200 ms have passed since the last shown: 2.0, 2.2, 2.4, 2.6, 2.8 s = 5 lines.
  for (int ms = 1900; ms <= 2900; ms += 100)
    printer.report({"detailed mode", 1e3, 1e7, 1}, t0 + milliseconds(ms));
  const std::string text = cap.text();
  CHECK(text.find('\n') == std::string::npos);  // rewritten in place, never a new line
  int shown = 0;
  for (std::size_t at = text.find('\r'); at != std::string::npos; at = text.find('\r', at + 1))
    ++shown;
  CHECK(shown == 5);
  CHECK(ends_with(text, "3 s\033[K"));  // the last at 2.8 s, {:.0f} rounds it to 3
  CHECK(printer.line_shown());
}

TEST_CASE("progress: a real detailed-mode run reports to the display", "[unit]") {
  // Four GEMMs of distinct shapes in detailed mode: the op timer reports once per shape simulated.
  // The fake clock moves 3 s per report, so reports come at 3, 6, 9, 12 s; lines are due at 6 s
  // (2 shapes so far) and 12 s (4 shapes), as the 5 s cadence derives.
  const std::string yaml = R"(kind: graph
mode: detailed
kernel_gap: 0 us
ops:
  - {name: a, op: gemm m=256 n=256 k=256 dtype=bf16}
  - {name: b, op: gemm m=512 n=256 k=256 dtype=bf16, after: [a]}
  - {name: c, op: gemm m=256 n=512 k=256 dtype=bf16, after: [b]}
  - {name: d, op: gemm m=512 n=512 k=256 dtype=bf16, after: [c]}
)";
  const auto f = ridge::workloads::read_graph_yaml(ridge::hw::parse_yaml(yaml, "progress.yaml"));
  REQUIRE(f.mode == ridge::workloads::TimingMode::kDetailed);
  Capture cap;
  auto now = Clock::time_point{};
  ridge::cli::DetailedProgressPrinter printer(false, cap.f, now);
  int reports = 0;
  ridge::workloads::set_progress_reporter([&](const ridge::workloads::Progress& p) {
    ++reports;
    now += seconds(3);
    printer.report(p, now);
  });
  (void)ridge::workloads::run_graph(f, ridge::hw::find_gpu("h200"));
  ridge::workloads::set_progress_reporter({});
  CHECK(reports == 4);
  const auto lines = cap.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("ridge: detailed mode: ", 0) == 0);
  CHECK(ends_with(lines[0], "% of the budget 1e+07), 2 op shapes, 6 s"));
  CHECK(ends_with(lines[1], "% of the budget 1e+07), 4 op shapes, 12 s"));
}

TEST_CASE("progress: a sweep's progress prints a plain line per 10% when not a terminal",
          "[unit]") {
  Capture cap;
  auto now = Clock::time_point{};
  ridge::cli::Progress progress(20, 0, "points", false, cap.f, [&] { return now; });
  // 20 points, one per second: a line each time another tenth (2 points) is done, 10 in all.
  for (int i = 1; i <= 20; ++i) {
    now += seconds(1);
    progress.tick();
  }
  progress.finish();  // not a terminal: no final bar line
  const auto lines = cap.lines();
  REQUIRE(lines.size() == 10);
  // After 2 points in 2 s: 10%, 1.0 points/s, 18 left at that rate is 18 s.
  CHECK(lines[0] == "ridge: 2/20 points (10%), 1.0 points/s, ETA 18s");
  // After 20: 100%, ETA 0 s.
  CHECK(lines[9] == "ridge: 20/20 points (100%), 1.0 points/s, ETA 0s");
}

TEST_CASE("progress: a resumed sweep counts earlier points, and a slow one prints every 5 s",
          "[unit]") {
  Capture cap;
  auto now = Clock::time_point{};
  // 100 points of which 50 were done before; one more every 2 s.
  ridge::cli::Progress progress(100, 50, "points", false, cap.f, [&] { return now; });
  for (int i = 1; i <= 10; ++i) {
    now += seconds(2);
    progress.tick();
  }
  const auto lines = cap.lines();
  // The first tick is in decile 5 (51/100), above the decile the display starts from (0): a
  // line at 2 s. Then the first tick 5 s or more after the last line: 8 s (4 points) and 14 s
  // (7); then decile 6 at 20 s (10 points).
  REQUIRE(lines.size() == 4);
  // 1 point in 2 s: 0.5 points/s; 49 left take 98 s = "1m38s".
  CHECK(lines[0] == "ridge: 51/100 points (51%), 0.5 points/s, ETA 1m38s");
  // 4 points in 8 s: 0.5/s; 46 left: 92 s = "1m32s".
  CHECK(lines[1] == "ridge: 54/100 points (54%), 0.5 points/s, ETA 1m32s");
  CHECK(lines[2] == "ridge: 57/100 points (57%), 0.5 points/s, ETA 1m26s");
  // 10 points in 20 s; 40 left: 80 s = "1m20s".
  CHECK(lines[3] == "ridge: 60/100 points (60%), 0.5 points/s, ETA 1m20s");
}
