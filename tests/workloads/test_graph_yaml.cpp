// `kind: graph` files (workloads/graph_yaml.hpp): seed 003's Amdahl and overlap examples, repeats
// and host gaps, and the loader's errors. Expected times are derived in the comments.
#include <catch2/catch.hpp>

#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/graph_yaml.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

GraphFile from_text(const std::string& text) {
  return read_graph_yaml(hw::parse_yaml(text, "g.yaml"));
}

std::string errors_of(const std::string& text) {
  try {
    from_text(text);
  } catch (const hw::ConfigException& e) {
    std::string s;
    for (const auto& err : e.errors()) s += err.str() + "\n";
    return s;
  }
  return "no error";
}

}  // namespace

TEST_CASE("graph yaml: seed 003's Amdahl example (5 ms of 100 ms made 3x faster)",
          "[analytic][graph_yaml]") {
  const GraphFile f = load_graph_yaml(hw::config_dir() + "/graphs/amdahl.yaml");
  const GraphRun r = run_graph(f, hw::find_gpu("h200"));
  // 95 ms of other work, then the 5 ms kernel: 100 ms. Launches cost nothing beyond the file's
  // host time, so the arithmetic is exact up to the engine's integer-time rounding (1e-12 s).
  CHECK(r.step_s == Approx(0.100).margin(1e-9));
  REQUIRE(r.what_ifs.size() == 1);
  const auto& w = r.what_ifs[0];
  // The kernel 3x faster: 95 + 5/3 = 96.667 ms, saving 5 - 5/3 = 3.333 ms.
  CHECK(w.step_s == Approx(0.095 + 0.005 / 3).margin(1e-9));
  CHECK(w.baseline_s - w.step_s == Approx(0.005 * 2 / 3).margin(1e-9));
  // Amdahl with f = 5/100 = 0.05, s = 3: 1 / (0.95 + 0.05/3) = 1.03448x, and the simulation
  // agrees because nothing overlaps the kernel.
  CHECK(w.fraction == Approx(0.05).epsilon(1e-9));
  CHECK(w.amdahl_speedup == Approx(1.0 / (0.95 + 0.05 / 3)).epsilon(1e-9));
  CHECK(w.simulated_speedup == Approx(w.amdahl_speedup).epsilon(1e-9));
}

TEST_CASE("graph yaml: seed 003's overlap example (8 ms compute, 6 ms communication)",
          "[analytic][graph_yaml]") {
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  const GraphFile overlapped = load_graph_yaml(hw::config_dir() + "/graphs/overlap.yaml");
  // Communication starts after the first 4 ms of compute, on its own stream:
  // end = max(4 + 4, 4 + 6) = 10 ms.
  CHECK(run_graph(overlapped, gpu).step_s == Approx(0.010).margin(1e-9));
  // Serialized (communication after all of the compute): 8 + 6 = 14 ms.
  const GraphFile serial = from_text(R"(
kind: graph
kernel_gap: 0 us
ops:
  - {name: compute, time: 8 ms, category: gemm}
  - {name: all_reduce, time: 6 ms, category: communication, stream: comm, after: [compute]}
)");
  CHECK(run_graph(serial, gpu).step_s == Approx(0.014).margin(1e-9));
}

TEST_CASE("graph yaml: repeats, host gaps and vocabulary ops", "[analytic][graph_yaml]") {
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  // Three 1 ms kernels, each launched after 0.5 ms of host time: the host issues at 0.5, 1.0 and
  // 1.5 ms; the stream runs them back to back from 0.5 ms: 0.5 + 3 x 1 = 3.5 ms.
  const GraphFile f = from_text(R"(
kind: graph
kernel_gap: 0 us
ops:
  - {name: k, time: 1 ms, repeat: 3, gap: 0.5 ms}
)");
  CHECK(f.graph.size() == 6);  // a host gap before each of the three launches
  CHECK(run_graph(f, gpu).step_s == Approx(0.0035).margin(1e-9));
  // A vocabulary op is timed by the model: the same as `ridge kernel` gives.
  const GraphFile g = from_text(R"(
kind: graph
ops:
  - {name: mm, op: gemm m=4096 n=4096 k=4096 dtype=bf16}
)");
  REQUIRE(g.graph.size() == 1);
  CHECK(g.graph.op(0).category == Category::kGemm);
  CHECK(run_graph(g, gpu).step_s == Approx(op_time(gpu, g.graph.op(0).op)).margin(1e-9));
}

TEST_CASE("graph yaml: errors name the place, all at once", "[config-errors][graph_yaml]") {
  const std::string e = errors_of(R"(kind: graph
ops:
  - {name: load, host: 1 ms}
  - {name: step, time: 2 ms, after: [lod]}
  - {name: other, time: 2 ms, op: gemm m=1 n=1 k=1}
  - {name: bad, op: gemm m=0 n=1 k=1}
  - {name: typo, time: 1 ms, repeats: 2}
)");
  CHECK_THAT(e, Catch::Contains("g.yaml:4:"));
  CHECK_THAT(e, Catch::Contains("unknown op 'lod'"));
  CHECK_THAT(e, Catch::Contains("did you mean 'load'"));
  CHECK_THAT(e, Catch::Contains("ops[2]: expected exactly one of op, time, host"));
  CHECK_THAT(e, Catch::Contains("ops[3].op"));
  CHECK_THAT(e, Catch::Contains("ops[4].repeats"));
  CHECK_THAT(errors_of("kind: study\nops: []\n"), Catch::Contains("expected 'graph'"));
}
