// `ridge import kineto TRACE.json[.gz] --out GRAPH.json`: a PyTorch profiler trace as an imported
// graph (docs/import.md), and `ridge run GRAPH.json [--gpu b200]`: its measured replay,
// prediction and retargeting (workloads/imported_run.hpp).
#include <fmt/format.h>

#include <cctype>
#include <fstream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/graph_yaml.hpp"
#include "workloads/import_kineto.hpp"
#include "workloads/import_timeline.hpp"
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

int write_imported(const workloads::ImportedRun& r, const std::string& out, bool json) {
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

int import_kineto_cmd(const std::string& trace, const std::string& out, bool json) {
  return write_imported(workloads::import_kineto(trace), out, json);
}

}  // namespace

int run_imported_file(const std::string& path, const std::string& gpu, bool gpu_given,
                      const std::string& mode, bool json,
                      const std::vector<std::string>& what_ifs) {
  for (const auto& w : what_ifs) workloads::parse_what_if(w);  // a bad one before any work
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("run: cannot read " + path);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  if (doc.is_discarded()) throw std::invalid_argument(path + ": not JSON");
  const workloads::ImportedRun r = workloads::imported_from_json(doc, path);
  std::string base_name = gpu_of_device(r.device);
  if (base_name.empty()) base_name = gpu;  // unknown device: the --gpu given (default h200)
  hw::GpuSpec base = hw::find_gpu(base_name);
  std::optional<hw::GpuSpec> target;
  if (gpu_given && gpu != base_name) {
    // --gpu names the trace's own GPU (a calibrated H200 for an H200 trace): it becomes the base;
    // another GPU is the retargeting target.
    hw::GpuSpec g = hw::find_gpu(gpu);
    std::string lower = g.name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower.find(base_name) != std::string::npos)
      base = std::move(g);
    else
      target = std::move(g);
  }
  workloads::TimingMode m = workloads::TimingMode::kFast;
  if (mode == "detailed")
    m = workloads::TimingMode::kDetailed;
  else if (!mode.empty() && mode != "fast")
    throw std::invalid_argument("--mode: expected fast or detailed");
  const auto rep = workloads::run_imported(r, base, target ? &*target : nullptr, m, what_ifs);
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
  auto* tl = cmd->add_subcommand(
      "e2e-timeline",
      "a validate/e2e timeline (ridge.e2e_timeline/1: no shapes, so for measured replay only)");
  auto tl_path = std::make_shared<std::string>();
  auto tl_out = std::make_shared<std::string>();
  auto tl_part = std::make_shared<std::string>("full");
  tl->add_option("timeline", *tl_path, "the timeline file")->required()->check(CLI::ExistingFile);
  tl->add_option("--out", *tl_out, "the graph file to write")->required();
  tl->add_option("--part", *tl_part, "full (CPU + CUDA profile) or light (CUDA only)")
      ->check(CLI::IsMember({"full", "light"}));
  auto* tl_json = add_json_flag(tl);
  tl->callback([&action, tl_path, tl_out, tl_part, tl_json] {
    action = [=] {
      const workloads::ImportedRun r = workloads::import_e2e_timeline(*tl_path, *tl_part);
      return write_imported(r, *tl_out, tl_json->count() > 0);
    };
  });
}

}  // namespace ridge::cli

namespace ridge::cli {
int run_graph_yaml_file(const std::string& path, const std::string& gpu, const std::string& mode,
                        bool json, const std::vector<std::string>& what_ifs) {
  workloads::GraphFile f = workloads::load_graph_yaml(path);
  for (const auto& w : what_ifs) {
    workloads::parse_what_if(w);  // rejects a bad one before any work
    f.what_ifs.push_back(w);
  }
  if (mode == "detailed")
    f.mode = workloads::TimingMode::kDetailed;
  else if (mode == "fast")
    f.mode = workloads::TimingMode::kFast;
  else if (!mode.empty())
    throw std::invalid_argument("--mode: expected fast or detailed");
  const hw::GpuSpec g = hw::find_gpu(gpu.empty() ? f.gpu : gpu);
  const workloads::GraphRun r = workloads::run_graph(f, g);
  std::vector<std::pair<std::string, std::string>> files = f.files;
  for (const auto& x : g.files) files.push_back(x);
  nlohmann::json j = workloads::graph_run_json(f, r);
  j["graph"] = path;
  j["gpu"] = g.name;
  j["provenance"] = provenance(files);
  emit(json, workloads::graph_run_text(f, r, g.name) + "\n" + provenance_text(files), j);
  return 0;
}
}  // namespace ridge::cli

namespace ridge::cli {
namespace {
struct KeyDoc {
  const char* key;
  const char* meaning;
};
// `kind: graph` keys, as workloads/graph_yaml.cpp reads them.
constexpr KeyDoc kGraphKeys[] = {
    {"kind", "graph (required)"},
    {"question", "text printed above the report"},
    {"gpu", "GPU name or config file (default h200; `ridge run --gpu` overrides)"},
    {"mode", "kernel model: fast (default) or detailed"},
    {"kernel_gap", "time between back-to-back kernels on a stream (default: the GPU's kernel_gap)"},
    {"what_if", "list of NAME*FACTOR: a category, op kind or GPU figure sped up"},
    {"ops[].name", "required, unique; `after` refers to it"},
    {"ops[].op", "a vocabulary op timed by the model: 'gemm m=4096 n=4096 k=4096 dtype=bf16'"},
    {"ops[].time", "instead of op: a kernel of stated duration ('5 ms')"},
    {"ops[].host", "instead of op: host work of stated duration ('95 ms')"},
    {"ops[].category",
     "gemm, attention, elementwise, memory_copy, optimizer, communication "
     "(communication runs beside compute kernels)"},
    {"ops[].stream", "stream name (default: the default stream)"},
    {"ops[].after", "list of earlier ops that must end before it starts"},
    {"ops[].repeat", "launched this many times back to back (default 1)"},
    {"ops[].gap", "host time before each launch (default 0)"},
};
// ridge.imported_graph/1 op fields, as workloads/import_kineto.cpp writes them.
constexpr KeyDoc kImportKeys[] = {
    {"name", "the kernel's name as the trace gives it"},
    {"class",
     "gemm, attention, conv, elementwise, norm, softmax, reduction, copy, memset, "
     "communication, optimizer, other"},
    {"mapped", "true: `op` is a vocabulary op the model times; false: a custom op (measured time)"},
    {"node", "kernel or copy"},
    {"op", "{kind, params}: the vocabulary op, or custom from the launch configuration"},
    {"stream", "the trace's stream id"},
    {"start_ns", "measured GPU start, from the run's origin (first launch call or GPU start)"},
    {"dur_ns", "measured duration"},
    {"issue_ns", "start of the launch call (-1: none in the trace)"},
    {"host_gap_ns", "host time since the previous op's launch call started"},
    {"deps", "cross-stream dependencies (indexes of earlier ops) as the trace ordered them"},
    {"cpu_op", "innermost CPU op that launched it (aten::addmm)"},
    {"launch", "cudaLaunchKernel, cuLaunchKernelEx, cudaGraphLaunch, cudaMemcpyAsync, ..."},
    {"graph", "launched by a CUDA graph replay"},
    {"grid, block, registers, shared_bytes", "launch configuration"},
    {"detail", "bytes (memcpy/memset), collective, in_nelems, group_size (NCCL), trace_event"},
};
}  // namespace

std::string describe_import_topic(const std::string& what, nlohmann::json& j) {
  Table t({"key", "meaning"});
  const bool graph = what == "graph";
  const auto* begin = graph ? std::begin(kGraphKeys) : std::begin(kImportKeys);
  const auto* end = graph ? std::end(kGraphKeys) : std::end(kImportKeys);
  for (const auto* k = begin; k != end; ++k) {
    t.row({k->key, k->meaning});
    j.push_back({{"key", k->key}, {"meaning", k->meaning}});
  }
  return (graph ? std::string("`kind: graph` files (ridge run FILE.yaml; docs/import.md):\n")
                : std::string("ridge.imported_graph/1 ops (ridge import kineto; ridge run "
                              "GRAPH.json [--gpu b200]; docs/import.md):\n")) +
         t.str();
}
}  // namespace ridge::cli
