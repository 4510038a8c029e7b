// Serving inputs: bad traces and bad studies are reported with file and line, all at once.
#include <catch2/catch.hpp>

#include <string>

#include "hw/config.hpp"
#include "workloads/serving.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

std::string data(const std::string& name) {
  return std::string(RIDGE_SERVING_TEST_DATA) + "/" + name;
}

std::vector<std::string> errors_of(const std::function<void()>& f) {
  std::vector<std::string> out;
  try {
    f();
  } catch (const hw::ConfigException& e) {
    for (const auto& x : e.errors()) out.push_back(x.str());
  }
  return out;
}

bool has(const std::vector<std::string>& errs, const std::string& needle) {
  for (const auto& e : errs)
    if (e.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

// bad.csv: line 3 a negative prompt, line 4 a non-numeric prompt, line 5 an arrival before line
// 3's (unsorted), line 6 a prompt of 9000 tokens against an 8192-token model, line 7 a
// non-numeric output count. Every one is reported, each with its file and line.
TEST_CASE("a bad CSV trace: every bad row named by file and line", "[config-errors][serving]") {
  const auto errs = errors_of([] { load_trace(data("bad.csv"), 8192); });
  REQUIRE(errs.size() == 5);
  CHECK(has(errs, "bad.csv:3:"));
  CHECK(has(errs, "prompt_tokens: expected an integer >= 1"));
  CHECK(has(errs, "bad.csv:4:"));
  CHECK(has(errs, "expected an integer, found 'abc'"));
  CHECK(has(errs, "bad.csv:5:"));
  CHECK(has(errs, "arrivals must be sorted"));
  CHECK(has(errs, "bad.csv:6:"));
  CHECK(has(errs, "exceeds the model's context of 8192 tokens"));
  CHECK(has(errs, "bad.csv:7:"));
}

TEST_CASE("a bad JSONL trace: negative, non-numeric and malformed lines",
          "[config-errors][serving]") {
  const auto errs = errors_of([] { load_trace(data("bad.jsonl"), 8192); });
  REQUIRE(errs.size() == 3);
  CHECK(has(errs, "bad.jsonl:2:"));
  CHECK(has(errs, "arrival_s: expected a time >= 0 s"));
  CHECK(has(errs, "bad.jsonl:3:"));
  CHECK(has(errs, "bad.jsonl:4:"));
  CHECK(has(errs, "expected one JSON object per line"));
}

TEST_CASE("a good trace with priorities loads", "[unit][serving]") {
  const auto rs = load_trace(data("good.csv"), 8192);
  REQUIRE(rs.size() == 2);
  CHECK(rs[1].arrival_s == 0.1);
  CHECK(rs[1].prompt_tokens == 200);
  CHECK(rs[1].output_tokens == 20);
  CHECK(rs[1].priority == 0);
  CHECK(rs[0].priority == 1);
}

// A study whose trace is bad fails when run, naming the trace, before anything is simulated.
TEST_CASE("a study over a bad trace fails naming the trace", "[config-errors][serving]") {
  const auto errs = errors_of([] { run_serve(load_serve_study(data("bad-trace-study.yaml"))); });
  CHECK(errs.size() == 5);
  CHECK(has(errs, "bad.csv:6:"));
}

// bad-study.yaml: a misspelt key (line 5), an unknown policy (line 7), max_num_seqs 0 (line 8), and
// the required arrivals missing: all at once.
TEST_CASE("a bad serve study: every problem at once with file:line:col",
          "[config-errors][serving]") {
  const auto errs = errors_of([] { load_serve_study(data("bad-study.yaml")); });
  CHECK(has(errs, "bad-study.yaml:5:3: serve.arivals: unknown key (did you mean 'arrivals'?)"));
  CHECK(has(errs, "bad-study.yaml:7:13: serve.scheduler.policy: expected one of static"));
  CHECK(has(errs, "bad-study.yaml:8:19: serve.scheduler.max_num_seqs"));
  CHECK(has(errs, "serve.arrivals"));
}

// bad-seen-shapes.yaml: sdpa_seen_shapes holds 5 numbers, not whole (batch, q_len, kv_len)
// triples: reported at the list (line 8, column 23) with the count.
TEST_CASE("sdpa_seen_shapes must be whole triples", "[config-errors][serving]") {
  const auto errs = errors_of([] { load_serve_study(data("bad-seen-shapes.yaml")); });
  REQUIRE(errs.size() == 1);
  CHECK(has(errs,
            "bad-seen-shapes.yaml:8:23: serve.engine.sdpa_seen_shapes: expected a flat "
            "list of (batch, q_len, kv_len) triples; got 5 numbers"));
}

// bad-probe-shares.yaml: host_probe_share 1.5 (a share: 0 to 1) on line 9 and a non-numeric
// sdpa_build_probe_share on line 10; both reported at once, each at its value's line:col.
TEST_CASE("host probe shares must be fractions in [0, 1]", "[config-errors][serving]") {
  const auto errs = errors_of([] { load_serve_study(data("bad-probe-shares.yaml")); });
  REQUIRE(errs.size() == 2);
  CHECK(has(errs, "bad-probe-shares.yaml:9:23: serve.engine.host_probe_share: value out of range"));
  CHECK(has(errs,
            "bad-probe-shares.yaml:10:29: serve.engine.sdpa_build_probe_share: expected a "
            "number"));
}

// bad-probe-trace.yaml: the third pair's time (1.0 s) is before the second's (1.5 s): reported at
// the list (line 8, column 23) with the pair's index. bad-probe-trace-both.yaml: host_probe and a
// trace together (one of them would be ignored), and an odd count: both reported at once.
TEST_CASE("host_probe_trace must be time-ordered (time probe) pairs", "[config-errors][serving]") {
  auto errs = errors_of([] { load_serve_study(data("bad-probe-trace.yaml")); });
  REQUIRE(errs.size() == 1);
  CHECK(has(errs,
            "bad-probe-trace.yaml:8:23: serve.engine.host_probe_trace: pair 2: expected time >= "
            "0 and not before the pair before it"));
  errs = errors_of([] { load_serve_study(data("bad-probe-trace-both.yaml")); });
  REQUIRE(errs.size() == 2);
  CHECK(has(errs,
            "bad-probe-trace-both.yaml:9:23: serve.engine.host_probe_trace: expected a flat list "
            "of (time, probe) pairs; got 3 numbers"));
  CHECK(has(errs,
            "bad-probe-trace-both.yaml:9:23: serve.engine.host_probe_trace: give host_probe or "
            "host_probe_trace, not both"));
}
