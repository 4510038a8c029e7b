// `ridge predict CASES --gpu NAME [--mode fast|detailed] [--json]`: predicts a list of cases.
// CASES is a YAML list of {op, params, timing} (timing: kernel or per_call), or a
// measurement-record file ({"schema": "ridge.records/1", "records": [{"id", "op", "params",
// "timing": {"method"}}]}) whose records are re-predicted. Output: the record schema with "source":
// "predicted", timing.median_us = the prediction, bytes, flops and a "prediction" object. Any bad
// case fails the whole run (exit 2, nothing printed but the errors), each error naming file, index
// and what was expected.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "models/kernel_model.hpp"
#include "models/op_support.hpp"

namespace ridge::cli {

nlohmann::json prediction_json(const models::KernelPrediction& p);
models::Mode parse_mode(const std::string& s);
models::Timing parse_timing(const std::string& s);

namespace {

// A cases YAML file read through the strict reader's parser (alias expansion and depth bounded),
// as JSON.
nlohmann::json yaml_to_json(const hw::ConfigNode& n) {
  switch (n.kind) {
    case hw::ConfigNode::Kind::kMap: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& [k, v] : n.entries) j[k] = yaml_to_json(v);
      return j;
    }
    case hw::ConfigNode::Kind::kSequence: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& v : n.items) j.push_back(yaml_to_json(v));
      return j;
    }
    case hw::ConfigNode::Kind::kScalar: {
      const std::string& s = n.scalar;
      if (s == "true" || s == "false") return s == "true";
      try {
        size_t pos = 0;
        const long long v = std::stoll(s, &pos);
        if (pos == s.size()) return v;
        const double d = std::stod(s, &pos);
        if (pos == s.size()) return d;
      } catch (const std::exception&) {
      }
      return s;
    }
    default:
      return nullptr;
  }
}

struct Case {
  std::string id;
  models::OpSpec op;
  models::Timing timing = models::Timing::kKernel;
  nlohmann::json record;  // the input record (records files), echoed
};

// Measurement methods that time one call with events, launch included; anything else is kernel.
models::Timing timing_of_method(const std::string& m) {
  return (m == "per_call" || m == "events_per_call" || m == "wall") ? models::Timing::kPerCall
                                                                    : models::Timing::kKernel;
}

std::vector<Case> read_cases(const std::string& path, std::vector<std::string>& errors) {
  const std::string text = hw::read_input_file(path);
  nlohmann::json doc;
  bool records = false;
  if (path.ends_with(".json")) {
    if (const std::string deep = hw::json_depth_error(text); !deep.empty())
      throw std::invalid_argument(fmt::format("{}: {}", path, deep));
    try {
      doc = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      throw std::invalid_argument(fmt::format("{}: not valid JSON: {}", path, e.what()));
    }
  } else {
    doc = yaml_to_json(hw::parse_yaml(text, path));  // ConfigException: file:line:col
  }
  nlohmann::json list;
  if (doc.is_object() && doc.contains("records")) {
    records = true;
    if (doc.value("schema", "") != "ridge.records/1") {
      errors.push_back(fmt::format("{}: schema: expected \"ridge.records/1\"", path));
    }
    list = doc["records"];
  } else {
    list = doc;
  }
  if (!list.is_array()) {
    throw std::invalid_argument(fmt::format(
        "{}: expected a list of cases ({{op, params, timing}}) or a ridge.records/1 object", path));
  }
  std::vector<Case> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const auto& c = list[i];
    const std::string where = fmt::format("{}: {} {}", path, records ? "record" : "case", i);
    try {
      if (!c.is_object() || !c.contains("op") || !c["op"].is_string()) {
        throw std::invalid_argument("expected an object with a string 'op'");
      }
      Case k;
      k.id = c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>()
                                                     : fmt::format("case{}", i);
      k.op = models::OpSpec::from_json(c["op"].get<std::string>(),
                                       c.value("params", nlohmann::json::object()));
      if (c.contains("timing")) {
        const auto& t = c["timing"];
        if (t.is_string())
          k.timing = parse_timing(t.get<std::string>());
        else if (t.is_object() && t.contains("method") && t["method"].is_string())
          k.timing = timing_of_method(t["method"].get<std::string>());
        else
          throw std::invalid_argument("timing: expected kernel|per_call or {method: ...}");
      }
      if (records) k.record = c;
      out.push_back(std::move(k));
    } catch (const std::exception& e) {
      errors.push_back(fmt::format("{}: {}", where, e.what()));
    }
  }
  return out;
}

}  // namespace

void register_predict(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("predict", "predict a file of cases or measurement records");
  auto file = std::make_shared<std::string>();
  auto gpu = std::make_shared<std::string>("h200");
  auto mode = std::make_shared<std::string>("fast");
  cmd->add_option("cases", *file, "YAML list of cases, or a ridge.records/1 JSON file")->required();
  cmd->add_option("--gpu", *gpu, "GPU name, alias or config file")->capture_default_str();
  cmd->add_option("--mode", *mode, "fast or detailed")->capture_default_str();
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, file, gpu, mode, as_json] {
    action = [=] {
      const models::Mode m = parse_mode(*mode);
      std::vector<std::string> errors;
      const std::vector<Case> cases = read_cases(*file, errors);
      if (!errors.empty()) {
        std::string all;
        for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
        throw std::invalid_argument(
            fmt::format("{}\n{} problem(s); nothing was written", all, errors.size()));
      }
      const hw::GpuSpec g = hw::find_gpu(*gpu);
      nlohmann::json recs = nlohmann::json::array();
      Table t({"id", "op", "timing", "time", "bound"});
      for (const Case& c : cases) {
        if (std::string why = models::unsupported_reason(g, c.op); !why.empty()) {
          errors.push_back(fmt::format("{}: {}: {}", *file, c.id, why));
          continue;
        }
        try {
          models::require_detailed_budget(g, c.op, m, c.timing);
        } catch (const std::invalid_argument& e) {
          errors.push_back(fmt::format("{}: {}: {}", *file, c.id, e.what()));
        }
      }
      if (!errors.empty()) {
        std::string all;
        for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
        throw std::invalid_argument(
            fmt::format("{}\n{} problem(s); nothing was written", all, errors.size()));
      }
      for (const Case& c : cases) {
        const auto p = models::predict_kernel(g, c.op, m, c.timing);
        nlohmann::json r = c.record.is_object() ? c.record : nlohmann::json::object();
        r["id"] = c.id;
        r["op"] = c.op.kind();
        r["params"] = c.op.params();
        r["source"] = "predicted";
        r["device"] = g.name;
        nlohmann::json timing = r.contains("timing") && r["timing"].is_object()
                                    ? r["timing"]
                                    : nlohmann::json::object();
        timing["method"] = timing.value("method", std::string(models::timing_name(c.timing)));
        timing["median_us"] = p.time_s * 1e6;
        for (const char* k : {"min_us", "max_us", "spread", "repetitions", "warmup"})
          timing.erase(k);
        r["timing"] = timing;
        r["bytes"] = p.hbm_bytes;
        r["flops"] = p.flops;
        r["prediction"] = prediction_json(p);
        r["prediction"]["mode"] = models::mode_name(m);
        recs.push_back(std::move(r));
        t.row({c.id, c.op.str(), std::string(models::timing_name(c.timing)), fmt_time(p.time_s),
               p.bound});
      }
      nlohmann::json out = {{"schema", "ridge.records/1"},
                            {"source", "predicted"},
                            {"gpu", g.name},
                            {"mode", models::mode_name(m)},
                            {"input", *file},
                            {"provenance", provenance(g.files)},
                            {"records", recs}};
      emit(as_json->count() > 0, t.str() + "\n" + provenance_text(g.files), out);
      return 0;
    };
  });
}

}  // namespace ridge::cli
