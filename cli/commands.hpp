// The `ridge` subcommands. Each registers itself on the CLI11 app and runs when chosen.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace ridge::cli {

/// What a subcommand does once its arguments are parsed; returns the exit code.
using Action = std::function<int()>;

/// A number option's check: finite and in [lo, hi]. CLI11's Range lets NaN through (it compares
/// v < lo || v > hi, both false for NaN), and "nan" and "inf" parse as doubles.
inline CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(s, v) || !std::isfinite(v) || v < lo || v > hi)
          return "expected a number in [" + CLI::detail::to_string(lo) + ", " +
                 CLI::detail::to_string(hi) + "], got " + s;
        return {};
      },
      "NUMBER in [" + CLI::detail::to_string(lo) + " - " + CLI::detail::to_string(hi) + "]");
}

void register_hw(CLI::App& app, Action& action);
void register_roofline(CLI::App& app, Action& action);
void register_occupancy(CLI::App& app, Action& action);
void register_describe(CLI::App& app, Action& action);
void register_kernel(CLI::App& app, Action& action);
void register_predict(CLI::App& app, Action& action);
void register_calibrate(CLI::App& app, Action& action);
void register_compare(CLI::App& app, Action& action);
void register_run(CLI::App& app, Action& action);
void register_system(CLI::App& app, Action& action);
void register_collective(CLI::App& app, Action& action);
void register_serve(CLI::App& app, Action& action);
void register_import(CLI::App& app, Action& action);
void register_chakra(CLI::App& app, Action& action);
void register_sweep(CLI::App& app, Action& action);
void register_plan(CLI::App& app, Action& action);
/// Shows detailed-mode progress on stderr (cli/detailed_progress.cpp).
void install_progress_reporter();

/// Runs a study file (configs/studies/*.yaml) and prints its report; returns the exit code.
int run_study_path(const std::string& path);

/// `ridge run GRAPH.json`: an imported run (cli/cmd_import.cpp). `gpu_given`: --gpu retargets.
int run_imported_file(const std::string& path, const std::string& gpu, bool gpu_given,
                      const std::string& mode, bool json,
                      const std::vector<std::string>& what_ifs = {});
/// `ridge run GRAPH.yaml` with `kind: graph` (cli/cmd_import.cpp).
int run_graph_yaml_file(const std::string& path, const std::string& gpu, const std::string& mode,
                        bool json, const std::vector<std::string>& what_ifs);

/// `ridge describe graph|import` (cli/cmd_import.cpp): the keys of those files; fills `j`.
std::string describe_import_topic(const std::string& what, nlohmann::json& j);

/// `ridge describe sweep` (cli/cmd_sweep.cpp): the keys of a sweep: block.
void describe_sweep(std::string& text, nlohmann::json& json);

/// `ridge` with no arguments: the default study of the README.
int run_default_study();

/// Every key a system file may hold (hw::system_keys()), as text and JSON.
void describe_system_keys(std::string& text, nlohmann::json& json);

/// `ridge compare FILE... --system S`: measured collectives against simulated ones.
struct CollectiveCompareArgs {
  std::vector<std::string> files;
  std::string system, op;
  int gpus = 0;
  bool no_nvls = false, markdown = false, json = false, all_rows = false;
  double host_issue_us = 0;
};
int compare_collectives_command(const CollectiveCompareArgs& args);

/// The --json flag every command has.
inline CLI::Option* add_json_flag(CLI::App* cmd) {
  return cmd->add_flag("--json")->description("print JSON instead of text");
}

/// Prints `text`, or `json` (pretty, with a trailing newline) when `as_json`.
void emit(bool as_json, const std::string& text, const nlohmann::json& json);

}  // namespace ridge::cli
