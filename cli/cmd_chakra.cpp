// `ridge import chakra TRACE.et --out GRAPH.json`: one rank's Chakra execution trace as an
// imported graph, and `ridge export chakra GRAPH.json --out TRACE.et`: an imported graph as one
// rank's Chakra ET (chakra/chakra_et.hpp, docs/import.md).
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "chakra/chakra_et.hpp"
#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"

namespace ridge::cli {
namespace {

int import_chakra_cmd(const std::string& trace, const std::string& out, bool json) {
  const chakra::ChakraImport c = chakra::import_chakra(trace);
  nlohmann::json g = workloads::imported_json(c.run);
  g["source"]["format"] = "chakra";
  g["source"]["chakra_version"] = c.version;
  g["source"]["node_types"] = c.node_types;
  g["source"]["unknown_nodes"] = c.unknown;
  write_file_atomically(out, g.dump(1) + "\n");
  nlohmann::json j = {{"graph", out},
                      {"ops", c.run.ops.size()},
                      {"node_types", c.node_types},
                      {"unknown_nodes", c.unknown},
                      {"classes", g["classes"]},
                      {"source", g["source"]}};
  emit(json, chakra::chakra_import_text(c) + fmt::format("\nwrote {}\n", out), j);
  return 0;
}

int export_chakra_cmd(const std::string& graph, const std::string& gpu, const std::string& out,
                      bool json) {
  workloads::ImportedRun r;
  const auto ext = std::filesystem::path(graph).extension();
  if (ext == ".yaml" || ext == ".yml") {  // a `kind: graph` file, timed as `ridge run` times it
    const workloads::GraphFile f = workloads::load_graph_yaml(graph);
    r = chakra::imported_from_graph_yaml(f, hw::find_gpu(gpu.empty() ? f.gpu : gpu), graph);
  } else {
    std::ifstream in(graph);
    if (!in) throw std::invalid_argument("export chakra: cannot read " + graph);
    const nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    if (doc.is_discarded()) throw std::invalid_argument(graph + ": not JSON");
    r = workloads::imported_from_json(doc, graph);
  }
  const std::string bytes = chakra::export_chakra(r);
  write_file_atomically(out, bytes);
  nlohmann::json j = {{"trace", out}, {"nodes", r.ops.size()}, {"bytes", bytes.size()}};
  emit(json,
       fmt::format("wrote {}: Chakra ET, 1 rank, {} nodes, {} bytes\n", out, r.ops.size(),
                   bytes.size()),
       j);
  return 0;
}

}  // namespace

void register_chakra(CLI::App& app, Action& action) {
  // `import` is register_import's; chakra adds itself beside kineto.
  CLI::App* imp = app.get_subcommand("import");
  auto* ic = imp->add_subcommand("chakra",
                                 "one rank's Chakra execution trace (.et, MLCommons; "
                                 "docs/import.md)");
  auto trace = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  ic->add_option("trace", *trace, "the Chakra ET file")->required()->check(CLI::ExistingFile);
  ic->add_option("--out", *out, "the graph file to write (ridge.imported_graph/1)")->required();
  auto* ic_json = add_json_flag(ic);
  ic->callback([&action, trace, out, ic_json] {
    action = [=] { return import_chakra_cmd(*trace, *out, ic_json->count() > 0); };
  });

  auto* exp = app.add_subcommand("export", "write a graph in another tool's format");
  exp->require_subcommand(1);
  auto* ec = exp->add_subcommand(
      "chakra",
      "an imported graph (ridge.imported_graph/1) or a kind: graph YAML as one rank's Chakra ET");
  auto graph = std::make_shared<std::string>();
  auto eout = std::make_shared<std::string>();
  ec->add_option("graph", *graph, "the graph file (from ridge import, or kind: graph .yaml)")
      ->required()
      ->check(CLI::ExistingFile);
  ec->add_option("--out", *eout, "the Chakra ET file to write")->required();
  auto egpu = std::make_shared<std::string>();
  ec->add_option("--gpu", *egpu, "for a kind: graph YAML: the GPU that times it (default its own)");
  auto* ec_json = add_json_flag(ec);
  ec->callback([&action, graph, egpu, eout, ec_json] {
    action = [=] { return export_chakra_cmd(*graph, *egpu, *eout, ec_json->count() > 0); };
  });
}

}  // namespace ridge::cli
