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
#include "models/cases.hpp"
#include "models/kernel_model.hpp"
#include "models/op_support.hpp"

namespace ridge::cli {

nlohmann::json prediction_json(const models::KernelPrediction& p);
models::Mode parse_mode(const std::string& s);

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
      const std::vector<models::Case> cases =
          models::parse_cases(hw::read_input_file(*file), *file, errors);
      if (!errors.empty()) {
        std::string all;
        for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
        throw std::invalid_argument(
            fmt::format("{}\n{} problem(s); nothing was written", all, errors.size()));
      }
      const hw::GpuSpec g = hw::find_gpu(*gpu);
      nlohmann::json recs = nlohmann::json::array();
      Table t({"id", "op", "timing", "time", "bound"});
      for (const models::Case& c : cases) {
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
      for (const models::Case& c : cases) {
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
