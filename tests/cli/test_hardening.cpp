// Issue 21, crashes and files: inputs that used to crash `ridge` (a signal, not an exit status) or
// destroy a file, each run through the binary; the exit status (2 for every bad input), the
// message, and what was (not) written are checked.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "tests/cli/harness.hpp"

using namespace ridge::test;

namespace {

const char* kSmallStudy = R"(study:
  model: gpt2-small
  gpu: h200
  workloads:
    - {kind: decode, batch: 1, context: 128}
)";

std::string nested(int depth, const std::string& open, const std::string& inner,
                   const std::string& close) {
  std::string s;
  s.reserve(depth * (open.size() + close.size()) + inner.size());
  for (int i = 0; i < depth; ++i) s += open;
  s += inner;
  for (int i = 0; i < depth; ++i) s += close;
  return s;
}

}  // namespace

TEST_CASE("crash: a workload without kind is a config error", "[config-errors]") {
  Scratch s;
  s.write("study.yaml",
          "study:\n  model: gpt2-small\n  workloads:\n    - {batch: 1, context: 8}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);  // was SIGSEGV
  CHECK(contains(r.output, "study.yaml:4:7: study.workloads[0].kind: missing required key"));
  // Nothing about decode's or train's keys: they depend on the kind.
  CHECK_FALSE(contains(r.output, "unknown key"));
}

TEST_CASE("crash: a near-miss workload kind gets did-you-mean", "[config-errors]") {
  Scratch s;
  s.write("study.yaml",
          "study:\n  model: gpt2-small\n  workloads:\n    - {kind: decod, batch: 1, seq: 8}\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output,
                 "study.workloads[0].kind: expected train, prefill, decode or diffusion, got "
                 "'decod' (did you mean 'decode'?)"));
  CHECK_FALSE(contains(r.output, "seq"));  // no other kind's key list
}

TEST_CASE("crash: what-if factors outside [0.01, 100] are refused", "[config-errors]") {
  Scratch s;
  s.write("study.yaml", kSmallStudy);
  // sm_count*0.001 rounded 132 SMs to 0 (SIGFPE); *1e300 overflowed; 1e-300 overflowed time.
  for (const char* w : {"sm_count*0.001", "sm_count*1e300", "hbm_bandwidth*1e-300", "gemm*0"}) {
    const Run r = run_ridge(std::string("run study.yaml --what-if '") + w + "'", s.dir);
    CHECK(r.status == 2);
    CHECK(contains(r.output, std::string("what-if '") + w + "': factor must be in [0.01, 100]"));
  }
  // The bounds themselves are accepted: 132 x 0.01 = 1.32 rounds to 1 SM.
  CHECK(
      run_ridge("run study.yaml --what-if 'sm_count*0.01' --what-if 'tensor*100'", s.dir).status ==
      0);
}

TEST_CASE("crash: a study's what_if list is checked item by item", "[config-errors]") {
  Scratch s;
  s.write("study.yaml", std::string(kSmallStudy) + "  what_if: [gemm*2, sm_count*0.001]\n");
  const Run r = run_ridge("run study.yaml", s.dir);
  CHECK(r.status == 2);
  // Line 6 is the what_if line; the item starts after "  what_if: [gemm*2, " (20 characters).
  CHECK(contains(r.output, "study.yaml:6:21: study.what_if[1]: what-if 'sm_count*0.001'"));
}

TEST_CASE("crash: JSON nested 300,000 deep is refused before parsing", "[config-errors]") {
  Scratch s;
  s.write("arrays.json", nested(300000, "[", "", "]"));
  s.write("objects.json", nested(300000, "{\"a\":", "1", "}"));
  s.write("records.json",
          "{\"schema\": \"ridge.records/1\", \"records\": " + nested(300000, "[", "", "]") + "}");
  // The limit is 128 levels: the 129th opening bracket, at byte 128 (0-based), passes it; in the
  // objects file each level is 5 bytes, so byte 5 x 128 = 640.
  struct Case {
    std::string args, where;
  };
  for (const Case& c : {Case{"predict arrays.json", "arrays.json: byte 128: "},
                        Case{"predict objects.json", "objects.json: byte 640: "},
                        Case{"compare records.json", "records.json: byte "},
                        Case{"compare objects.json", "objects.json: byte 640: "},
                        Case{"calibrate records.json --out o.yaml", "records.json: byte "}}) {
    const Run r = run_ridge(c.args, s.dir);
    INFO(c.args);
    CHECK(r.status == 2);  // was a stack overflow (SIGSEGV)
    CHECK(contains(r.output, c.where + std::string("")));
    CHECK(contains(r.output, "JSON nested more than 128 levels deep (the limit)"));
  }
  CHECK_FALSE(s.exists("o.yaml"));
}

namespace {
const std::string kLaunchRecords =
    std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/launch.json";
}  // namespace

TEST_CASE("files: device nodes, FIFOs and directories are never replaced", "[config-errors]") {
  Scratch s;
  s.write("study.yaml", kSmallStudy);
  REQUIRE(::mkfifo(s.path("fifo").c_str(), 0600) == 0);
  std::filesystem::create_directory(s.dir / "dir");
  Run r = run_ridge("run study.yaml --trace fifo", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "fifo: refusing to write an output there: it is a FIFO"));
  CHECK(std::filesystem::is_fifo(s.dir / "fifo"));
  r = run_ridge("run study.yaml --svg dir", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "dir: refusing to write an output there: it is a directory"));
  // A character device: refused before anything is opened (checked by stat, never written).
  r = run_ridge("run study.yaml --timeline-svg /dev/null", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "/dev/null: refusing to write an output there: it is a device node"));
}

TEST_CASE("files: a planted link at the temporary name is not followed", "[config-errors]") {
  Scratch s;
  s.write("study.yaml", kSmallStudy);
  s.write("victim.txt", "precious\n");
  // The old writer opened "<path>.tmp-ridge" with O_TRUNC, following a link planted there.
  std::filesystem::create_symlink(s.path("victim.txt"), s.dir / "t.json.tmp-ridge");
  const Run r = run_ridge("run study.yaml --trace t.json", s.dir);
  CHECK(r.status == 0);
  CHECK(s.read("victim.txt") == "precious\n");
  CHECK(s.read("t.json").substr(0, 1) == "{");
  // No temporary is left beside the output.
  int entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(s.dir)) ++entries;
  CHECK(entries == 4);  // study.yaml, victim.txt, the link, t.json
}

TEST_CASE("files: outputs appear together or not at all", "[config-errors]") {
  Scratch s;
  s.write("study.yaml", kSmallStudy);
  const Run r = run_ridge("run study.yaml --trace t.json --svg missing/r.svg", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "missing/r.svg: cannot write: No such file or directory"));
  CHECK_FALSE(s.exists("t.json"));
  // An existing output is left as it was.
  s.write("t.json", "old\n");
  CHECK(run_ridge("run study.yaml --trace t.json --svg missing/r.svg", s.dir).status == 2);
  CHECK(s.read("t.json") == "old\n");
}

TEST_CASE("files: an input of the run is never an output", "[config-errors]") {
  Scratch s;
  s.write("study.yaml", kSmallStudy);
  std::filesystem::copy_file(kLaunchRecords, s.dir / "launch.json");
  const std::string records = s.read("launch.json");
  // calibrate --out onto its records file replaced JSON measurements with YAML.
  Run r = run_ridge("calibrate launch.json --out launch.json", s.dir);
  CHECK(r.status == 2);
  CHECK(contains(r.output, "launch.json: refusing to write an output there: it is an input"));
  CHECK(s.read("launch.json") == records);
  // Through another name (a hard link: same device and inode).
  std::filesystem::create_hard_link(s.dir / "launch.json", s.dir / "alias.json");
  CHECK(run_ridge("calibrate launch.json --out alias.json", s.dir).status == 2);
  CHECK(s.read("launch.json") == records);
  // calibrate onto the overlay it starts from: refused, and the overlay stays.
  REQUIRE(run_ridge("calibrate launch.json --out cal.yaml", s.dir).status == 0);
  const std::string overlay = s.read("cal.yaml");
  r = run_ridge("calibrate launch.json --gpu cal.yaml --out cal.yaml", s.dir);
  CHECK(r.status == 2);
  CHECK(s.read("cal.yaml") == overlay);
  // The study itself as a trace target.
  CHECK(run_ridge("run study.yaml --trace study.yaml", s.dir).status == 2);
  CHECK(s.read("study.yaml") == kSmallStudy);
  // compare --csv onto a records file.
  CHECK(run_ridge("compare launch.json --csv launch.json", s.dir).status == 2);
  CHECK(s.read("launch.json") == records);
}

TEST_CASE("files: CLI argument errors exit 2", "[config-errors]") {
  // CLI11 returns 104-109 for these; Ridge's contract for bad input is 2.
  for (const char* args : {"run --no-such-flag", "kernel", "compare /no/such/file.json",
                           "describe nonsense", "occupancy --threads many"}) {
    INFO(args);
    CHECK(run_ridge(args).status == 2);
  }
  CHECK(run_ridge("--help").status == 0);
  CHECK(run_ridge("--version").status == 0);
}

TEST_CASE("crash: a JSON number beyond double is a located error in every records reader",
          "[config-errors]") {
  // 1e400 overflows a double: nlohmann throws out_of_range 406, not parse_error, and the records
  // and collective readers caught only parse_error (exit 1, no file named; fuzz_collective's find).
  Scratch s;
  s.write("big.json", R"({"records":[{"id":"x","op":"allreduce","bytes":1e400}]})");
  for (const char* args : {"compare big.json --system dgx-h200", "compare big.json",
                           "predict big.json", "calibrate big.json --out o.yaml"}) {
    INFO(args);
    const Run r = run_ridge(args, s.dir);
    CHECK(r.status == 2);
    CHECK(contains(r.output, "big.json"));
    CHECK(contains(r.output, "number overflow parsing '1e400'"));
  }
}

TEST_CASE("crash: number options refuse nan, inf and values out of their range",
          "[config-errors]") {
  // --host-issue-us nan or 1e300 reached the engine's time type (exit 1, "value out of the
  // picosecond range"), -5 scheduled an event in the past; --top-fraction and --rank-timeout took
  // nan (CLI11's Range compares v < lo || v > hi, false for NaN).
  const std::string coll =
      std::string(RIDGE_SOURCE_DIR) + "/tests/data/systems/nccl-tests-all_reduce.txt";
  for (const char* v : {"nan", "inf", "-5", "1e300"}) {
    INFO(v);
    const Run r =
        run_ridge("compare " + coll + " --system dgx-h200 --op all_reduce --host-issue-us " + v);
    CHECK(r.status == 2);
    CHECK(contains(r.output,
                   "--host-issue-us: expected a number in [0, 1e+06], got " + std::string(v)));
  }
  CHECK(run_ridge("compare " + coll + " --system dgx-h200 --op all_reduce --host-issue-us 8")
            .status == 0);
  const Run t = run_ridge("calibrate " + coll + " --splits --top-fraction nan");
  CHECK(t.status == 2);
  CHECK(contains(t.output, "--top-fraction: expected a number in [0.05, 0.95], got nan"));
  CHECK(contains(run_ridge("plan " + std::string(RIDGE_SOURCE_DIR) +
                           "/configs/studies/plan-llama3-8b-2xh100-offload.yaml --rank-timeout nan")
                     .output,
                 "--rank-timeout: expected a number"));
  CHECK(contains(run_ridge("sweep " + std::string(RIDGE_SOURCE_DIR) +
                           "/configs/sweeps/gpt3-175b-nvlink-tp.yaml --rank-timeout inf")
                     .output,
                 "--rank-timeout: expected a number"));
}
