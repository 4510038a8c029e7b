// `ridge-bench --cases FILE`: measures the cases a file lists (a pre-registered set, e.g.
// validate/prereg/own-set1/cases.json) with the suites' own kernels and timing harness. FILE is a
// ridge.records/1 document (its "records") or a bare JSON list; each entry is {"op", "params"}
// with the op and params a suite's record of that case carries:
//   gemm {m, n, k, dtype}            cuBLASLt, heuristic's first algorithm (suite gemm)
//   elementwise {op, n, dtype, stride}
//   softmax | layernorm | rmsnorm {rows, cols, dtype}
//   membw {kind: read|write|copy, bytes, buffers}
//   copy {direction: d2d|h2d|d2h, bytes, memory: device|pinned|pageable}
//   launch {kind: dependent|eager|graph, kernels}
//   attention {batch, heads, kv_heads, seq_q, seq_kv, head_dim, causal, label}
// The record written for a case has the id and params the suite would give it. A case the file
// cannot describe (unknown op, missing or wrong-typed param) fails alone, named by its index.
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "gemm.hpp"
#include "suites.hpp"

namespace ridge::validate {
namespace {

Dtype parse_dtype(const std::string& s) {
  for (Dtype d : {Dtype::kF32, Dtype::kTF32, Dtype::kF16, Dtype::kBF16, Dtype::kF8E4M3,
                  Dtype::kF8E5M2, Dtype::kF64}) {
    if (s == dtype_name(d)) return d;
  }
  throw BenchError("unknown dtype '" + s + "'");
}

const Json& member(const Json& params, const std::string& key) {
  const Json* v = params.find(key);
  if (!v) throw BenchError("params." + key + " is missing");
  return *v;
}

std::int64_t integer(const Json& params, const std::string& key) {
  const Json& v = member(params, key);
  if (v.type() != Json::Type::kInt || v.number() < 0) {
    throw BenchError("params." + key + " must be a non-negative integer");
  }
  return static_cast<std::int64_t>(v.number());
}

std::string text(const Json& params, const std::string& key) {
  const Json& v = member(params, key);
  if (v.type() != Json::Type::kString) throw BenchError("params." + key + " must be a string");
  return v.str();
}

bool flag(const Json& params, const std::string& key) {
  const Json& v = member(params, key);
  if (v.type() != Json::Type::kBool) throw BenchError("params." + key + " must be true or false");
  return v.boolean();
}

}  // namespace

std::size_t run_cases_file(Context& ctx, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open the case file");
  std::stringstream ss;
  ss << in.rdbuf();
  const Json doc = parse_json(ss.str(), path);
  const Json* list = doc.type() == Json::Type::kArray ? &doc : doc.find("records");
  if (!list || list->type() != Json::Type::kArray) {
    throw std::runtime_error(path + ": expected a JSON list of cases or a \"records\" list");
  }
  std::unique_ptr<GemmRunner> gemm;  // made at the first GEMM (it reserves an 8 GiB arena)
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& c = list->at(i);
    const Json* op = c.find("op");
    const Json* params = c.find("params");
    const std::string where = path + ": case " + std::to_string(i);
    ctx.run_case(where, [&] {
      if (!op || op->type() != Json::Type::kString || !params ||
          params->type() != Json::Type::kObject) {
        throw BenchError("needs \"op\" (a string) and \"params\" (an object)");
      }
      const Json& p = *params;
      const std::string& o = op->str();
      if (o == "gemm") {
        if (!gemm) gemm = std::make_unique<GemmRunner>(ctx, 8ull << 30);
        GemmShape s{integer(p, "m"), integer(p, "n"), integer(p, "k"),
                    p.find("group") ? text(p, "group") : std::string("cases")};
        gemm->run_lt(s, parse_dtype(text(p, "dtype")), "gemm");
      } else if (o == "elementwise") {
        run_elementwise_case(ctx, text(p, "op"), parse_dtype(text(p, "dtype")),
                             static_cast<std::size_t>(integer(p, "n")),
                             static_cast<int>(integer(p, "stride")));
      } else if (o == "softmax" || o == "layernorm" || o == "rmsnorm") {
        run_row_case(ctx, o, parse_dtype(text(p, "dtype")), static_cast<int>(integer(p, "rows")),
                     static_cast<int>(integer(p, "cols")));
      } else if (o == "membw") {
        run_membw_case(ctx, text(p, "kind"), static_cast<std::size_t>(integer(p, "bytes")),
                       static_cast<int>(integer(p, "buffers")));
      } else if (o == "copy") {
        const std::string dir = text(p, "direction");
        const auto bytes = static_cast<std::size_t>(integer(p, "bytes"));
        if (dir == "d2d") {
          run_copy_d2d_case(ctx, bytes);
        } else {
          run_host_copy_case(ctx, text(p, "memory"), dir, bytes);
        }
      } else if (o == "launch") {
        run_launch_case(ctx, text(p, "kind"), static_cast<int>(integer(p, "kernels")));
      } else if (o == "attention") {
        run_attention_case(
            ctx, static_cast<int>(integer(p, "batch")), static_cast<int>(integer(p, "heads")),
            static_cast<int>(integer(p, "kv_heads")), static_cast<int>(integer(p, "seq_q")),
            static_cast<int>(integer(p, "seq_kv")), static_cast<int>(integer(p, "head_dim")),
            flag(p, "causal"), p.find("label") ? text(p, "label") : std::string("cases"));
      } else {
        throw BenchError("unknown op '" + o + "'");
      }
    });
  }
  return list->size();
}

}  // namespace ridge::validate
