// `ridge import kineto TRACE.json[.gz] --out GRAPH.json`: a PyTorch profiler trace as an imported
// graph (docs/import.md), and `ridge run GRAPH.json [--gpu b200]`: its measured replay,
// prediction and retargeting (workloads/imported_run.hpp).
#include <fmt/format.h>

#include <fstream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/import_kineto.hpp"
#include "workloads/imported_run.hpp"

namespace ridge::cli {
namespace {

// The shipped GPU a trace's device name stands for ("NVIDIA H200" -> h200); "" if none.
std::string gpu_of_device(const std::string& device) {
  static const std::pair<const char*, const char*> kNames[] = {
      {"H200", "h200"}, {"H100", "h100"}, {"B200", "b200"}, {"A100", "a100"}};
  for (const auto& [key, name] : kNames)
    if (device.find(key) != std::string::npos) return name;
  return "";
}

int import_kineto_cmd(const std::string& trace, const std::string& out, bool json) {
  if (out.empty()) throw std::invalid_argument("import kineto: --out GRAPH.json is required");
  const workloads::ImportedRun r = workloads::import_kineto(trace);
  const nlohmann::json g = workloads::imported_json(r);
  write_file_atomically(out, g.dump(1) + "\n");
  nlohmann::json j = {{"graph", out},
                      {"classes", g["classes"]},
                      {"ops", r.ops.size()},
                      {"span_ns", r.span_ns},
                      {"source", g["source"]}};
  emit(json, workloads::import_summary_text(r) + fmt::format("\nwrote {}\n", out), j);
  return 0;
}

}  // namespace

int run_imported_file(const std::string& path, const std::string& gpu, bool gpu_given,
                      const std::string& mode, bool json) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("run: cannot read " + path);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) throw std::invalid_argument(path + ": not JSON");
  const workloads::ImportedRun r = workloads::imported_from_json(doc, path);
  std::string base_name = gpu_of_device(r.device);
  if (base_name.empty()) base_name = gpu;  // unknown device: the --gpu given (default h200)
  const hw::GpuSpec base = hw::find_gpu(base_name);
  std::optional<hw::GpuSpec> target;
  if (gpu_given && gpu != base_name) target = hw::find_gpu(gpu);
  workloads::TimingMode m = workloads::TimingMode::kFast;
  if (mode == "detailed")
    m = workloads::TimingMode::kDetailed;
  else if (!mode.empty() && mode != "fast")
    throw std::invalid_argument("--mode: expected fast or detailed");
  const auto rep = workloads::run_imported(r, base, target ? &*target : nullptr, m);
  std::vector<std::pair<std::string, std::string>> files = base.files;
  if (target)
    for (const auto& f : target->files) files.push_back(f);
  nlohmann::json j = workloads::imported_report_json(rep);
  j["graph"] = path;
  j["provenance"] = provenance(files);
  emit(json, workloads::imported_report_text(rep) + "\n" + provenance_text(files), j);
  return 0;
}

void register_import(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("import", "import a user's own run as a graph of Ridge ops");
  cmd->require_subcommand(1);
  auto* kin = cmd->add_subcommand(
      "kineto", "a PyTorch profiler (Kineto) Chrome trace, .json or .json.gz (docs/import.md)");
  auto trace = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  kin->add_option("trace", *trace, "the trace file")->required()->check(CLI::ExistingFile);
  kin->add_option("--out", *out, "the graph file to write (ridge.imported_graph/1)")->required();
  auto* as_json = add_json_flag(kin);
  kin->callback([&action, trace, out, as_json] {
    action = [=] { return import_kineto_cmd(*trace, *out, as_json->count() > 0); };
  });
}

}  // namespace ridge::cli

namespace ridge::cli {
int run_graph_yaml_file(const std::string&, const std::string&, const std::string&, bool) {
  throw std::invalid_argument("kind: graph: not yet");
}
}  // namespace ridge::cli
