// Chakra ET import and export (chakra_et.hpp).
#include "chakra/chakra_et.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "et_def.pb.h"
#include "hw/config.hpp"

namespace ridge::chakra {
namespace {

namespace pb = ChakraProtoMsg;
using workloads::ImportedOp;
using workloads::ImportedRun;
using workloads::NodeKind;

constexpr int64_t kComputeStream = 0, kCommStream = 1, kMemStream = 2;

// Chakra's CollectiveCommType values, by name as Ridge writes them in detail.collective.
constexpr std::pair<pb::CollectiveCommType, const char*> kCollectives[] = {
    {pb::ALL_REDUCE, "all_reduce"},
    {pb::REDUCE, "reduce"},
    {pb::ALL_GATHER, "all_gather"},
    {pb::GATHER, "gather"},
    {pb::SCATTER, "scatter"},
    {pb::BROADCAST, "broadcast"},
    {pb::ALL_TO_ALL, "all_to_all"},
    {pb::REDUCE_SCATTER, "reduce_scatter"},
    {pb::REDUCE_SCATTER_BLOCK, "reduce_scatter_block"},
    {pb::BARRIER, "barrier"}};

std::string collective_name(int64_t v) {
  for (const auto& [t, n] : kCollectives)
    if (t == v) return n;
  return fmt::format("comm_type_{}", v);
}

// A collective name from either importer ("allreduce", "all_reduce", "AllReduce") as Chakra's
// enum; -1 when none matches.
int64_t collective_type(std::string name) {
  std::string key;
  for (char c : name)
    if (c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (key == "alltoallv") key = "alltoall";
  for (const auto& [t, n] : kCollectives) {
    std::string k;
    for (const char* p = n; *p; ++p)
      if (*p != '_') k += *p;
    if (k == key) return t;
  }
  return -1;
}

// Bytes per element of the NCCL dtypes the Kineto reader records (for comm_size).
int64_t dtype_bytes(const std::string& d) {
  static const std::pair<const char*, int64_t> kSizes[] = {
      {"Float", 4}, {"float", 4}, {"BFloat16", 2}, {"Half", 2}, {"Double", 8}, {"Int", 4},
      {"Long", 8},  {"Char", 1},  {"Byte", 1},     {"Bool", 1}, {"Float8", 1}};
  for (const auto& [n, s] : kSizes)
    if (d.rfind(n, 0) == 0) return s;
  return 0;
}

// An attribute's value as a number when it holds a scalar number.
std::optional<double> attr_number(const pb::AttributeProto& a) {
  switch (a.value_case()) {
    case pb::AttributeProto::kDoubleVal:
      return a.double_val();
    case pb::AttributeProto::kFloatVal:
      return a.float_val();
    case pb::AttributeProto::kInt32Val:
      return a.int32_val();
    case pb::AttributeProto::kInt64Val:
      return static_cast<double>(a.int64_val());
    case pb::AttributeProto::kUint32Val:
      return a.uint32_val();
    case pb::AttributeProto::kUint64Val:
      return static_cast<double>(a.uint64_val());
    case pb::AttributeProto::kSint32Val:
      return a.sint32_val();
    case pb::AttributeProto::kSint64Val:
      return static_cast<double>(a.sint64_val());
    case pb::AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case pb::AttributeProto::kFixed64Val:
      return static_cast<double>(a.fixed64_val());
    case pb::AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case pb::AttributeProto::kSfixed64Val:
      return static_cast<double>(a.sfixed64_val());
    case pb::AttributeProto::kBoolVal:
      return a.bool_val() ? 1.0 : 0.0;
    default:
      return std::nullopt;
  }
}

struct Attrs {
  std::map<std::string, const pb::AttributeProto*> by_name;
  explicit Attrs(const pb::Node& n) {
    for (const auto& a : n.attr()) by_name.emplace(a.name(), &a);
  }
  std::optional<double> num(const std::string& k) const {
    auto it = by_name.find(k);
    return it == by_name.end() ? std::nullopt : attr_number(*it->second);
  }
  std::optional<std::string> str(const std::string& k) const {
    auto it = by_name.find(k);
    if (it == by_name.end() || it->second->value_case() != pb::AttributeProto::kStringVal)
      return std::nullopt;
    return it->second->string_val();
  }
};

// Reads a varint length prefix at `pos`; nullopt when the bytes end inside it or it runs past
// 32 bits (Chakra writes a varint32).
std::optional<uint64_t> read_varint(const std::string& b, std::size_t& pos) {
  uint64_t v = 0;
  for (int shift = 0; shift < 35; shift += 7) {
    if (pos >= b.size()) return std::nullopt;
    const auto c = static_cast<unsigned char>(b[pos++]);
    v |= static_cast<uint64_t>(c & 0x7f) << shift;
    if (!(c & 0x80)) return v;
  }
  return std::nullopt;
}

void write_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

struct Framed {
  std::size_t offset;  // of the length prefix
  std::string_view body;
};

// A message's fields that its type does not know: another message type was framed here.
std::string unknown_fields(const google::protobuf::Message& m) {
  const auto& u = m.GetReflection()->GetUnknownFields(m);
  std::set<int> nums;
  for (int i = 0; i < u.field_count(); ++i) nums.insert(u.field(i).number());
  std::string s;
  for (int n : nums) s += (s.empty() ? "" : ", ") + std::to_string(n);
  return s;
}

template <class Msg>
void parse_framed(const Framed& f, Msg& m, const char* type, const std::string& label) {
  if (!m.ParseFromArray(f.body.data(), static_cast<int>(f.body.size())))
    throw std::invalid_argument(
        fmt::format("{}: byte {}: expected a Chakra {} message ({} bytes): not valid protobuf",
                    label, f.offset, type, f.body.size()));
  const std::string unk = unknown_fields(m);
  if (!unk.empty())
    throw std::invalid_argument(fmt::format(
        "{}: byte {}: expected a Chakra {} message: it has fields {} that a {} lacks (another "
        "message type, or not a Chakra ET)",
        label, f.offset, type, unk, type));
}

int64_t rounded_micros_to_ns(uint64_t us) {
  constexpr uint64_t kMaxUs = (uint64_t{1} << 60) / 1000;
  return static_cast<int64_t>(std::min(us, kMaxUs)) * 1000;
}

// One node as an op (deps filled later).
ImportedOp op_of_node(const pb::Node& n, const Attrs& a, const std::string& where,
                      ChakraImport& c) {
  ImportedOp o;
  o.name = n.name().empty() ? fmt::format("node {}", n.id()) : n.name();
  o.dur_ns = rounded_micros_to_ns(n.duration_micros());
  if (auto d = a.num("ridge_dur_ns"); d && *d >= 0 && *d < 1e18)
    o.dur_ns = static_cast<int64_t>(*d);  // exact duration of a Ridge export
  o.start_ns = rounded_micros_to_ns(n.start_time_micros());
  o.detail["chakra_id"] = n.id();
  auto custom = [](double flops, double bytes) {
    nlohmann::json p = {{"grid", 1}, {"block", 32}};
    if (flops > 0) p["flops_tensor"] = std::min(flops, 1e30);
    if (bytes > 0) p["bytes_read"] = std::min(bytes, 1e30);
    return models::OpSpec::from_json("custom", p);
  };
  const double num_ops = a.num("num_ops").value_or(0), tensor = a.num("tensor_size").value_or(0);
  const std::string type_name =
      pb::NodeType_IsValid(n.type()) ? pb::NodeType_Name(n.type()) : fmt::format("{}", n.type());
  c.node_types[type_name]++;
  switch (n.type()) {
    case pb::COMP_NODE: {
      o.stream = kComputeStream;
      o.cls = "other";
      o.op = custom(num_ops, tensor);
      const auto m = a.num("m"), nn = a.num("n"), k = a.num("k");
      if (m && nn && k) {
        nlohmann::json p = {
            {"m", std::llround(*m)}, {"n", std::llround(*nn)}, {"k", std::llround(*k)}};
        if (auto b = a.num("batch")) p["batch"] = std::llround(*b);
        if (auto d = a.str("dtype")) p["dtype"] = *d;
        try {
          o.op = models::OpSpec::from_json("gemm", p);
          o.cls = "gemm";
          o.mapped = true;
        } catch (const std::invalid_argument& e) {
          throw std::invalid_argument(fmt::format("{}: GEMM attrs m, n, k: {}", where, e.what()));
        }
      }
      break;
    }
    case pb::COMM_COLL_NODE:
    case pb::COMM_SEND_NODE:
    case pb::COMM_RECV_NODE: {
      o.stream = kCommStream;
      o.cls = "communication";
      const double bytes = a.num("comm_size").value_or(0);
      o.op = custom(0, bytes);
      if (n.type() == pb::COMM_COLL_NODE)
        o.detail["collective"] = collective_name(std::llround(a.num("comm_type").value_or(0)));
      else
        o.detail["collective"] = n.type() == pb::COMM_SEND_NODE ? "send" : "recv";
      if (bytes > 0) o.detail["bytes"] = std::llround(bytes);
      for (const char* k : {"comm_src", "comm_dst", "comm_tag", "involved_dim"})
        if (auto v = a.num(k)) o.detail[k] = *v;
      break;
    }
    case pb::MEM_LOAD_NODE:
    case pb::MEM_STORE_NODE: {
      o.stream = kMemStream;
      o.cls = "copy";
      o.kind = NodeKind::kCopy;
      const char* dir = n.type() == pb::MEM_LOAD_NODE ? "h2d" : "d2h";
      if (tensor >= 1) {
        o.op = models::OpSpec::from_json("copy",
                                         {{"bytes", std::llround(tensor)}, {"direction", dir}});
        o.mapped = true;
        o.detail["bytes"] = std::llround(tensor);
      } else {
        o.op = custom(0, 0);
      }
      break;
    }
    default:
      o.stream = kComputeStream;
      o.cls = "other";
      o.op = custom(num_ops, tensor);
      o.detail["chakra_type"] = type_name;
      c.unknown++;
  }
  // A Ridge export's own record of the op: lossless round trip.
  if (auto s = a.num("ridge_stream")) o.stream = std::llround(*s);
  if (auto cls = a.str("ridge_class")) o.cls = *cls;
  if (auto j = a.str("ridge_op")) {
    const nlohmann::json p = nlohmann::json::parse(*j, nullptr, false);
    if (p.is_discarded() || !p.is_object() || !p.contains("kind") || !p.contains("params"))
      throw std::invalid_argument(where + ": attr ridge_op: expected {\"kind\", \"params\"} JSON");
    try {
      o.op = models::OpSpec::from_json(p["kind"].get<std::string>(), p["params"]);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: attr ridge_op: {}", where, e.what()));
    }
    o.mapped = a.num("ridge_mapped").value_or(0) != 0;
    o.kind = o.op.kind() == "copy" ? NodeKind::kCopy : NodeKind::kKernel;
  }
  if (auto j = a.str("ridge_host")) {  // host side and launch of a Ridge export's op
    const nlohmann::json h = nlohmann::json::parse(*j, nullptr, false);
    if (h.is_discarded() || !h.is_object())
      throw std::invalid_argument(where + ": attr ridge_host: expected a JSON object");
    try {
      o.start_ns = h.value("start_ns", o.start_ns);
      o.issue_ns = h.value("issue_ns", o.issue_ns);
      o.host_gap_ns = h.value("host_gap_ns", o.host_gap_ns);
      o.cpu_op = h.value("cpu_op", o.cpu_op);
      o.launch_api = h.value("launch", o.launch_api);
      o.graph = h.value("graph", o.graph);
      o.grid = h.value("grid", o.grid);
      o.block = h.value("block", o.block);
      o.registers = h.value("registers", o.registers);
      o.shared_bytes = h.value("shared_bytes", o.shared_bytes);
    } catch (const nlohmann::json::exception& e) {
      throw std::invalid_argument(fmt::format("{}: attr ridge_host: {}", where, e.what()));
    }
    constexpr int64_t kMaxNs = int64_t{1} << 60;
    if (o.host_gap_ns < 0 || o.host_gap_ns > kMaxNs || o.issue_ns > kMaxNs || o.start_ns > kMaxNs ||
        o.start_ns < -kMaxNs)
      throw std::invalid_argument(where + ": attr ridge_host: time out of range");
  }
  if (auto j = a.str("ridge_detail")) {
    const nlohmann::json d = nlohmann::json::parse(*j, nullptr, false);
    if (d.is_object())
      for (const auto& [k, v] : d.items()) o.detail[k] = v;
  }
  return o;
}

}  // namespace

ChakraImport import_chakra_bytes(const std::string& b, const std::string& label) {
  // Frame every message first: a truncated file fails before any parsing.
  std::vector<Framed> frames;
  for (std::size_t pos = 0; pos < b.size();) {
    const std::size_t at = pos;
    const auto len = read_varint(b, pos);
    if (!len)
      throw std::invalid_argument(fmt::format(
          "{}: byte {}: expected a varint length prefix; the file ends inside it", label, at));
    if (*len > b.size() - pos)
      throw std::invalid_argument(fmt::format(
          "{}: byte {}: length prefix {} runs past the end of the file ({} bytes left after it): "
          "truncated?",
          label, at, *len, b.size() - pos));
    frames.push_back({at, std::string_view(b).substr(pos, *len)});
    pos += *len;
  }
  if (frames.empty())
    throw std::invalid_argument(
        label + ": byte 0: expected a Chakra GlobalMetadata message; the file is empty");
  ChakraImport c;
  pb::GlobalMetadata meta;
  parse_framed(frames[0], meta, "GlobalMetadata", label);
  c.version = meta.version();
  std::string device;
  std::optional<int64_t> span;  // a Ridge export's own record of the run
  for (const auto& a : meta.attr()) {
    if (a.name() == "ridge_device" && a.value_case() == pb::AttributeProto::kStringVal)
      device = a.string_val();
    if (a.name() == "ridge_span_ns" && a.value_case() == pb::AttributeProto::kInt64Val &&
        a.int64_val() >= 0 && a.int64_val() <= (int64_t{1} << 60))
      span = a.int64_val();
  }

  std::vector<pb::Node> nodes(frames.size() - 1);
  std::unordered_map<uint64_t, std::size_t> index;  // node id -> position in the file
  for (std::size_t i = 1; i < frames.size(); ++i) {
    parse_framed(frames[i], nodes[i - 1], "Node", label);
    if (!index.emplace(nodes[i - 1].id(), i - 1).second)
      throw std::invalid_argument(fmt::format("{}: byte {}: node id {} repeats an earlier node's",
                                              label, frames[i].offset, nodes[i - 1].id()));
  }
  // Dependencies by position; an order that respects them, file order where they allow.
  const std::size_t n = nodes.size();
  std::vector<std::vector<std::size_t>> users(n);
  std::vector<int> pending(n, 0);
  std::vector<std::vector<std::pair<std::size_t, bool>>> deps(n);  // (position, ctrl only)
  for (std::size_t i = 0; i < n; ++i) {
    std::map<std::size_t, bool> d;
    auto add = [&](uint64_t id, bool ctrl) {
      auto it = index.find(id);
      if (it == index.end())
        throw std::invalid_argument(
            fmt::format("{}: byte {}: node {} depends on node id {}, which "
                        "the file does not hold",
                        label, frames[i + 1].offset, nodes[i].id(), id));
      if (it->second == i)
        throw std::invalid_argument(fmt::format("{}: byte {}: node {} depends on itself", label,
                                                frames[i + 1].offset, nodes[i].id()));
      auto [pos, fresh] = d.emplace(it->second, ctrl);
      if (!fresh && !ctrl) pos->second = false;
    };
    for (uint64_t id : nodes[i].data_deps()) add(id, false);
    for (uint64_t id : nodes[i].ctrl_deps()) add(id, true);
    for (const auto& [p, ctrl] : d) {
      deps[i].push_back({p, ctrl});
      users[p].push_back(i);
      pending[i]++;
    }
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<std::size_t> order;
  std::vector<int> op_of(n, -1);
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    op_of[i] = static_cast<int>(order.size());
    order.push_back(i);
    for (std::size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) {
    for (std::size_t i = 0; i < n; ++i)
      if (op_of[i] < 0)
        throw std::invalid_argument(
            fmt::format("{}: byte {}: node {} is on a dependency cycle (or waits on one)", label,
                        frames[i + 1].offset, nodes[i].id()));
  }

  ImportedRun& r = c.run;
  r.source = label;
  r.sha256 = hw::sha256_hex(b);
  r.device = device;
  r.events = frames.size();
  std::map<int64_t, int> last_on_stream;  // stream -> latest op index
  int64_t first = std::numeric_limits<int64_t>::max(), last = 0;
  for (std::size_t i : order) {
    const std::string where =
        fmt::format("{}: byte {}: node {}", label, frames[i + 1].offset, nodes[i].id());
    ImportedOp o;
    try {
      o = op_of_node(nodes[i], Attrs(nodes[i]), where, c);
    } catch (const std::invalid_argument& e) {
      const std::string m = e.what();
      if (m.rfind(label, 0) == 0) throw;
      throw std::invalid_argument(where + ": " + m);  // an op's parameters out of range
    }
    const auto prev = last_on_stream.find(o.stream);
    const int prev_op = prev == last_on_stream.end() ? -1 : prev->second;
    nlohmann::json ctrl = nlohmann::json::array();
    for (const auto& [p, ctrl_only] : deps[i]) {
      if (ctrl_only && op_of[p] == prev_op) continue;  // stream order says it
      o.deps.push_back(op_of[p]);
      if (ctrl_only) ctrl.push_back(op_of[p]);
    }
    std::sort(o.deps.begin(), o.deps.end());
    if (!ctrl.empty()) o.detail["ctrl_deps"] = ctrl;
    const int idx = static_cast<int>(r.ops.size());
    last_on_stream[o.stream] = idx;
    if (std::find(r.streams.begin(), r.streams.end(), o.stream) == r.streams.end())
      r.streams.push_back(o.stream);
    first = std::min(first, o.start_ns);
    last = std::max(last, o.start_ns + o.dur_ns);
    r.ops.push_back(std::move(o));
  }
  // An ET without start times (every node at 0: a converter's or a hand-written graph) says
  // nothing of the run's span: 0, which `ridge run` prints as no comparison.
  const bool timed = std::any_of(nodes.begin(), nodes.end(),
                                 [](const pb::Node& x) { return x.start_time_micros() != 0; });
  r.span_ns = span ? *span : timed ? last - first : 0;
  return c;
}

ChakraImport import_chakra(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("import chakra: cannot read " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return import_chakra_bytes(bytes, path);
}

std::string export_chakra(const ImportedRun& r) {
  std::string out;
  auto put = [&out](const google::protobuf::Message& m) {
    std::string body;
    m.SerializeToString(&body);
    write_varint(out, body.size());
    out += body;
  };
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto* src = meta.add_attr();
  src->set_name("ridge_source");
  src->set_string_val(r.source);
  auto* dev = meta.add_attr();
  dev->set_name("ridge_device");
  dev->set_string_val(r.device);
  auto* span = meta.add_attr();
  span->set_name("ridge_span_ns");
  span->set_int64_val(r.span_ns);
  put(meta);
  auto attr = [](pb::Node& n, const char* name) {
    auto* a = n.add_attr();
    a->set_name(name);
    return a;
  };
  std::map<int64_t, int> last_on_stream;
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const ImportedOp& o = r.ops[i];
    pb::Node n;
    n.set_id(i);
    n.set_name(o.name);
    const auto& p = o.op.params();
    const std::string coll = o.detail.value("collective", "");
    if (o.cls == "communication") {
      const bool p2p = coll == "send" || coll == "recv";
      n.set_type(p2p ? (coll == "send" ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE)
                     : pb::COMM_COLL_NODE);
      if (!p2p) attr(n, "comm_type")->set_int64_val(std::max<int64_t>(0, collective_type(coll)));
      int64_t bytes = o.detail.value("bytes", int64_t{0});
      if (bytes == 0)
        bytes = o.detail.value("in_nelems", int64_t{0}) * dtype_bytes(o.detail.value("dtype", ""));
      attr(n, "comm_size")->set_int64_val(bytes);
    } else if (o.kind == NodeKind::kCopy) {
      n.set_type(o.op.kind() == "copy" && p.value("direction", "") == "d2h" ? pb::MEM_STORE_NODE
                                                                            : pb::MEM_LOAD_NODE);
      attr(n, "tensor_size")->set_uint64_val(p.value("bytes", uint64_t{0}));
    } else {
      n.set_type(pb::COMP_NODE);
      attr(n, "is_cpu_op")->set_bool_val(false);
      if (o.op.kind() == "gemm") {
        const double flops = 2.0 * p.at("m").get<double>() * p.at("n").get<double>() *
                             p.at("k").get<double>() * p.value("batch", 1.0);
        attr(n, "num_ops")->set_uint64_val(static_cast<uint64_t>(std::min(flops, 1.8e19)));
        for (const char* k : {"m", "n", "k", "batch"})
          attr(n, k)->set_int64_val(p.at(k).get<int64_t>());
        attr(n, "dtype")->set_string_val(p.at("dtype").get<std::string>());
      } else if (o.op.kind() == "custom") {
        const double flops =
            p.value("flops_tensor", 0.0) + p.value("flops_fp32", 0.0) + p.value("flops_fp64", 0.0);
        const double bytes = p.value("bytes_read", 0.0) + p.value("bytes_written", 0.0);
        if (flops > 0)
          attr(n, "num_ops")->set_uint64_val(static_cast<uint64_t>(std::min(flops, 1.8e19)));
        if (bytes > 0)
          attr(n, "tensor_size")->set_uint64_val(static_cast<uint64_t>(std::min(bytes, 1.8e19)));
      }
    }
    // Deps: the graph's own as data deps (ctrl deps where the import said so), and the op before
    // on the same stream as a ctrl dep (Chakra has no streams).
    std::set<int> ctrl;
    for (const auto& c : o.detail.value("ctrl_deps", nlohmann::json::array()))
      if (c.is_number_integer()) ctrl.insert(c.get<int>());
    std::set<int> data_deps, ctrl_deps;
    for (int d : o.deps) (ctrl.count(d) ? ctrl_deps : data_deps).insert(d);
    if (auto it = last_on_stream.find(o.stream);
        it != last_on_stream.end() && !data_deps.count(it->second))
      ctrl_deps.insert(it->second);
    last_on_stream[o.stream] = static_cast<int>(i);
    for (int d : data_deps) n.add_data_deps(d);
    for (int d : ctrl_deps) n.add_ctrl_deps(d);
    n.set_start_time_micros(
        static_cast<uint64_t>(std::llround(std::max<int64_t>(0, o.start_ns) / 1e3)));
    n.set_duration_micros(static_cast<uint64_t>(std::llround(o.dur_ns / 1e3)));
    attr(n, "ridge_dur_ns")->set_int64_val(o.dur_ns);
    attr(n, "ridge_stream")->set_int64_val(o.stream);
    attr(n, "ridge_class")->set_string_val(o.cls);
    attr(n, "ridge_mapped")->set_bool_val(o.mapped);
    attr(n, "ridge_op")
        ->set_string_val(nlohmann::json{{"kind", o.op.kind()}, {"params", o.op.params()}}.dump());
    attr(n, "ridge_host")
        ->set_string_val(nlohmann::json{
            {"start_ns", o.start_ns},
            {"issue_ns", o.issue_ns},
            {"host_gap_ns", o.host_gap_ns},
            {"cpu_op", o.cpu_op},
            {"launch", o.launch_api},
            {"graph", o.graph},
            {"grid", o.grid},
            {"block", o.block},
            {"registers", o.registers},
            {"shared_bytes",
             o.shared_bytes}}.dump());
    nlohmann::json detail = o.detail;
    detail.erase("chakra_id");
    detail.erase("ctrl_deps");
    if (!detail.empty()) attr(n, "ridge_detail")->set_string_val(detail.dump());
    put(n);
  }
  return out;
}

ImportedRun imported_from_graph_yaml(const workloads::GraphFile& f, const hw::GpuSpec& gpu,
                                     const std::string& source) {
  using workloads::Category;
  const workloads::GraphRun run = workloads::run_graph(f, gpu);
  const workloads::Graph& g = f.graph;
  ImportedRun r;
  r.source = source;
  r.device = gpu.name;
  std::vector<std::vector<int>> reach(g.size());  // graph node -> imported ops it stands for
  std::vector<int> op_of(g.size(), -1);
  double gap_s = 0, first = 1e300, last = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const int id = static_cast<int>(i);
    const auto& n = g.op(id);
    const auto& rec = run.exec.ops[i];
    std::set<int> deps;
    for (int d : g.deps(id)) {
      if (op_of[d] >= 0)
        deps.insert(op_of[d]);
      else
        deps.insert(reach[d].begin(), reach[d].end());
    }
    if (n.kind != NodeKind::kKernel && n.kind != NodeKind::kCopy) {
      if (n.kind == NodeKind::kHost) gap_s += rec.duration_s;
      reach[i].assign(deps.begin(), deps.end());  // waits pass their dependencies on
      continue;
    }
    ImportedOp o;
    o.name = n.name;
    o.kind = n.kind;
    switch (n.category) {
      case Category::kGemm:
        o.cls = "gemm";
        break;
      case Category::kAttention:
        o.cls = "attention";
        break;
      case Category::kElementwise:
        o.cls = "elementwise";
        break;
      case Category::kMemoryCopy:
        o.cls = "copy";
        break;
      case Category::kOptimizer:
        o.cls = "optimizer";
        break;
      case Category::kCommunication:
        o.cls = "communication";
        break;
      default:
        o.cls = "other";
    }
    o.mapped = n.fixed_time_s <= 0;
    o.op = o.mapped ? n.op : models::OpSpec::from_json("custom", {{"grid", 1}, {"block", 32}});
    o.stream = n.stream;
    o.start_ns = std::llround(rec.start_s * 1e9);
    o.dur_ns = std::llround(rec.duration_s * 1e9);
    o.issue_ns = std::llround(rec.issue_s * 1e9);
    o.host_gap_ns = std::llround(gap_s * 1e9);
    gap_s = 0;
    o.deps.assign(deps.begin(), deps.end());
    first = std::min(first, rec.start_s);
    last = std::max(last, rec.end_s);
    op_of[i] = static_cast<int>(r.ops.size());
    if (std::find(r.streams.begin(), r.streams.end(), o.stream) == r.streams.end())
      r.streams.push_back(o.stream);
    r.ops.push_back(std::move(o));
  }
  r.span_ns = r.ops.empty() ? 0 : std::llround((last - first) * 1e9);
  return r;
}

std::string chakra_import_text(const ChakraImport& c) {
  std::string s = fmt::format(
      "Chakra ET (version {}): {} nodes:", c.version.empty() ? "?" : c.version, c.run.ops.size());
  for (const auto& [t, k] : c.node_types) s += fmt::format(" {} {},", t, k);
  if (!c.node_types.empty()) s.pop_back();
  s += fmt::format("\n{} node(s) of no known type imported as custom ops at their duration\n\n",
                   c.unknown);
  return s + workloads::import_summary_text(c.run);
}

}  // namespace ridge::chakra
