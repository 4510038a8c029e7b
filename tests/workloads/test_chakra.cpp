// Chakra ET import and export (chakra/chakra_et.hpp): a small ET built here with the generated
// classes, a round trip of a real imported graph, and bad files (error at a byte offset, exit 2,
// nothing written).
#include <fmt/format.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "chakra/chakra_et.hpp"
#include "et_def.pb.h"
#include "hw/gpu_loader.hpp"
#include "tests/cli/harness.hpp"

using namespace ridge;
namespace pb = ChakraProtoMsg;

namespace {

void frame(std::string& out, const google::protobuf::Message& m) {
  std::string body;
  m.SerializeToString(&body);
  for (uint64_t v = body.size();; v >>= 7) {  // varint length prefix, as Chakra's protoio writes
    if (v < 0x80) {
      out += static_cast<char>(v);
      break;
    }
    out += static_cast<char>((v & 0x7f) | 0x80);
  }
  out += body;
}

void set_int(pb::Node& n, const char* k, int64_t v) {
  auto* a = n.add_attr();
  a->set_name(k);
  a->set_int64_val(v);
}

pb::Node node(uint64_t id, const char* name, int type, uint64_t start_us, uint64_t dur_us) {
  pb::Node n;
  n.set_id(id);
  n.set_name(name);
  n.set_type(static_cast<pb::NodeType>(type));
  n.set_start_time_micros(start_us);
  n.set_duration_micros(dur_us);
  return n;
}

// Five nodes, in the file in the order 11, 10, 12, 13, 14:
//   10 COMP "mm"       m=128 n=256 k=64 dtype bf16, start 100 us, 50 us, no deps
//   11 COLL "ag"       comm_type 2 (ALL_GATHER), comm_size 1 MiB, 150 us + 30 us, data dep 10
//   12 COMP "relu"     num_ops 1e6, tensor_size 4e6, 150 us + 7 us, ctrl dep 10
//   13 MEM_LOAD "load" tensor_size 4096, 157 us + 2 us, data dep 12
//   14 type 99 "mystery" 180 us + 5 us, data dep 13, ctrl dep 11
std::string small_et() {
  std::string b;
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  frame(b, meta);
  pb::Node ag = node(11, "ag", pb::COMM_COLL_NODE, 150, 30);
  set_int(ag, "comm_type", pb::ALL_GATHER);
  set_int(ag, "comm_size", 1 << 20);
  ag.add_data_deps(10);
  frame(b, ag);
  pb::Node mm = node(10, "mm", pb::COMP_NODE, 100, 50);
  set_int(mm, "m", 128);
  set_int(mm, "n", 256);
  set_int(mm, "k", 64);
  auto* d = mm.add_attr();
  d->set_name("dtype");
  d->set_string_val("bf16");
  frame(b, mm);
  pb::Node relu = node(12, "relu", pb::COMP_NODE, 150, 7);
  set_int(relu, "num_ops", 1000000);
  set_int(relu, "tensor_size", 4000000);
  relu.add_ctrl_deps(10);
  frame(b, relu);
  pb::Node load = node(13, "load", pb::MEM_LOAD_NODE, 157, 2);
  set_int(load, "tensor_size", 4096);
  load.add_data_deps(12);
  frame(b, load);
  pb::Node odd = node(14, "mystery", 99, 180, 5);
  odd.add_data_deps(13);
  odd.add_ctrl_deps(11);
  frame(b, odd);
  return b;
}

using ridge::test::Run;
using ridge::test::run_ridge;

std::string tmp(const char* name) {
  return (std::filesystem::temp_directory_path() / name).string();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string error_of(const std::string& bytes) {
  try {
    chakra::import_chakra_bytes(bytes, "t.et");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("chakra: a hand-built ET imports to the expected graph", "[unit][chakra]") {
  const chakra::ChakraImport c = chakra::import_chakra_bytes(small_et(), "small.et");
  const auto& r = c.run;
  CHECK(c.version == "0.0.4");
  CHECK(c.unknown == 1);  // node 14, type 99
  CHECK(c.node_types.at("COMP_NODE") == 2);
  REQUIRE(r.ops.size() == 5);
  // Dependency order, file order where free: 10 (the only node without deps, file position 1),
  // then its users 11 (position 0) and 12 (position 2), then 13, then 14.
  std::vector<std::string> names;
  for (const auto& o : r.ops) names.push_back(o.name);
  CHECK(names == std::vector<std::string>{"mm", "ag", "relu", "load", "mystery"});
  // Streams: compute 0, communication 1, memory 2, in first-use order.
  CHECK(r.streams == std::vector<int64_t>{0, 1, 2});
  const auto& mm = r.ops[0];
  CHECK(mm.cls == "gemm");
  CHECK(mm.mapped);
  CHECK(mm.op.kind() == "gemm");
  CHECK(mm.op.params()["m"] == 128);
  CHECK(mm.op.params()["k"] == 64);
  CHECK(mm.dur_ns == 50000);  // 50 us
  CHECK(mm.deps.empty());
  const auto& ag = r.ops[1];
  CHECK(ag.cls == "communication");
  CHECK(ag.stream == 1);
  CHECK(ag.detail["collective"] == "all_gather");
  CHECK(ag.detail["bytes"] == 1048576);
  CHECK(ag.deps == std::vector<int>{0});
  const auto& relu = r.ops[2];
  CHECK(relu.cls == "other");
  CHECK_FALSE(relu.mapped);
  CHECK(relu.op.kind() == "custom");
  CHECK(relu.op.params()["flops_tensor"] == 1e6);
  CHECK(relu.op.params()["bytes_read"] == 4e6);
  // Its ctrl dep on mm is the op just before it on stream 0: stream order says it.
  CHECK(relu.deps.empty());
  const auto& load = r.ops[3];
  CHECK(load.kind == workloads::NodeKind::kCopy);
  CHECK(load.op.kind() == "copy");
  CHECK(load.op.params()["direction"] == "h2d");
  CHECK(load.op.params()["bytes"] == 4096);
  CHECK(load.deps == std::vector<int>{2});
  const auto& odd = r.ops[4];
  CHECK(odd.cls == "other");
  CHECK(odd.stream == 0);
  CHECK(odd.dur_ns == 5000);
  // data dep 13 -> op 3, ctrl dep 11 -> op 1 (another stream, so kept and listed as ctrl).
  CHECK(odd.deps == std::vector<int>{1, 3});
  CHECK(odd.detail["ctrl_deps"] == nlohmann::json::array({1}));
  // First start 100 us, last end 180 + 5 = 185 us: 85 us.
  CHECK(r.span_ns == 85000);
  // Without start times the ET says nothing of the span: 0 (not the longest node's 7 us).
  std::string untimed;
  frame(untimed, pb::GlobalMetadata());
  frame(untimed, node(1, "a", pb::COMP_NODE, 0, 7));
  frame(untimed, node(2, "b", pb::COMP_NODE, 0, 3));
  CHECK(chakra::import_chakra_bytes(untimed, "u.et").run.span_ns == 0);
}

TEST_CASE("chakra: graph -> ET -> graph keeps ops, durations, kinds and dependencies",
          "[unit][chakra]") {
  // A real imported graph (22 ops, kernels, memsets and a memcpy) and the hand-built one (cross-
  // stream and ctrl deps, a collective).
  const workloads::ImportedRun kin = workloads::import_kineto(
      std::string(RIDGE_WORKLOADS_TEST_DATA) + "/kineto/train_gpt_l2.json.gz");
  const workloads::ImportedRun small = chakra::import_chakra_bytes(small_et(), "s.et").run;
  for (const auto* g : {&kin, &small}) {
    const std::string et = chakra::export_chakra(*g);
    workloads::ImportedRun back = chakra::import_chakra_bytes(et, "back.et").run;
    REQUIRE(back.ops.size() == g->ops.size());
    CHECK(back.span_ns == g->span_ns);
    CHECK(back.device == g->device);
    CHECK(back.streams == g->streams);
    for (std::size_t i = 0; i < g->ops.size(); ++i) {
      INFO("op " << i << " " << g->ops[i].name);
      const auto &a = g->ops[i], &b = back.ops[i];
      CHECK(b.name == a.name);
      CHECK(b.cls == a.cls);
      CHECK(b.kind == a.kind);
      CHECK(b.mapped == a.mapped);
      CHECK(b.op.kind() == a.op.kind());
      CHECK(b.op.params() == a.op.params());
      CHECK(b.stream == a.stream);
      CHECK(b.dur_ns == a.dur_ns);
      CHECK(b.deps == a.deps);
      CHECK(b.start_ns == a.start_ns);
      CHECK(b.issue_ns == a.issue_ns);
      CHECK(b.host_gap_ns == a.host_gap_ns);
    }
    // Deterministic: the same graph (under the same source name, which the metadata records)
    // gives the same bytes.
    back.source = g->source;
    CHECK(chakra::export_chakra(back) == et);
  }
  // The exported ET as a foreign reader sees it (ridge_* attrs ignored): node types by class.
  const std::string et = chakra::export_chakra(small);
  std::size_t pos = 0;
  std::vector<int> types;
  while (pos < et.size()) {
    uint64_t len = 0;
    for (int s = 0;; s += 7) {
      const auto c = static_cast<unsigned char>(et[pos++]);
      len |= static_cast<uint64_t>(c & 0x7f) << s;
      if (!(c & 0x80)) break;
    }
    pb::Node n;
    if (!types.empty()) n.ParseFromArray(et.data() + pos, static_cast<int>(len));
    types.push_back(n.type());
    pos += len;
  }
  // metadata (parsed as nothing), then mm, ag, relu, load, mystery (exported as a COMP_NODE).
  CHECK(types == std::vector<int>{0, pb::COMP_NODE, pb::COMM_COLL_NODE, pb::COMP_NODE,
                                  pb::MEM_LOAD_NODE, pb::COMP_NODE});
}

TEST_CASE("chakra: bad files name the byte offset", "[config-errors][chakra]") {
  const std::string good = small_et();
  // The last message cut short by one byte: its length prefix runs past the end.
  std::string cut = good.substr(0, good.size() - 1);
  std::size_t last = 0;
  for (std::size_t pos = 0; pos < good.size();) {  // offset of the last message's prefix
    last = pos;
    pos += 1 + static_cast<unsigned char>(good[pos]);  // all messages here are < 128 bytes
  }
  CHECK_THAT(error_of(cut), Catch::Contains(fmt::format("t.et: byte {}: length prefix", last)) &&
                                Catch::Contains("runs past the end"));
  // A length prefix of 1000 with 3 bytes after it.
  CHECK_THAT(error_of(std::string("\xe8\x07"
                                  "abc",
                                  5)),
             Catch::Contains("byte 0: length prefix 1000 runs past the end"));
  // The file ends inside a varint (continuation bit set on the last byte).
  CHECK_THAT(error_of(good + "\x80"),
             Catch::Contains(fmt::format("byte {}: expected a varint length prefix", good.size())));
  // A Node where the GlobalMetadata belongs: id (field 1, varint) is not GlobalMetadata's
  // version (field 1, string).
  std::string no_meta;
  frame(no_meta, node(1, "x", pb::COMP_NODE, 0, 1));
  CHECK_THAT(error_of(no_meta),
             Catch::Contains("byte 0: expected a Chakra GlobalMetadata message"));
  // A second GlobalMetadata where a Node belongs.
  std::string two_meta = good.substr(0, 1 + static_cast<unsigned char>(good[0]));
  const std::size_t second = two_meta.size();
  pb::GlobalMetadata m;
  m.set_version("0.0.4");
  frame(two_meta, m);
  CHECK_THAT(error_of(two_meta),
             Catch::Contains(fmt::format("byte {}: expected a Chakra Node message", second)));
  // A dependency on a node the file does not hold.
  std::string dangling = two_meta.substr(0, second);
  pb::Node n = node(5, "x", pb::COMP_NODE, 0, 1);
  n.add_data_deps(6);
  frame(dangling, n);
  CHECK_THAT(error_of(dangling), Catch::Contains("node 5 depends on node id 6"));
}

TEST_CASE(
    "ridge import/export chakra: exit 2 and nothing written on a bad file; a good one "
    "goes both ways",
    "[config-errors][chakra]") {
  const std::string et = tmp("ridge_test_chakra.et"), graph = tmp("ridge_test_chakra.json"),
                    back = tmp("ridge_test_chakra_back.et");
  for (const auto& f : {et, graph, back}) std::filesystem::remove(f);
  const std::string good = small_et();
  write(et, good.substr(0, good.size() - 3));
  const Run bad = run_ridge("import chakra " + et + " --out " + graph);
  CHECK(bad.status == 2);
  CHECK_THAT(bad.output, Catch::Contains("runs past the end"));
  CHECK_FALSE(std::filesystem::exists(graph));
  write(et, good);
  const Run imp = run_ridge("import chakra " + et + " --out " + graph);
  CHECK(imp.status == 0);
  CHECK_THAT(imp.output, Catch::Contains("1 node(s) of no known type"));
  const Run exp = run_ridge("export chakra " + graph + " --out " + back);
  CHECK(exp.status == 0);
  CHECK_THAT(exp.output, Catch::Contains("5 nodes"));
  CHECK(std::filesystem::exists(back));
  const Run run = run_ridge("run " + graph);
  CHECK(run.status == 0);
  for (const auto& f : {et, graph, back}) std::filesystem::remove(f);
}

TEST_CASE("chakra: a kind: graph YAML exports at the times ridge run gives it", "[unit][chakra]") {
  // configs/graphs/overlap.yaml: compute 4 ms + 4 ms on the default stream, a 6 ms all-reduce on
  // `comm` after the first half. Its own derivation: the step ends at max(4 + 4, 4 + 6) = 10 ms.
  const std::string path =
      std::string(RIDGE_WORKLOADS_TEST_DATA) + "/../../../configs/graphs/overlap.yaml";
  const workloads::GraphFile f = workloads::load_graph_yaml(path);
  const workloads::ImportedRun r =
      chakra::imported_from_graph_yaml(f, hw::find_gpu(f.gpu), "overlap.yaml");
  const workloads::ImportedRun back =
      chakra::import_chakra_bytes(chakra::export_chakra(r), "overlap.et").run;
  REQUIRE(back.ops.size() == 3);
  CHECK(back.ops[0].dur_ns == 4'000'000);
  CHECK(back.ops[1].dur_ns == 4'000'000);
  CHECK(back.ops[2].dur_ns == 6'000'000);
  CHECK(back.ops[2].cls == "communication");
  CHECK(back.ops[2].start_ns == 4'000'000);
  CHECK(back.ops[2].deps == std::vector<int>{0});
  CHECK(back.ops[1].deps.empty());  // stream order, not a dependency
  CHECK(back.span_ns == 10'000'000);
}
