// `ridge plan STUDY.yaml`: which parallel layout trains the study's model best on its system (or
// GPU budget), and does it fit (workloads/plan.hpp, docs/planning.md).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/point_runner.hpp"
#include "hw/system_loader.hpp"
#include "workloads/plan_config.hpp"

namespace ridge::cli {

/// `ridge describe plan`: the keys of a plan study's `plan:` block.
void describe_plan(std::string& text, nlohmann::json& j) {
  Table t({"key", "default", "meaning"});
  for (const auto& k : workloads::plan_keys()) {
    t.row({k.key, k.fallback, k.meaning});
    j.push_back({{"key", k.key}, {"default", k.fallback}, {"meaning", k.meaning}});
  }
  text = "study.plan: parallel-layout planning (ridge plan, docs/planning.md)\n" + t.str();
}

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Nothing fits: a config error at the plan block listing the closest layouts and what they lack.
[[noreturn]] void no_fit(const workloads::PlanStudy& study, const workloads::PlanResult& r) {
  bool host_short = false;
  for (const auto& m : r.misses) host_short |= m.memory_bytes <= m.hbm_bytes;
  std::string msg = fmt::format(
      "no layout fits: every one of the {} searched needs more than {:.1f} GiB per GPU{}; the "
      "closest:",
      r.enumerated, r.misses.empty() ? 0.0 : r.misses.front().hbm_bytes / kGiB,
      host_short ? " (or, offloading, more host memory than a node has)" : "");
  for (const auto& m : r.misses)
    msg += m.memory_bytes <= m.hbm_bytes  // an offload layout whose host is short
               ? fmt::format("\n  {}: {:.1f} GiB per GPU; {}", workloads::layout_name(m.layout),
                             m.memory_bytes / kGiB, m.help)
               : fmt::format("\n  {}: {:.1f} GiB per GPU, {:.1f} GiB over; {}",
                             workloads::layout_name(m.layout), m.memory_bytes / kGiB,
                             (m.memory_bytes - m.hbm_bytes) / kGiB, m.help);
  hw::ConfigError e = study.at;
  e.message = msg;
  throw hw::ConfigException({e});
}

}  // namespace

void register_plan(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "plan",
      "search parallel layouts (TP x CP x PP x DP x EP x micro-batch x recompute x ZeRO/FSDP x "
      "schedule) for a model on a system: top-k, why each ranks there, will it fit");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<std::string>();
  auto csv = std::make_shared<std::string>();
  auto svg = std::make_shared<std::string>();
  auto top_k = std::make_shared<int>(0);
  auto threads = std::make_shared<int>(0);
  auto rank_timeout = std::make_shared<double>(60);
  cmd->add_option("study", *path,
                  "plan study (a study with a plan: block), e.g. "
                  "configs/studies/plan-gpt3-175b-1024xh100.yaml")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--json", *json, "write the plan as JSON to this file");
  cmd->add_option("--csv", *csv, "write the top-k table as CSV to this file");
  cmd->add_option("--svg", *svg, "write the Pareto front (SVG) to this file");
  cmd->add_option("--top-k", *top_k, "layouts re-simulated and shown (overrides plan.top_k)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("-j,--threads", *threads,
                  "threads for the top-k simulations (0: one per core); under mpirun they are "
                  "spread over the MPI ranks instead")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--rank-timeout", *rank_timeout,
                  "MPI: seconds of silence after which a worker rank is declared lost")
      ->check(finite_in(1.0, 86400.0));
  cmd->callback([&action, path, json, csv, svg, top_k, threads, rank_timeout] {
    action = [=] {
      for (const std::string* p : {json.get(), csv.get(), svg.get()})
        if (!p->empty()) check_output_target(*p);
      workloads::PlanStudy study = workloads::load_plan_study(*path);
      if (*top_k > 0) study.plan.top_k = *top_k;
      std::unique_ptr<MpiSession> mpi;
      if (started_by_mpirun() && mpi_built()) mpi = std::make_unique<MpiSession>();
      if (study.serve) {
        if (mpi && mpi->rank() != 0) return 0;  // a serving plan runs on rank 0 alone
        if (!svg->empty())
          throw std::invalid_argument("--svg: a serving plan has no Pareto plot (use --csv)");
        if (*top_k > 0) study.serve->top_k = *top_k;
        const workloads::ServePlanResult sr = workloads::run_serve_plan(*study.serve);
        std::vector<std::pair<std::string, std::string>> files = study.files;
        for (const auto& f : study.serve->study.files) files.push_back(f);
        nlohmann::json j = workloads::serve_plan_json(sr);
        j["study"] = *path;
        j["provenance"] = provenance(files);
        OutputSet outputs;
        if (!json->empty()) outputs.add(*json, j.dump(2) + "\n");
        if (!csv->empty()) outputs.add(*csv, workloads::serve_plan_csv(sr));
        outputs.commit();
        std::cout << workloads::serve_plan_text(sr) << "\n" << provenance_text(files);
        return 0;
      }
      const workloads::ModelConfig model = workloads::load_model_config(study.model_path);
      const hw::SystemSpec sys = hw::find_system(study.plan.system);
      // The top-k simulations, the plan's expensive part, as independent points: on threads, or
      // on MPI ranks (every rank searches, deterministically, and rank 0 alone writes).
      const workloads::TransformerConfig& tm = model.transformer();
      const workloads::PlanSimulateMany many =
          [&](const std::vector<workloads::ParallelOptions>& layouts) {
            std::vector<workloads::PlanSim> sims(layouts.size());
            std::vector<std::size_t> todo(layouts.size());
            for (std::size_t i = 0; i < todo.size(); ++i) todo[i] = i;
            const ComputeFn compute = [&](std::size_t i) {
              return workloads::plan_sim_encode(
                  workloads::plan_simulate(tm, layouts[i], sys, study.plan.mode));
            };
            std::string failure;
            const ResultFn on_result = [&](const PointOutcome& o) {
              if (o.ok)
                sims[o.index] = workloads::plan_sim_decode(o.payload);
              else if (failure.empty())
                failure = o.payload;
            };
            const PointRunSummary sum =
                mpi ? mpi->run(todo, compute, on_result, *rank_timeout)
                    : run_points_threads(todo, compute, on_result, *threads);
            if (mpi && mpi->rank() != 0) return sims;  // workers: rank 0 has the results
            if (!sum.lost.empty())
              throw std::runtime_error(
                  fmt::format("plan: {} of the top-k simulations were lost with their MPI rank",
                              sum.lost.size()));
            if (!failure.empty())
              throw std::runtime_error("plan: a top-k simulation failed: " + failure);
            return sims;
          };
      const workloads::PlanResult r = workloads::run_plan(tm, study.plan, sys, many);
      if (mpi && mpi->rank() != 0) return 0;
      if (r.top.empty()) {
        if (!r.misses.empty()) no_fit(study, r);
        hw::ConfigError e = study.at;
        e.message =
            fmt::format("{} layouts fit, none within max_step_time ({} s by the fast evaluator)",
                        r.evaluated, study.plan.max_step_s);
        throw hw::ConfigException({e});
      }
      std::vector<std::pair<std::string, std::string>> files = study.files;
      for (const auto& f : model.files) files.push_back(f);
      for (const auto& f : sys.files) files.push_back(f);
      nlohmann::json j = workloads::plan_report_json(r);
      j["study"] = *path;
      j["provenance"] = provenance(files);
      OutputSet outputs;
      if (!json->empty()) outputs.add(*json, j.dump(2) + "\n");
      if (!csv->empty()) outputs.add(*csv, workloads::plan_report_csv(r));
      if (!svg->empty()) outputs.add(*svg, workloads::plan_svg(r));
      outputs.commit();
      std::cout << workloads::plan_report_text(r) << "\n" << provenance_text(files);
      return 0;
    };
  });
}

}  // namespace ridge::cli
