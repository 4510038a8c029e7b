// `ridge serve STUDY.yaml`: serve requests on one GPU (a `kind: serve` study) and report TTFT,
// TPOT and end-to-end latency percentiles, throughput, goodput, KV-cache use and capacity.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "workloads/serving.hpp"

namespace ridge::cli {

void register_serve(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "serve", "serve requests on one GPU (kind: serve study): latency percentiles, capacity");
  auto path = std::make_shared<std::string>();
  auto trace = std::make_shared<std::string>();
  auto svg = std::make_shared<std::string>();
  cmd->add_option("study", *path, "serving study, e.g. configs/studies/serve-llama3-8b-chat.yaml")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--trace", *trace,
                  "write Perfetto counters (KV use, batch size, queue length) as trace JSON");
  cmd->add_option("--svg", *svg, "write KV use, batch size and queue length over time (SVG)");
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, path, trace, svg, as_json] {
    action = [=] {
      const workloads::ServeStudy study = workloads::load_serve_study(*path);
      const workloads::ServeRun run = workloads::run_serve(study);
      std::vector<std::pair<std::string, std::string>> files = run.study.files;
      for (const auto& f : run.model.files) files.push_back(f);
      for (const auto& f : run.gpu.files) files.push_back(f);
      // Render everything first, then write: a failure leaves nothing half-written.
      std::string t, s;
      if (!trace->empty()) t = workloads::serve_trace_json(run);
      if (!svg->empty()) s = workloads::serve_svg(run);
      if (!trace->empty()) write_file_atomically(*trace, t);
      if (!svg->empty()) write_file_atomically(*svg, s);
      nlohmann::json j = workloads::serve_json(run);
      j["study"] = *path;
      j["provenance"] = provenance(files);
      emit(as_json->count() > 0, workloads::serve_text(run) + "\n" + provenance_text(files), j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
