// `ridge import kineto` and the replay of imported runs (workloads/import_kineto.hpp,
// workloads/imported_run.hpp), on real PyTorch profiler traces recorded on an H200
// (tests/workloads/data/kineto/, made by validate/e2e/kineto_traces.py) and on small synthetic
// traces written here.
#include <fmt/format.h>
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "hw/gpu_loader.hpp"
#include "tests/cli/harness.hpp"
#include "workloads/import_kineto.hpp"
#include "workloads/import_timeline.hpp"
#include "workloads/imported_run.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

std::string data(const std::string& f) {
  return std::string(RIDGE_WORKLOADS_TEST_DATA) + "/kineto/" + f;
}

// A minimal Kineto trace: one aten::mm on the CPU, its cudaLaunchKernel and its nvjet kernel, then
// an unknown kernel and an NCCL kernel.
std::string small_trace() {
  return R"({"schemaVersion":1,"deviceProperties":[{"id":0,"name":"NVIDIA H200"}],
"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":100.0,"dur":20.0,
 "args":{"External id":7,"Input Dims":[[4096,1024],[1024,2048]],
         "Input type":["c10::BFloat16","c10::BFloat16"]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":105.0,"dur":5.0,
 "args":{"External id":7,"correlation":11}},
{"ph":"X","cat":"kernel","name":"nvjet_sm90_tst_128x256_64x4_2x1_v_bz_NNN","pid":0,"tid":7,
 "ts":112.0,"dur":30.5,"args":{"External id":7,"stream":7,"correlation":11,
 "registers per thread":168,"shared memory":200000,"grid":[132,1,1],"block":[384,1,1]}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":125.0,"dur":4.0,
 "args":{"correlation":12}},
{"ph":"X","cat":"kernel","name":"my_fused_thing_kernel","pid":0,"tid":7,"ts":143.0,"dur":10.0,
 "args":{"stream":7,"correlation":12,"registers per thread":40,"shared memory":0,
 "grid":[64,2,1],"block":[128,1,1]}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_bf16_RING_LL","pid":0,"tid":9,
 "ts":160.0,"dur":40.0,"args":{"stream":9,"correlation":13,"grid":[2,1,1],"block":[512,1,1],
 "Collective name":"allreduce","In msg nelems":1048576,"Out msg nelems":1048576,
 "Group size":8,"dtype":"BFloat16"}},
{"ph":"s","id":11,"pid":1,"tid":1,"ts":105.0,"cat":"ac2g","name":"ac2g"},
{"ph":"X","cat":"python_function","name":"forward","pid":1,"tid":1,"ts":90.0,"dur":50.0}
]})";
}

}  // namespace

TEST_CASE("import: a GEMM takes m, n, k from its aten op; unknown kernels stay as custom ops",
          "[unit][import]") {
  const ImportedRun r = import_events(parse_kineto(small_trace(), "small"), "small");
  REQUIRE(r.ops.size() == 3);  // every GPU activity, none dropped
  const ImportedOp& g = r.ops[0];
  CHECK(g.cls == "gemm");
  REQUIRE(g.mapped);
  // aten::mm(A [M, K], B [K, N]): M = 4096, K = 1024, N = 2048.
  CHECK(g.op.kind() == "gemm");
  CHECK(g.op.i("m") == 4096);
  CHECK(g.op.i("n") == 2048);
  CHECK(g.op.i("k") == 1024);
  CHECK(g.op.s("dtype") == "bf16");
  CHECK(g.cpu_op == "aten::mm");
  CHECK(g.dur_ns == 30500);
  CHECK(g.registers == 168);

  const ImportedOp& u = r.ops[1];
  CHECK(u.cls == "other");
  CHECK_FALSE(u.mapped);
  CHECK(u.op.kind() == "custom");
  CHECK(u.op.i("grid") == 128);  // 64 x 2 x 1 blocks
  CHECK(u.op.i("block") == 128);
  CHECK(u.op.i("registers") == 40);

  // No launch call in the trace for the NCCL kernel: issued at its GPU start, after the others.
  const ImportedOp& c = r.ops[2];
  CHECK(c.cls == "communication");
  CHECK_FALSE(c.mapped);
  CHECK(c.detail.at("collective") == "allreduce");
  CHECK(c.detail.at("group_size") == 8);

  // Origin: the first launch call (105 us). The GPU span: 112 us to 200 us.
  CHECK(g.issue_ns == 0);
  CHECK(g.start_ns == 7000);
  CHECK(r.span_ns == 88000);
  // Host gap of the second kernel: launch calls at 105 and 125 us.
  CHECK(u.host_gap_ns == 20000);
  // The python_function event is counted, not silently dropped.
  CHECK(r.skipped.at("python_function") == 1);
  const auto cls = r.classes();
  CHECK(cls.at("gemm").mapped == 1);
  CHECK(cls.at("other").ops - cls.at("other").mapped == 1);
}

TEST_CASE("import: a real training-step trace (H200, PyTorch 2.11) replays within 2% of its span",
          "[validation][import]") {
  const ImportedRun r = import_kineto(data("train_gpt_l2.json.gz"));
  // Counted from the trace with Python's json module: 145 kernels + 13 memsets + 1 memcpy; GPU
  // span = last end - first start = 10952.295 us.
  REQUIRE(r.ops.size() == 159);
  CHECK(r.span_ns == Approx(10952295).margin(2));
  CHECK(r.device == "NVIDIA H200");
  CHECK(r.streams.size() == 2);  // the compute stream and the side stream of the script
  // The LM head: aten::mm [[2048, 768], [768, 8192]] (B*T = 4*512 tokens, d = 768, vocab 8192).
  bool head = false;
  for (const auto& o : r.ops)
    if (o.mapped && o.op.kind() == "gemm" && o.op.i("n") == 8192 && o.op.i("k") == 768)
      head = o.op.i("m") == 2048;
  CHECK(head);
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  const ImportedReport rep = run_imported(r, gpu, nullptr, TimingMode::kFast);
  // The issue's budget: measured replay within 2% of the trace's GPU span.
  CHECK(rep.replay_span_s == Approx(rep.trace_span_s).epsilon(0.02));
}

TEST_CASE("import: CUDA graph replays map their kernels from the eager ones",
          "[validation][import]") {
  const ImportedRun r = import_kineto(data("infer_graph.json.gz"));
  long long graph = 0, graph_mapped = 0;
  for (const auto& o : r.ops)
    if (o.graph) ++graph, graph_mapped += o.mapped ? 1 : 0;
  // Two replays of a 50-kernel graph (the script replays it twice, then runs the model eagerly).
  CHECK(graph == 100);
  CHECK(graph_mapped > 90);
  const ImportedReport rep = run_imported(r, hw::find_gpu("h200"), nullptr, TimingMode::kFast);
  CHECK(rep.replay_span_s == Approx(rep.trace_span_s).epsilon(0.02));
}

TEST_CASE("import: the graph file reads back to the same replay", "[property][import]") {
  const ImportedRun r = import_kineto(data("mlp_gemms.json.gz"));
  const nlohmann::json j = imported_json(r);
  const ImportedRun back = imported_from_json(nlohmann::json::parse(j.dump()), "g.json");
  REQUIRE(back.ops.size() == r.ops.size());
  CHECK(imported_json(back).dump() == j.dump());  // byte for byte
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  const auto a = run_imported(r, gpu, nullptr, TimingMode::kFast);
  const auto b = run_imported(back, gpu, nullptr, TimingMode::kFast);
  CHECK(a.replay_span_s == b.replay_span_s);
  CHECK(a.predicted_span_s == b.predicted_span_s);
}

TEST_CASE("import: retargeting to a faster GPU never slows a mapped class", "[property][import]") {
  const ImportedRun r = import_kineto(data("mlp_gemms.json.gz"));
  const hw::GpuSpec h200 = hw::find_gpu("h200"), b200 = hw::find_gpu("b200");
  const auto rep = run_imported(r, h200, &b200, TimingMode::kFast);
  // B200 has more HBM bandwidth and tensor FLOP/s than the H200 (configs/hw): the GEMM-bound
  // trace must speed up end to end, and no class may slow down.
  CHECK(rep.target_span_s < rep.predicted_span_s);
  for (const auto& c : rep.classes) CHECK(c.target_s <= c.base_s * (1 + 1e-9));
}

TEST_CASE("import: bad traces name the byte offset or the event", "[config-errors][import]") {
  auto message = [](const std::string& text) {
    try {
      parse_kineto(text, "t.json");
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string full = small_trace();
  SECTION("truncated") {
    const std::string m = message(full.substr(0, 400));
    CHECK_THAT(m, Catch::Contains("t.json: byte"));
    CHECK_THAT(m, Catch::Contains("ends early"));
  }
  SECTION("not JSON") {
    const std::string m = message("PK\x03\x04 this is a zip file");
    CHECK_THAT(m, Catch::Contains("t.json: byte 0"));
  }
  SECTION("no traceEvents") {
    CHECK_THAT(message(R"({"schemaVersion":1})"), Catch::Contains("no 'traceEvents'"));
  }
  SECTION("a kernel without dur") {
    const std::string t =
        R"({"traceEvents":[{"ph":"M","name":"x"},{"ph":"X","cat":"kernel","name":"k","ts":1.0,)"
        R"("args":{"stream":7,"correlation":1}}]})";
    const std::string m = message(t);
    // The second event starts at byte 38 (0-based): `{"traceEvents":[` is 16 bytes, the first
    // event 21 more, then a comma.
    CHECK(t.substr(38, 6) == "{\"ph\":");
    CHECK_THAT(m, Catch::Contains("byte 38"));
    CHECK_THAT(m, Catch::Contains("traceEvents[1]"));
    CHECK_THAT(m, Catch::Contains("missing 'dur'"));
  }
  SECTION("a kernel without a correlation id") {
    const std::string m = message(
        R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1.0,"dur":2.0,"args":{"stream":7}}]})");
    CHECK_THAT(m, Catch::Contains("traceEvents[0]"));
    CHECK_THAT(m, Catch::Contains("args.correlation"));
  }
  SECTION("an unknown event kind") {
    const std::string m = message(R"({"traceEvents":[{"ph":"Q","name":"k"}]})");
    CHECK_THAT(m, Catch::Contains("traceEvents[0]"));
    CHECK_THAT(m, Catch::Contains("unknown event kind ph='Q'"));
  }
  SECTION("an event that is not an object") {
    CHECK_THAT(message(R"({"traceEvents":[3]})"), Catch::Contains("expected an object"));
  }
  SECTION("kernels 1.6e18 ns apart") {
    // Each time is inside the reader's bound (|ts| <= 1e15 us), but the second kernel starts
    // 1.6e15 us = 1.6e18 ns after the first, past 2^60 = 1.15e18 ns: its graph file could not be
    // read back, so the import refuses it and names the event (the fuzzer's find, CI 2026-12-02).
    const std::string t =
        R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":-8e14,"dur":1.0,)"
        R"("args":{"stream":7,"correlation":1}},{"ph":"X","cat":"kernel","name":"k","ts":8e14,)"
        R"("dur":1.0,"args":{"stream":7,"correlation":2}}]})";
    CHECK_THROWS_WITH(import_events(parse_kineto(t, "t.json"), "t.json"),
                      Catch::Contains("t.json: event 1") && Catch::Contains("2^60 ns"));
  }
}

TEST_CASE("import: an e2e timeline whose times spread past 2^60 ns is refused",
          "[config-errors][import]") {
  // Two rows of [name, gpu_ts_us, gpu_dur_us, launch_ts_us, launch_dur_us, op, grid, block]: each
  // inside the row bound (1e15 us), 1.6e18 ns apart; within 1e18 ns of each other they import.
  auto timeline = [](double ts0, double ts1) {
    return fmt::format(
        R"({{"schema":"ridge.e2e_timeline/1","full":{{"names":["k"],"kernels":[)"
        R"([0,{},1.0,{},1.0,"",[1,1,1],[1,1,1]],[0,{},1.0,{},1.0,"",[1,1,1],[1,1,1]]]}}}})",
        ts0, ts0, ts1, ts1);
  };
  CHECK_THROWS_WITH(parse_e2e_timeline(timeline(-8e14, 8e14), "t.json", "full"),
                    Catch::Contains("t.json:full: event 1") && Catch::Contains("2^60 ns"));
  const ImportedRun r = parse_e2e_timeline(timeline(-5e14, 5e14), "t.json", "full");
  CHECK(r.span_ns == 1'000'000'000'000'001'000LL);  // 1e15 us apart, plus the second kernel's 1 us
  // What the import accepts, the graph-file reader reads back.
  CHECK(imported_from_json(imported_json(r), "g.json").span_ns == r.span_ns);
  // A grid of 1e25 (a float past int64: undefined behaviour as nlohmann converts it) is an error
  // in place, as is a name index with a fraction (the fuzzer's second find, 2026-12-02).
  const std::string big = timeline(0, 1);
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = big;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  CHECK_THROWS_WITH(
      parse_e2e_timeline(with("[1,1,1]", "[1e25,1,1]"), "t.json", "full"),
      Catch::Contains("t.json: full.kernels[0]:") && Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(parse_e2e_timeline(with("[0,", "[0.5,"), "t.json", "full"),
                    Catch::Contains("expected an integer"));
  // The graph file: a start time of 1e25 ns, and one with a fraction.
  nlohmann::json g = imported_json(r);
  g["ops"][0]["start_ns"] = 1e25;
  CHECK_THROWS_WITH(imported_from_json(g, "g.json"),
                    Catch::Contains("g.json: ops[0]") && Catch::Contains("expected an integer"));
  g["ops"][0]["start_ns"] = 2.5;
  CHECK_THROWS_WITH(imported_from_json(g, "g.json"), Catch::Contains("expected an integer"));
}

TEST_CASE("import: a damaged gzip file is an error, not a short trace", "[config-errors][import]") {
  CHECK_THROWS_AS(read_kineto(data("meta.json")), TraceError);  // JSON, but no traceEvents
  CHECK_THROWS_WITH(read_kineto(data("truncated.json.gz")), Catch::Contains("gzip"));
}

namespace {
using ridge::test::Run;
using ridge::test::run_ridge;
}  // namespace

TEST_CASE("ridge import kineto: a bad trace exits 2 and writes nothing",
          "[config-errors][import]") {
  const std::string out =
      (std::filesystem::temp_directory_path() / "ridge_test_import_out.json").string();
  std::filesystem::remove(out);
  const Run bad = run_ridge("import kineto " + data("truncated.json.gz") + " --out " + out);
  CHECK(bad.status == 2);
  CHECK_THAT(bad.output, Catch::Contains("gzip stream ends early"));
  CHECK_FALSE(std::filesystem::exists(out));
  const Run good = run_ridge("import kineto " + data("mlp_gemms.json.gz") + " --out " + out);
  CHECK(good.status == 0);
  // 22 GPU activities: 17 kernels, 4 memsets, 1 memcpy (counted with Python's json module).
  CHECK_THAT(good.output, Catch::Contains("| all | 22 |"));
  CHECK(std::filesystem::exists(out));
  const Run run = run_ridge("run " + out + " --gpu b200");
  CHECK(run.status == 0);
  CHECK_THAT(run.output, Catch::Contains("Retargeted to B200"));
  std::filesystem::remove(out);
}

TEST_CASE("import: a cuDNN convolution maps to conv2d from aten::cudnn_convolution",
          "[unit][import]") {
  const std::string t = R"({"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::cudnn_convolution","pid":1,"tid":1,"ts":10.0,"dur":30.0,
 "args":{"External id":3,"Input Dims":[[2,128,64,64],[256,128,3,3],[],[],[],[],[],[],[]],
 "Input type":["c10::BFloat16","c10::BFloat16","ScalarList","ScalarList","ScalarList","Scalar",
               "Scalar","Scalar","Scalar"],
 "Concrete Inputs":["","","[1, 1]","[2, 2]","[1, 1]","1","False","False","True"]}},
{"ph":"X","cat":"cuda_driver","name":"cuLaunchKernel","pid":1,"tid":1,"ts":20.0,"dur":5.0,
 "args":{"External id":3,"correlation":5}},
{"ph":"X","cat":"kernel","pid":0,"tid":7,"ts":30.0,"dur":12.0,
 "name":"sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64",
 "args":{"External id":3,"stream":7,"correlation":5,"grid":[64,1,1],"block":[128,1,1]}}]})";
  const ImportedRun r = import_events(parse_kineto(t, "conv"), "conv");
  REQUIRE(r.ops.size() == 1);
  CHECK(r.ops[0].cls == "conv");
  REQUIRE(r.ops[0].mapped);
  const auto& op = r.ops[0].op;
  // input [N=2, C=128, H=64, W=64], weight [K=256, C=128, R=3, S=3], padding [1, 1], stride [2, 2]
  CHECK(op.kind() == "conv2d");
  CHECK(op.i("batch") == 2);
  CHECK(op.i("c_in") == 128);
  CHECK(op.i("h") == 64);
  CHECK(op.i("c_out") == 256);
  CHECK(op.i("r") == 3);
  CHECK(op.i("stride") == 2);
  CHECK(op.i("pad") == 1);
}

TEST_CASE("import: a GPU-bound training step (H200) replays within 2%, predicts within 10%",
          "[validation][import]") {
  const ImportedRun r = import_kineto(data("train_gpt_big.json.gz"));
  REQUIRE(r.ops.size() == 352);  // 283 kernels + 69 memsets, counted with Python's json module
  const auto rep = run_imported(
      r, hw::find_gpu(std::string(RIDGE_SOURCE_DIR) + "/configs/hw/h200-sxm-141gb.calibrated.yaml"),
      nullptr, TimingMode::kFast);
  CHECK(rep.replay_span_s == Approx(rep.trace_span_s).epsilon(0.02));
  // GPU-bound (kernels sum to 52.4 of the 53.7 ms span), so the prediction tests the kernel
  // model: within the end-to-end budget of validate/e2e (10%); measured +1.0% on 2026-12-01.
  CHECK(rep.predicted_span_s == Approx(rep.trace_span_s).epsilon(0.10));
}

TEST_CASE("import: a validate/e2e timeline (no shapes) replays within 2% of its span",
          "[validation][import]") {
  // validate/data/h200/e2e_run3/timelines.tar.gz: e2e_diffusion_stage_vae_decode.json.gz, the
  // case with the largest replay error of the 120 committed timelines (0.83%, docs/import.md).
  for (const char* part : {"full", "light"}) {
    const ImportedRun r = import_e2e_timeline(data("e2e_timeline_vae_decode.json.gz"), part);
    CHECK(r.ops.size() == 67);  // rows of the file: 64 kernels + 3 memsets (Python json module)
    for (const auto& o : r.ops) CHECK_FALSE(o.mapped);  // no shapes in this format
    const auto rep = run_imported(r, hw::find_gpu("h200"), nullptr, TimingMode::kFast);
    CHECK(rep.replay_span_s == Approx(rep.trace_span_s).epsilon(0.02));
  }
}

TEST_CASE("import: what-ifs re-simulate the predicted run; one naming nothing is an error",
          "[property][import]") {
  // A GPU-bound trace: making its GEMMs twice as fast shortens the predicted run, never beyond
  // Amdahl's bound for the GEMMs' share of the critical path; the trace has no collective, so
  // communication*2 would be a meaningless 1.00x and is refused.
  const ImportedRun r = import_kineto(data("train_gpt_big.json.gz"));
  const hw::GpuSpec gpu = hw::find_gpu("h200");
  const ImportedReport rep = run_imported(r, gpu, nullptr, TimingMode::kFast, {"gemm*2"});
  REQUIRE(rep.what_ifs.size() == 1);
  const auto& w = rep.what_ifs[0];
  CHECK(w.step_s < w.baseline_s);
  CHECK(w.simulated_speedup > 1.0);
  CHECK(w.simulated_speedup <= 1.0 / (1.0 - w.fraction + w.fraction / 2) + 1e-9);
  CHECK_THROWS_AS(run_imported(r, gpu, nullptr, TimingMode::kFast, {"communication*2"}),
                  std::invalid_argument);
}
