// `ridge describe ops|params`: the op vocabulary and the model's free parameters, from the tables
// that also drive parsing and validation.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/limits.hpp"
#include "hw/model_params.hpp"
#include "models/cases.hpp"
#include "models/op.hpp"
#include "models/records.hpp"
#include "workloads/file_keys.hpp"

namespace ridge::cli {

void describe_serve(std::string& text, nlohmann::json& j);     // cli/cmd_serve.cpp
void describe_parallel(std::string& text, nlohmann::json& j);  // cli/cmd_run.cpp
void describe_plan(std::string& text, nlohmann::json& j);      // cli/cmd_plan.cpp

namespace {
std::string_view type_name(models::ParamType t) {
  switch (t) {
    case models::ParamType::kInt:
      return "int";
    case models::ParamType::kFloat:
      return "number";
    case models::ParamType::kBool:
      return "bool";
    case models::ParamType::kEnum:
      return "choice";
  }
  return "?";
}
// A study or model key table: key, type, default, range (integers), meaning.
void describe_file_keys(const std::vector<workloads::FileKey>& keys, std::string& text,
                        nlohmann::json& j) {
  Table t({"key", "type", "default", "range", "meaning"});
  for (const auto& k : keys) {
    const bool ranged = k.lo <= k.hi;
    const std::string range = ranged ? fmt::format("{} .. {}", k.lo, k.hi) : "";
    t.row({k.path, k.type, *k.fallback ? k.fallback : "(required)", range, k.meaning});
    nlohmann::json e = {
        {"key", k.path}, {"type", k.type}, {"default", k.fallback}, {"meaning", k.meaning}};
    if (ranged) {
      e["min"] = k.lo;
      e["max"] = k.hi;
    }
    j.push_back(e);
  }
  text = t.str();
}

}  // namespace

void register_describe(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "describe",
      "every key users can write: the op vocabulary (ops), the model parameters (params), input "
      "limits (limits), serving studies (serve), systems (system), parallel training (parallel), "
      "layout planning (plan), sweeps (sweep), graph files (graph), imported graphs (import), "
      "study files (study), model files (model), predict cases (cases), measurement records "
      "(records)");
  auto what = std::make_shared<std::string>("ops");
  cmd->add_option("what", *what,
                  "ops, params, limits, serve, system, parallel, plan, sweep, graph (kind: graph "
                  "files), import (imported graphs), study, model, cases (ridge predict input) or "
                  "records")
      ->check(CLI::IsMember({"ops", "params", "limits", "serve", "system", "parallel", "plan",
                             "sweep", "graph", "import", "study", "model", "cases", "records"}));
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, what, as_json] {
    action = [=] {
      nlohmann::json j = nlohmann::json::array();
      std::string text;
      if (*what == "study") {
        describe_file_keys(workloads::study_keys(), text, j);
        text +=
            "\nA parallel: block: ridge describe parallel. Serving studies: ridge describe "
            "serve. Graph files: ridge describe graph.\n";
      } else if (*what == "model") {
        describe_file_keys(workloads::model_keys(), text, j);
      } else if (*what == "cases" || *what == "records") {
        Table t({"key", "type", "default", "meaning"});
        const auto row = [&](const char* key, const char* type, const char* fallback,
                             const char* meaning) {
          t.row({key, type, *fallback ? fallback : "(required)", meaning});
          j.push_back({{"key", key}, {"type", type}, {"default", fallback}, {"meaning", meaning}});
        };
        if (*what == "cases") {
          for (const auto& k : models::case_keys()) row(k.key, k.type, k.fallback, k.meaning);
          text = "A YAML (or JSON) list of cases, each a map of:\n" + t.str() +
                 "\nOr a ridge.records/1 file (ridge describe records): its records are "
                 "predicted.\n";
        } else {
          for (const auto& k : models::record_keys()) row(k.path, k.type, k.fallback, k.meaning);
          text =
              "A JSON object (schema ridge.records/1; validate/README.md). Keys Ridge reads "
              "(any other key of a record is kept as written):\n" +
              t.str();
        }
      } else if (*what == "system") {
        describe_system_keys(text, j);
      } else if (*what == "graph" || *what == "import") {
        text = describe_import_topic(*what, j);
      } else if (*what == "limits") {
        Table t({"limit", "value", "applies to", "meaning"});
        for (const auto& l : hw::limits_table()) {
          t.row({std::string(l.name), l.value, std::string(l.applies_to), std::string(l.meaning)});
          j.push_back({{"name", l.name},
                       {"value", l.value},
                       {"applies_to", l.applies_to},
                       {"meaning", l.meaning}});
        }
        text = t.str();
      } else if (*what == "ops") {
        for (const auto& op : models::op_vocabulary()) {
          nlohmann::json params = nlohmann::json::array();
          Table t({"parameter", "type", "default", "meaning"});
          for (const auto& p : op.params) {
            std::string type(type_name(p.type));
            if (p.type == models::ParamType::kEnum)
              type = fmt::format("{}", fmt::join(p.choices, "|"));
            t.row({std::string(p.name), type,
                   p.fallback.empty() ? "(required)" : std::string(p.fallback),
                   std::string(p.meaning)});
            params.push_back({{"name", p.name},
                              {"type", type_name(p.type)},
                              {"default", p.fallback},
                              {"choices", p.choices},
                              {"meaning", p.meaning}});
          }
          text += fmt::format("{}: {}\n{}\n", op.kind, op.summary, t.str());
          j.push_back({{"op", op.kind}, {"summary", op.summary}, {"params", params}});
        }
      } else if (*what == "serve") {
        describe_serve(text, j);
      } else if (*what == "sweep") {
        describe_sweep(text, j);
      } else if (*what == "parallel") {
        describe_parallel(text, j);
      } else if (*what == "plan") {
        describe_plan(text, j);
      } else {
        Table t({"parameter", "default", "range", "meaning"});
        for (const auto& p : hw::model_param_table()) {
          t.row({std::string(p.name), hw::format_quantity(p.fallback, p.dim),
                 fmt::format("{} .. {}", hw::format_quantity(p.lo, p.dim),
                             hw::format_quantity(p.hi, p.dim)),
                 std::string(p.meaning)});
          j.push_back({{"name", p.name},
                       {"default", p.fallback},
                       {"unit", hw::base_unit(p.dim)},
                       {"min", p.lo},
                       {"max", p.hi},
                       {"meaning", p.meaning}});
        }
        text = t.str();
      }
      emit(as_json->count() > 0, text, j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
