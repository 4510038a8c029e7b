// `ridge system list` and `ridge system show NAME`: the shipped systems and their derived figures.
#include <fmt/format.h>

#include <filesystem>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/system_loader.hpp"

namespace ridge::cli {

nlohmann::json system_json(const hw::SystemSpec& s) {
  const hw::SystemFigures f = hw::derive_figures(s);
  const hw::NodeSpec& n = s.node;
  nlohmann::json j;
  j["name"] = s.name;
  j["aliases"] = s.aliases;
  j["description"] = s.description;
  j["nodes"] = s.nodes;
  j["node"] = {{"gpu", n.gpu.name},
               {"gpus", n.gpus},
               {"cpu", std::string(hw::cpu_vendor_name(n.cpu))},
               {"fabric", std::string(hw::intra_fabric_name(n.intra))},
               {"nvlink",
                {{"generation", n.nvlink.generation},
                 {"links", n.nvlink.links},
                 {"bandwidth_bytes_per_s_per_direction", n.nvlink.bandwidth},
                 {"latency_s", n.nvlink.latency_s},
                 {"data_efficiency", n.nvlink.data_efficiency},
                 {"switch_generation", n.nvlink.switch_generation},
                 {"switch_planes", n.nvlink.switch_planes},
                 {"multicast", n.nvlink.multicast},
                 {"domain_gpus", n.nvlink.domain_gpus}}},
               {"pcie",
                {{"generation", n.pcie.generation},
                 {"bandwidth_bytes_per_s_per_direction", n.pcie.bandwidth},
                 {"latency_s", n.pcie.latency_s},
                 {"lanes_per_gpu", n.pcie.lanes_per_gpu},
                 {"lanes", n.pcie.lanes}}},
               {"nics",
                {{"count", n.nics.count},
                 {"bandwidth_bytes_per_s_per_direction", n.nics.bandwidth},
                 {"latency_s", n.nics.latency_s},
                 {"data_efficiency", n.nics.data_efficiency},
                 {"lanes", n.nics.lanes}}},
               {"host", n.host.present() ? nlohmann::json{{"memory_bytes", n.host.memory},
                                                          {"memory_bandwidth_bytes_per_s",
                                                           n.host.memory_bandwidth},
                                                          {"cpu_sockets", n.host.cpu_sockets},
                                                          {"cpu_cores", n.host.cpu_cores}}
                                         : nlohmann::json(nullptr)}};
  j["network"] = {{"kind", std::string(hw::network_kind_name(s.network.kind))},
                  {"leaf_radix", s.network.leaf_radix},
                  {"spine_radix", s.network.spine_radix},
                  {"oversubscription", s.network.oversubscription},
                  {"switch_latency_s", s.network.switch_latency_s},
                  {"in_network_reduction", s.network.in_network_reduction}};
  j["nccl"] = {{"version", s.nccl.version},
               {"channels", s.nccl.channels},
               {"channel_bw_intra_bytes_per_s", s.nccl.channel_bw_intra},
               {"channel_bw_inter_bytes_per_s", s.nccl.channel_bw_inter},
               {"nvls_channels", s.nccl.nvls_channels}};
  j["derived"] = {{"total_gpus", f.total_gpus},
                  {"nvlink_injection_per_gpu_bytes_per_s", f.nvlink_per_gpu},
                  {"scale_out_injection_per_gpu_bytes_per_s", f.scale_out_per_gpu},
                  {"scale_out_injection_per_node_bytes_per_s", f.scale_out_per_node},
                  {"bisection_bytes_per_s", f.bisection},
                  {"leaves_per_rail", f.leaves_per_rail},
                  {"nodes_per_leaf", f.nodes_per_leaf},
                  {"spines", f.spines}};
  nlohmann::json src = nlohmann::json::object();
  for (const auto& [path, s2] : s.sources) src[path] = s2;
  j["sources"] = src;
  return j;
}

namespace {

std::string system_text(const hw::SystemSpec& s) {
  const hw::SystemFigures f = hw::derive_figures(s);
  const hw::NodeSpec& n = s.node;
  std::string out = fmt::format("{}: {}\n", s.name, s.description);
  out += fmt::format("  {} node(s) x {} {} = {} GPUs; host CPU {}\n", s.nodes, n.gpus, n.gpu.name,
                     f.total_gpus, hw::cpu_vendor_name(n.cpu));
  if (n.intra == hw::IntraFabric::kNvSwitch) {
    out += fmt::format(
        "  NVLink {}: {} links, {} per GPU per direction, {} per hop; NVSwitch gen {} x {}{}\n",
        n.nvlink.generation, n.nvlink.links, fmt_bw(n.nvlink.bandwidth),
        fmt_time(n.nvlink.latency_s), n.nvlink.switch_generation, n.nvlink.switch_planes,
        n.nvlink.multicast ? ", NVLink SHARP (NVLS)" : "");
  } else {
    out += "  GPUs joined by PCIe switches\n";
  }
  out += fmt::format("  PCIe gen {}: {} per direction per x16 link, {} lanes for GPUs and NICs\n",
                     n.pcie.generation, fmt_bw(n.pcie.bandwidth), n.pcie.lanes);
  if (n.nics.count > 0)
    out += fmt::format("  NICs: {} x {} per direction (one rail each), {} latency\n", n.nics.count,
                       fmt_bw(n.nics.bandwidth), fmt_time(n.nics.latency_s));
  if (n.host.present())
    out += fmt::format(
        "  host: {:g} GB DRAM, {} memory bandwidth, {} CPU socket(s), {} cores (optimizer "
        "offload)\n",
        n.host.memory / 1e9, fmt_bw(n.host.memory_bandwidth), n.host.cpu_sockets, n.host.cpu_cores);
  else
    out += "  host: not given (node.host): optimizer offload is refused on this system\n";
  out += fmt::format("  network: {}", hw::network_kind_name(s.network.kind));
  if (s.network.kind == hw::NetworkKind::kRailFatTree)
    out += fmt::format(", leaf/spine radix {}/{}, oversubscription {:g}:1, {} per switch{}",
                       s.network.leaf_radix, s.network.spine_radix, s.network.oversubscription,
                       fmt_time(s.network.switch_latency_s),
                       s.network.in_network_reduction ? ", in-network reduction (SHARP)" : "");
  out += "\n";
  out += fmt::format("  NCCL {}: {} channels, {} per channel inside a node", s.nccl.version,
                     s.nccl.channels, fmt_bw(s.nccl.channel_bw_intra));
  if (s.nccl.channel_bw_inter > 0)
    out += fmt::format(", {} across nodes", fmt_bw(s.nccl.channel_bw_inter));
  out += "\nderived:\n";
  Table t({"figure", "value"});
  t.row({"GPUs", std::to_string(f.total_gpus)});
  if (f.nvlink_per_gpu > 0)
    t.row({"injection per GPU, NVLink (per direction)", fmt_bw(f.nvlink_per_gpu)});
  if (f.scale_out_per_gpu > 0) {
    t.row({"injection per GPU, across nodes (per direction)", fmt_bw(f.scale_out_per_gpu)});
    t.row({"injection per node, across nodes (per direction)", fmt_bw(f.scale_out_per_node)});
  }
  t.row({"bisection bandwidth (per direction)", fmt_bw(f.bisection)});
  if (f.leaves_per_rail > 0) {
    t.row({"nodes per leaf switch", std::to_string(f.nodes_per_leaf)});
    t.row({"leaf switches per rail", std::to_string(f.leaves_per_rail)});
    t.row({"spine switches", std::to_string(f.spines)});
  }
  out += t.str();
  out += provenance_text(s.files);
  return out;
}

}  // namespace

void describe_system_keys(std::string& text, nlohmann::json& json) {
  Table t({"key (under system:)", "type", "default", "range", "meaning"});
  for (const auto& k : hw::system_keys()) {
    const std::string type = k.type;
    std::string range;
    if (type == "integer" || type == "number")
      range = fmt::format("{:g} .. {:g}", k.lo, k.hi);
    else if (type == "bandwidth")
      range = fmt::format("{} .. {}", fmt_bw(k.lo), fmt_bw(k.hi));
    else if (type == "time")
      range = fmt::format("{} .. {}", fmt_time(k.lo), fmt_time(k.hi));
    else if (type == "bytes")
      range = fmt::format("{:g} GB .. {:g} GB", k.lo / 1e9, k.hi / 1e9);
    else if (type == "fraction")
      range = fmt::format("{:g} .. {:g}", k.lo, k.hi);
    const std::string fallback = std::string_view(k.fallback).empty() ? "(required)" : k.fallback;
    t.row({k.path, type, fallback, range, k.meaning});
    json.push_back({{"key", std::string("system.") + k.path},
                    {"type", type},
                    {"default", std::string(k.fallback)},
                    {"min", k.lo},
                    {"max", k.hi},
                    {"meaning", k.meaning}});
  }
  text =
      "A system file (configs/systems/*.yaml). Every figure needs a source: its own\n"
      "{value, source} or a `source:` in its map. Bandwidths per direction; units as\n"
      "'450 GB/s', '400 Gb/s' (bits), '0.7 us'. `base: other.yaml` overlays a file.\n" +
      t.str();
}

void register_system(CLI::App& app, Action& action) {
  auto* sys = app.add_subcommand("system", "multi-GPU systems: nodes, NVLink, NICs, network");
  sys->require_subcommand(1);
  auto* list = sys->add_subcommand("list", "the shipped systems");
  auto* list_json = add_json_flag(list);
  list->callback([&action, list_json] {
    action = [=] {
      nlohmann::json j = nlohmann::json::array();
      Table t({"name", "GPUs", "file", "description"});
      for (const auto& file : hw::list_system_config_files()) {
        const hw::SystemSpec s = hw::load_system_spec(file);
        const std::string stem = std::filesystem::path(file).stem().string();
        t.row({s.name, std::to_string(s.total_gpus()), stem, s.description});
        j.push_back({{"name", s.name},
                     {"gpus", s.total_gpus()},
                     {"file", file},
                     {"description", s.description}});
      }
      emit(list_json->count() > 0, t.str(), j);
      return 0;
    };
  });
  auto* show =
      sys->add_subcommand("show", "a system's figures with their sources, and derived figures");
  auto name = std::make_shared<std::string>();
  show->add_option("name", *name, "system name, alias or file (ridge system list)")->required();
  auto* show_json = add_json_flag(show);
  show->callback([&action, name, show_json] {
    action = [=] {
      const hw::SystemSpec s = hw::find_system(*name);
      nlohmann::json j = system_json(s);
      j["provenance"] = provenance(s.files);
      emit(show_json->count() > 0, system_text(s), j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
