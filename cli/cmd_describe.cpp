// `ridge describe ops|params`: the op vocabulary and the model's free parameters, from the tables
// that also drive parsing and validation.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/limits.hpp"
#include "hw/model_params.hpp"
#include "models/op.hpp"

namespace ridge::cli {

void describe_serve(std::string& text, nlohmann::json& j);       // cli/cmd_serve.cpp
void describe_parallel(std::string& text, nlohmann::json& j);    // cli/cmd_run.cpp
void describe_model_keys(std::string& text, nlohmann::json& j);  // cli/cmd_model_keys.cpp
void describe_plan(std::string& text, nlohmann::json& j);        // cli/cmd_plan.cpp

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
}  // namespace

void register_describe(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "describe",
      "every key users can write: the op vocabulary (ops), the model "
      "parameters (params), input limits (limits), serving studies "
      "(serve), systems (system), parallel training (parallel), layout planning (plan), graph "
      "files (graph), imported graphs (import), model files (model), sweeps (sweep)");
  auto what = std::make_shared<std::string>("ops");
  cmd->add_option("what", *what,
                  "ops, params, limits, serve, system, parallel, plan, graph (kind: graph files), "
                  "import (imported graphs), model (transformer model-file keys) or sweep")
      ->check(CLI::IsMember({"ops", "params", "limits", "serve", "system", "parallel", "plan",
                             "graph", "import", "model", "sweep"}));
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, what, as_json] {
    action = [=] {
      nlohmann::json j = nlohmann::json::array();
      std::string text;
      if (*what == "system") {
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
      } else if (*what == "model") {
        describe_model_keys(text, j);
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
