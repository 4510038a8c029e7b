// `ridge run STUDY.yaml`: simulate the study's workloads of one model on one GPU and report the
// step time, what bounds it (critical path), what would help (what-ifs beside Amdahl), memory and
// roofline.
#include <fmt/format.h>

#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "hw/system_loader.hpp"
#include "workloads/e2e_compare.hpp"
#include "workloads/parallel_config.hpp"
#include "workloads/study.hpp"

namespace ridge::cli {

struct RunOutputs {
  bool json = false;
  std::string trace, svg, timeline_svg;
  std::vector<std::string> what_ifs;
  std::string mode;
  std::vector<std::string> e2e_table;
  std::string out_path, gpu = "h200";
};

// `ridge run --e2e-table validate/data/h200/e2e/e2e.json [--e2e-table RUN2 ...] --out
// docs/e2e-validation.md`
int e2e_table(const RunOutputs& o) {
  const hw::GpuSpec g = hw::find_gpu(o.gpu);
  std::vector<workloads::E2eRun> runs;
  workloads::E2eCache cache;  // the runs measured the same cases: simulate each once
  for (const auto& path : o.e2e_table) {
    const std::string text = hw::read_input_file(path);
    if (const std::string deep = hw::json_depth_error(text); !deep.empty())
      throw std::invalid_argument("--e2e-table: " + path + ": " + deep);
    const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded()) throw std::invalid_argument("--e2e-table: " + path + ": not JSON");
    try {
      runs.push_back({path, workloads::compare_e2e(doc, g, &cache)});
    } catch (const std::exception& e) {
      throw std::invalid_argument("--e2e-table: " + path + ": " + e.what());
    }
  }
  const std::string md = workloads::e2e_markdown(runs, g.name, g.param("host_python_scale"),
                                                 g.param("host_probe_us") * 1e6);
  if (!o.out_path.empty()) write_file_atomically(o.out_path, md);
  nlohmann::json j = nlohmann::json::array();
  for (const auto& run : runs)
    for (const auto& r : run.rows)
      j.push_back({{"source", run.source},
                   {"id", r.id},
                   {"op", r.op},
                   {"measured_s", r.measured_s},
                   {"predicted_s", r.predicted_s},
                   {"error", r.error},
                   {"measured_kernels", r.measured_kernels},
                   {"predicted_kernels", r.predicted_kernels},
                   {"bound", r.bound}});
  emit(o.json, md, j);
  return 0;
}

// A `kind: graph` file (workloads/graph_yaml.hpp) rather than a study.
bool is_graph_yaml(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("kind:", 0) == 0) return line.find("graph") != std::string::npos;
  return false;
}

// A parallel training step on a system (the study's `parallel:` block).
int run_parallel_study(const std::string& path, const workloads::Study& study,
                       const RunOutputs& out) {
  const workloads::ModelConfig model = workloads::load_model_config(study.model_path);
  if (!model.is_transformer())
    throw std::invalid_argument("parallel training needs a transformer model file");
  const hw::SystemSpec sys = hw::find_system(study.parallel->system);
  workloads::ParallelResult r =
      workloads::run_parallel(model.transformer(), *study.parallel, sys, study.mode);
  for (const auto& w : study.what_ifs)
    r.what_ifs.push_back(workloads::run_parallel_what_if(model.transformer(), *study.parallel, sys,
                                                         study.mode, r,
                                                         workloads::parse_parallel_what_if(w)));
  std::vector<std::pair<std::string, std::string>> files = study.files;
  for (const auto& f : model.files) files.push_back(f);
  for (const auto& f : sys.files) files.push_back(f);
  if (!out.trace.empty()) write_file_atomically(out.trace, workloads::parallel_trace_json(r));
  nlohmann::json j = workloads::parallel_report_json(r);
  j["study"] = path;
  j["provenance"] = provenance(files);
  emit(out.json,
       workloads::parallel_report_text(r, model.transformer().name) + "\n" + provenance_text(files),
       j);
  return 0;
}

int run_study_file(const std::string& path, const RunOutputs& out) {
  workloads::Study study = workloads::load_study(path);
  for (const auto& w : out.what_ifs) {
    if (study.parallel)
      workloads::parse_parallel_what_if(w);
    else
      workloads::parse_what_if(w);  // rejects a bad one before any work
    study.what_ifs.push_back(w);
  }
  if (out.mode == "detailed")
    study.mode = workloads::TimingMode::kDetailed;
  else if (out.mode == "fast")
    study.mode = workloads::TimingMode::kFast;
  else if (!out.mode.empty())
    throw std::invalid_argument("--mode: expected fast or detailed");
  // Refuse a bad output target before any work (again before writing, in OutputSet::commit).
  for (const std::string* p : {&out.trace, &out.svg, &out.timeline_svg})
    if (!p->empty()) check_output_target(*p);
  if (study.parallel) return run_parallel_study(path, study, out);
  const workloads::StudyResult r = workloads::run_study(study);
  std::vector<std::pair<std::string, std::string>> files = study.files;
  for (const auto& f : r.model.files) files.push_back(f);
  for (const auto& f : r.gpu.files) files.push_back(f);
  // Render everything, then write all outputs together: a failure leaves none of them.
  OutputSet outputs;
  if (!out.trace.empty()) outputs.add(out.trace, workloads::trace_json(r));
  if (!out.svg.empty()) outputs.add(out.svg, workloads::roofline_svg(r));
  if (!out.timeline_svg.empty()) outputs.add(out.timeline_svg, workloads::timeline_svg(r));
  outputs.commit();
  nlohmann::json j = workloads::report_json(r);
  j["study"] = path;
  j["provenance"] = provenance(files);
  emit(out.json, workloads::report_text(r) + "\n" + provenance_text(files), j);
  return 0;
}

void describe_parallel(std::string& text, nlohmann::json& j) {
  Table t({"key", "default", "meaning"});
  for (const auto& k : workloads::parallel_keys()) {
    t.row({k.key, k.fallback, k.meaning});
    j.push_back({{"key", k.key}, {"default", k.fallback}, {"meaning", k.meaning}});
  }
  text = "study.parallel: parallel training steps on a system (docs/parallel.md)\n" + t.str();
}

void register_run(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("run", "simulate a study (model + GPU + workload) and say what bounds it");
  auto path = std::make_shared<std::string>();
  auto out = std::make_shared<RunOutputs>();
  cmd->add_option("study", *path,
                  "study file (configs/studies/default.yaml), an imported GRAPH.json or a "
                  "`kind: graph` YAML (docs/import.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--e2e-table", out->e2e_table,
                  "instead of a study: predicted vs measured table of validate/e2e records "
                  "(repeatable: one file per run)");
  cmd->add_option("--out", out->out_path, "with --e2e-table: write the Markdown table here");
  auto* gpu_opt = cmd->add_option(
      "--gpu", out->gpu,
      "with --e2e-table: the GPU the records were measured on; with an imported GRAPH.json: "
      "the GPU to retarget to (docs/import.md)");
  cmd->add_option(
      "--what-if", out->what_ifs,
      "NAME*FACTOR: a category/op kind (attention*2) or GPU figure (hbm_bandwidth*1.5)");
  cmd->add_option("--trace", out->trace, "write a Perfetto (Chrome trace JSON) timeline");
  cmd->add_option("--svg", out->svg, "write a roofline chart of every kernel (SVG)");
  cmd->add_option("--timeline-svg", out->timeline_svg,
                  "write the timeline with the critical path (SVG)");
  cmd->add_option("--mode", out->mode, "kernel model: fast or detailed (overrides the study)");
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, path, out, as_json, gpu_opt] {
    action = [=] {
      RunOutputs o = *out;
      o.json = as_json->count() > 0;
      if (!o.e2e_table.empty()) return e2e_table(o);
      const bool imported = path->size() > 5 && path->ends_with(".json");
      if (imported || is_graph_yaml(*path)) {
        // Imported runs and graph files (cli/cmd_import.cpp) report in their own form.
        if (!o.trace.empty() || !o.svg.empty() || !o.timeline_svg.empty())
          throw std::invalid_argument(
              "run: --trace, --svg and --timeline-svg are for studies; an imported GRAPH.json "
              "or a kind: graph file takes --what-if");
        if (imported)
          return run_imported_file(*path, o.gpu, gpu_opt->count() > 0, o.mode, o.json, o.what_ifs);
        return run_graph_yaml_file(*path, gpu_opt->count() > 0 ? o.gpu : "", o.mode, o.json,
                                   o.what_ifs);
      }
      if (path->empty())
        throw std::invalid_argument(
            "run: a study file is required (e.g. configs/studies/default.yaml)");
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
