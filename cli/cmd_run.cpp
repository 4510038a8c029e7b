// `ridge run STUDY.yaml`: simulate the study's workloads of one model on one GPU and report the
// step time, what bounds it (critical path), what would help (what-ifs beside Amdahl), memory and
// roofline.
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "workloads/study.hpp"

namespace ridge::cli {

struct RunOutputs {
  bool json = false;
  std::string trace, svg, timeline_svg;
  std::vector<std::string> what_ifs;
  std::string mode;
};

int run_study_file(const std::string& path, const RunOutputs& out) {
  workloads::Study study = workloads::load_study(path);
  for (const auto& w : out.what_ifs) {
    workloads::parse_what_if(w);  // rejects a bad one before any work
    study.what_ifs.push_back(w);
  }
  if (out.mode == "detailed")
    study.mode = workloads::TimingMode::kDetailed;
  else if (out.mode == "fast")
    study.mode = workloads::TimingMode::kFast;
  else if (!out.mode.empty())
    throw std::invalid_argument("--mode: expected fast or detailed");
  const workloads::StudyResult r = workloads::run_study(study);
  std::vector<std::pair<std::string, std::string>> files = study.files;
  for (const auto& f : r.model.files) files.push_back(f);
  for (const auto& f : r.gpu.files) files.push_back(f);
  // Render everything first, then write: a failure leaves no half-written output.
  std::string trace, svg, tl;
  if (!out.trace.empty()) trace = workloads::trace_json(r);
  if (!out.svg.empty()) svg = workloads::roofline_svg(r);
  if (!out.timeline_svg.empty()) tl = workloads::timeline_svg(r);
  if (!out.trace.empty()) write_file_atomically(out.trace, trace);
  if (!out.svg.empty()) write_file_atomically(out.svg, svg);
  if (!out.timeline_svg.empty()) write_file_atomically(out.timeline_svg, tl);
  nlohmann::json j = workloads::report_json(r);
  j["study"] = path;
  j["provenance"] = provenance(files);
  emit(out.json, workloads::report_text(r) + "\n" + provenance_text(files), j);
  return 0;
}

void register_run(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("run", "simulate a study (model + GPU + workload) and say what bounds it");
  auto path = std::make_shared<std::string>();
  auto out = std::make_shared<RunOutputs>();
  cmd->add_option("study", *path, "study file, e.g. configs/studies/default.yaml")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
      "--what-if", out->what_ifs,
      "NAME*FACTOR: a category/op kind (attention*2) or GPU figure (hbm_bandwidth*1.5)");
  cmd->add_option("--trace", out->trace, "write a Perfetto (Chrome trace JSON) timeline");
  cmd->add_option("--svg", out->svg, "write a roofline chart of every kernel (SVG)");
  cmd->add_option("--timeline-svg", out->timeline_svg,
                  "write the timeline with the critical path (SVG)");
  cmd->add_option("--mode", out->mode, "kernel model: fast or detailed (overrides the study)");
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, path, out, as_json] {
    action = [=] {
      RunOutputs o = *out;
      o.json = as_json->count() > 0;
      return run_study_file(*path, o);
    };
  });
}

}  // namespace ridge::cli

namespace ridge::cli {
int run_study_path(const std::string& path) {
  return run_study_file(path, RunOutputs{});
}
}  // namespace ridge::cli
