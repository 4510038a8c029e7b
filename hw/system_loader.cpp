#include "hw/system_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>

#include "hw/gpu_loader.hpp"

namespace ridge::hw {

std::string_view intra_fabric_name(IntraFabric f) {
  return f == IntraFabric::kNvSwitch ? "nvswitch" : "pcie";
}
std::string_view network_kind_name(NetworkKind k) {
  switch (k) {
    case NetworkKind::kNone:
      return "none";
    case NetworkKind::kRailFatTree:
      return "rail_fat_tree";
    case NetworkKind::kNvlinkDomain:
      return "nvlink_domain";
  }
  return "?";
}
std::string_view cpu_vendor_name(CpuVendor c) {
  switch (c) {
    case CpuVendor::kIntel:
      return "intel";
    case CpuVendor::kAmd:
      return "amd";
    case CpuVendor::kArm:
      return "arm";
  }
  return "?";
}

const std::vector<SystemKey>& system_keys() {
  static const std::vector<SystemKey> keys = {
      {"name", "text", "", 0, 0, "the system's name"},
      {"aliases", "list", "[]", 0, 0, "other names `--system` accepts"},
      {"description", "text", "\"\"", 0, 0, "one line for `ridge system list`"},
      {"nodes", "integer", "1", 1, 1e6, "nodes in the system"},
      {"node.gpu", "text", "", 0, 0, "the GPU: a configs/hw name, alias or file"},
      {"node.gpus", "integer", "", 1, 1024, "GPUs per node"},
      {"node.cpu", "enum", "intel", 0, 0,
       "host CPU vendor: intel, amd or arm (NCCL's tuning keys multi-node LL caps and network "
       "overhead on it)"},
      {"node.fabric", "enum", "nvswitch", 0, 0,
       "how the node's GPUs reach each other: nvswitch or pcie"},
      {"node.nvlink", "map", "", 0, 0, "NVLink (required with fabric nvswitch)"},
      {"node.nvlink.generation", "integer", "", 1, 10, "NVLink generation"},
      {"node.nvlink.links", "integer", "", 1, 64, "NVLink links per GPU"},
      {"node.nvlink.bandwidth", "bandwidth", "", 1e9, 1e14,
       "per GPU per direction, all links together (line rate)"},
      {"node.nvlink.latency", "time", "", 0, 1e-4, "one hop, GPU through the switch to a GPU"},
      {"node.nvlink.data_efficiency", "fraction", "1", 0.05, 1,
       "fraction of the line rate that carries payload"},
      {"node.nvlink.switch_generation", "integer", "0", 0, 10,
       "NVSwitch generation (0: GPUs linked directly)"},
      {"node.nvlink.switch_planes", "integer", "1", 1, 64,
       "NVSwitch chips a GPU's links are spread over"},
      {"node.nvlink.multicast", "bool", "false", 0, 0,
       "NVLink SHARP: in-switch reduction and multicast (NCCL's NVLS)"},
      {"node.nvlink.domain_gpus", "integer", "0", 0, 1e6,
       "GPUs one NVLink domain spans (0: one node's)"},
      {"node.pcie.generation", "integer", "", 1, 8, "PCIe generation"},
      {"node.pcie.bandwidth", "bandwidth", "", 1e8, 1e13,
       "per direction of one GPU's or NIC's link"},
      {"node.pcie.latency", "time", "", 0, 1e-4, "one traversal of the switch tree"},
      {"node.pcie.lanes_per_gpu", "integer", "16", 1, 64, "lanes each GPU takes"},
      {"node.pcie.lanes", "integer", "", 1, 4096,
       "lanes the node's PCIe switches give GPUs and NICs together"},
      {"node.pcie.gpus_per_switch", "integer", "0", 0, 1024,
       "GPUs under one PCIe switch (fabric pcie; 0: all under one)"},
      {"node.nics.count", "integer", "0", 0, 64, "NICs for GPU traffic per node (one per rail)"},
      {"node.nics.bandwidth", "bandwidth", "", 1e8, 1e13, "per NIC per direction"},
      {"node.nics.latency", "time", "", 0, 1e-4, "NIC to NIC through one switch, less the switch"},
      {"node.nics.data_efficiency", "fraction", "1", 0.05, 1,
       "payload fraction of the line rate (packet headers)"},
      {"node.nics.lanes", "integer", "16", 1, 64, "PCIe lanes each NIC takes"},
      {"node.host", "map", "(none)", 0, 0,
       "the node's host, for optimizer offload; without it `offload:` is refused"},
      {"node.host.memory", "bytes", "", 1e9, 1e15,
       "host DRAM per node (GB = 1e9 B); required when node.host is given"},
      {"node.host.memory_bandwidth", "bandwidth", "", 1e9, 1e14,
       "host DRAM bandwidth per node, all sockets together (theoretical: channels x transfer "
       "rate x 8 B); CPU Adam and the GPUs' PCIe copies share it"},
      {"node.host.cpu_sockets", "integer", "1", 1, 64, "CPU sockets per node"},
      {"node.host.cpu_cores", "integer", "0", 0, 1 << 20, "CPU cores per node, all sockets"},
      {"network.kind", "enum", "none", 0, 0, "none, rail_fat_tree or nvlink_domain"},
      {"network.leaf_radix", "integer", "", 2, 4096, "ports per leaf switch"},
      {"network.spine_radix", "integer", "", 2, 4096, "ports per spine switch"},
      {"network.oversubscription", "number", "1", 1, 64,
       "leaf downlinks : uplinks (1 = non-blocking)"},
      {"network.switch_latency", "time", "", 0, 1e-4, "one switch traversal"},
      {"network.in_network_reduction", "bool", "false", 0, 0,
       "SHARP reduction in the switches (NCCL's CollNet)"},
      {"nccl.version", "text", "2.28.9", 0, 0, "NCCL whose tuning constants apply (configs/nccl/)"},
      {"nccl.channels", "integer", "", 1, 64, "channels for ring and tree (one CUDA block each)"},
      {"nccl.channel_bw_intra", "bandwidth", "", 1e8, 1e13,
       "per channel inside a node (NCCL's bwIntra, from its topology search)"},
      {"nccl.channel_bw_inter", "bandwidth", "0 B/s", 0, 1e13,
       "per channel across nodes (NCCL's bwInter)"},
      {"nccl.nvls_channels", "integer", "0", 0, 64, "channels for NVLS (0: as channels)"},
  };
  return keys;
}

namespace {

const SystemKey& key_decl(std::string_view path) {
  for (const auto& k : system_keys())
    if (path == k.path) return k;
  throw std::logic_error(fmt::format("system key '{}' is not declared", path));
}

std::optional<double> fallback_of(const SystemKey& k, Dimension dim) {
  if (std::string_view(k.fallback).empty()) return std::nullopt;
  return parse_quantity(k.fallback, dim).value;
}

// Reads the figure at `leaf` of `m` (whose path below `system:` is `prefix`) with the table's
// default and range.
double figure(MapReader& m, std::string_view prefix, std::string_view leaf, Dimension dim) {
  const SystemKey& k = key_decl(fmt::format("{}.{}", prefix, leaf));
  return m.quantity(leaf, dim, fallback_of(k, dim), k.lo, k.hi);
}
int integer(MapReader& m, std::string_view prefix, std::string_view leaf) {
  const std::string path = prefix.empty() ? std::string(leaf) : fmt::format("{}.{}", prefix, leaf);
  const SystemKey& k = key_decl(path);
  std::optional<long long> fb;
  if (!std::string_view(k.fallback).empty()) fb = std::stoll(k.fallback);
  return static_cast<int>(
      m.integer(leaf, fb, static_cast<long long>(k.lo), static_cast<long long>(k.hi)));
}

// An enum value with "did you mean" over the allowed names.
template <typename E>
E choice(MapReader& m, std::string_view leaf, E fallback,
         const std::vector<std::pair<std::string_view, E>>& names) {
  if (!m.has(leaf)) {
    m.ignore(leaf);
    return fallback;
  }
  const std::string v = m.text(leaf);
  for (const auto& [n, e] : names)
    if (v == n) return e;
  std::string list, best;
  int best_d = 1 << 30;
  for (const auto& [n, e] : names) {
    list += (list.empty() ? "" : ", ") + std::string(n);
    const int d = edit_distance(v, n);
    if (d < best_d) best_d = d, best = n;
  }
  const std::string hint = best_d <= 3 ? fmt::format(" (did you mean '{}'?)", best) : std::string();
  m.sink().add(*m.node().find(leaf), m.key_path(leaf),
               fmt::format("unknown value '{}'{}; expected one of: {}", v, hint, list));
  return fallback;
}

}  // namespace

SystemSpec read_system_spec(const LoadedConfig& config) {
  ErrorSink sink;
  SystemSpec s;
  s.files = config.files;
  MapReader top(config.root, "", sink, &s.sources);
  auto sys = top.map("system");
  top.finish();
  if (!sys) {
    sink.throw_if_any();
    return s;
  }
  s.name = sys->text("name");
  s.aliases = sys->text_list("aliases");
  s.description = sys->text("description", "");
  sys->ignore("source");
  s.nodes = integer(*sys, "", "nodes");

  const ConfigNode* gpu_at = nullptr;
  if (auto node = sys->map("node")) {
    NodeSpec& n = s.node;
    node->ignore("source");
    gpu_at = node->node().find("gpu");
    n.gpu_name = node->text("gpu");
    n.gpus = integer(*node, "node", "gpus");
    n.cpu = choice<CpuVendor>(
        *node, "cpu", CpuVendor::kIntel,
        {{"intel", CpuVendor::kIntel}, {"amd", CpuVendor::kAmd}, {"arm", CpuVendor::kArm}});
    n.intra =
        choice<IntraFabric>(*node, "fabric", IntraFabric::kNvSwitch,
                            {{"nvswitch", IntraFabric::kNvSwitch}, {"pcie", IntraFabric::kPcie}});
    if (auto nv = node->map("nvlink", n.intra == IntraFabric::kNvSwitch)) {
      nv->ignore("source");
      const std::string p = "node.nvlink";
      n.nvlink.generation = integer(*nv, p, "generation");
      n.nvlink.links = integer(*nv, p, "links");
      n.nvlink.bandwidth = figure(*nv, p, "bandwidth", Dimension::kBandwidth);
      n.nvlink.latency_s = figure(*nv, p, "latency", Dimension::kTime);
      n.nvlink.data_efficiency = figure(*nv, p, "data_efficiency", Dimension::kFraction);
      n.nvlink.switch_generation = integer(*nv, p, "switch_generation");
      n.nvlink.switch_planes = integer(*nv, p, "switch_planes");
      n.nvlink.multicast = nv->boolean("multicast", false);
      n.nvlink.domain_gpus = integer(*nv, p, "domain_gpus");
      if (n.nvlink.multicast && n.nvlink.switch_generation < 3) {
        sink.add(*nv->node().find("multicast"), nv->key_path("multicast"),
                 "NVLink multicast (NVLS) needs NVSwitch generation 3 or later");
      }
      nv->finish();
    }
    if (auto pc = node->map("pcie")) {
      pc->ignore("source");
      const std::string p = "node.pcie";
      n.pcie.generation = integer(*pc, p, "generation");
      n.pcie.bandwidth = figure(*pc, p, "bandwidth", Dimension::kBandwidth);
      n.pcie.latency_s = figure(*pc, p, "latency", Dimension::kTime);
      n.pcie.lanes_per_gpu = integer(*pc, p, "lanes_per_gpu");
      n.pcie.lanes = integer(*pc, p, "lanes");
      n.pcie.gpus_per_switch = integer(*pc, p, "gpus_per_switch");
      pc->finish();
    }
    const bool has_nics = node->has("nics");
    if (auto nic = node->map("nics", false)) {
      nic->ignore("source");
      const std::string p = "node.nics";
      n.nics.count = integer(*nic, p, "count");
      n.nics.bandwidth = figure(*nic, p, "bandwidth", Dimension::kBandwidth);
      n.nics.latency_s = figure(*nic, p, "latency", Dimension::kTime);
      n.nics.data_efficiency = figure(*nic, p, "data_efficiency", Dimension::kFraction);
      n.nics.lanes = integer(*nic, p, "lanes");
      const long long need = static_cast<long long>(n.gpus) * n.pcie.lanes_per_gpu +
                             static_cast<long long>(n.nics.count) * n.nics.lanes;
      if (n.pcie.lanes > 0 && need > n.pcie.lanes) {
        // `count` may be absent (0 NICs: the GPUs alone overflow the lanes): then the place is
        // the `nics` map itself (found by fuzz_config: this dereferenced the missing key).
        const ConfigNode* count = nic->node().find("count");
        sink.add(count ? *count : nic->node(), nic->key_path("count"),
                 fmt::format("{} NICs x {} lanes + {} GPUs x {} lanes = {} PCIe lanes, but the "
                             "node has {} (node.pcie.lanes)",
                             n.nics.count, n.nics.lanes, n.gpus, n.pcie.lanes_per_gpu, need,
                             n.pcie.lanes));
      }
      nic->finish();
    }
    (void)has_nics;
    if (auto h = node->map("host", false)) {
      h->ignore("source");
      const std::string p = "node.host";
      n.host.memory = figure(*h, p, "memory", Dimension::kBytes);
      n.host.memory_bandwidth = figure(*h, p, "memory_bandwidth", Dimension::kBandwidth);
      n.host.cpu_sockets = integer(*h, p, "cpu_sockets");
      n.host.cpu_cores = integer(*h, p, "cpu_cores");
      h->finish();
    }
    node->finish();
  }

  if (auto net = sys->map("network", false)) {
    net->ignore("source");
    NetworkSpec& w = s.network;
    w.kind = choice<NetworkKind>(*net, "kind", NetworkKind::kNone,
                                 {{"none", NetworkKind::kNone},
                                  {"rail_fat_tree", NetworkKind::kRailFatTree},
                                  {"nvlink_domain", NetworkKind::kNvlinkDomain}});
    const bool tree = w.kind == NetworkKind::kRailFatTree;
    if (tree || net->has("leaf_radix")) w.leaf_radix = integer(*net, "network", "leaf_radix");
    if (tree || net->has("spine_radix")) w.spine_radix = integer(*net, "network", "spine_radix");
    w.oversubscription = figure(*net, "network", "oversubscription", Dimension::kCount);
    if (w.kind != NetworkKind::kNone || net->has("switch_latency"))
      w.switch_latency_s = figure(*net, "network", "switch_latency", Dimension::kTime);
    w.in_network_reduction = net->boolean("in_network_reduction", false);
    net->finish();
  }
  if (auto nc = sys->map("nccl")) {
    nc->ignore("source");
    s.nccl.version = nc->text("version", "2.28.9");
    s.nccl.channels = integer(*nc, "nccl", "channels");
    s.nccl.channel_bw_intra = figure(*nc, "nccl", "channel_bw_intra", Dimension::kBandwidth);
    s.nccl.channel_bw_inter = figure(*nc, "nccl", "channel_bw_inter", Dimension::kBandwidth);
    s.nccl.nvls_channels = integer(*nc, "nccl", "nvls_channels");
    nc->finish();
  }

  // Consistency between sections, reported at the key that would mend them where it is written.
  const ConfigNode* net_node = sys->node().find("network");
  const ConfigNode* kind_node = net_node ? net_node->find("kind") : nullptr;
  const ConfigNode& at = kind_node ? *kind_node : net_node ? *net_node : sys->node();
  if (s.nodes > 1 && s.network.kind == NetworkKind::kNone)
    sink.add(at, sys->key_path("network.kind"),
             fmt::format("{} nodes need a network (rail_fat_tree or nvlink_domain)", s.nodes));
  if (s.network.kind == NetworkKind::kRailFatTree && s.node.nics.count == 0)
    sink.add(at, sys->key_path("node.nics.count"), "a rail fat tree needs NICs in every node");
  if (s.network.kind == NetworkKind::kNvlinkDomain &&
      (s.node.nvlink.domain_gpus < s.total_gpus() || s.node.intra != IntraFabric::kNvSwitch))
    sink.add(at, sys->key_path("node.nvlink.domain_gpus"),
             fmt::format("an nvlink_domain network needs node.nvlink.domain_gpus >= the "
                         "system's {} GPUs",
                         s.total_gpus()));
  if (s.network.kind == NetworkKind::kRailFatTree && s.network.leaf_radix >= 2) {
    const int down = static_cast<int>(std::floor(s.network.leaf_radix * s.network.oversubscription /
                                                 (1.0 + s.network.oversubscription)));
    if (down < 1) sink.add(at, sys->key_path("network.leaf_radix"), "no leaf port left for a node");
  }
  sys->finish();

  // The GPU, last, so that its own problems come after the system file's.
  if (!s.node.gpu_name.empty()) {
    try {
      s.node.gpu = find_gpu(s.node.gpu_name);
      s.files.insert(s.files.end(), s.node.gpu.files.begin(), s.node.gpu.files.end());
    } catch (const ConfigException& e) {
      const ConfigNode& where = gpu_at ? *gpu_at : config.root;
      std::string msg = e.errors().empty() ? "cannot load" : e.errors().front().message;
      if (!e.errors().empty() && e.errors().front().path != "--gpu")
        msg = "the GPU config has problems: " + e.errors().front().str();
      sink.add(where, "system.node.gpu", fmt::format("unknown GPU '{}': {}", s.node.gpu_name, msg));
    }
  }
  sink.throw_if_any();
  return s;
}

SystemSpec load_system_spec(const std::string& path) {
  return read_system_spec(load_config_file(path));
}

std::vector<std::string> list_system_config_files() {
  return list_config_files("systems");
}

std::string resolve_system_config(const std::string& name_or_path) {
  return resolve_named_config(name_or_path, "systems", "system", "--system", "system");
}

SystemSpec find_system(const std::string& name_or_path) {
  return load_system_spec(resolve_system_config(name_or_path));
}

std::string check_gpu_count(const SystemSpec& s, long long gpus) {
  if (gpus < 1) return fmt::format("--gpus {}: at least 1 GPU", gpus);
  if (gpus > s.total_gpus())
    return fmt::format("--gpus {}: {} has {} GPUs ({} nodes x {})", gpus, s.name, s.total_gpus(),
                       s.nodes, s.node.gpus);
  if (gpus > s.node.gpus && gpus % s.node.gpus != 0)
    return fmt::format("--gpus {}: past one node a job takes whole nodes of {} GPUs (try {} or {})",
                       gpus, s.node.gpus, gpus / s.node.gpus * s.node.gpus,
                       (gpus / s.node.gpus + 1) * s.node.gpus);
  return {};
}

SystemFigures derive_figures(const SystemSpec& s) {
  SystemFigures f;
  f.total_gpus = s.total_gpus();
  const NodeSpec& n = s.node;
  f.nvlink_per_gpu = n.intra == IntraFabric::kNvSwitch ? n.nvlink.bandwidth : 0.0;
  f.scale_out_per_node = n.nics.count * n.nics.bandwidth;
  f.scale_out_per_gpu = n.gpus > 0 ? f.scale_out_per_node / n.gpus : 0.0;
  // Inside one node (or one NVLink domain) a non-blocking switch: half the GPUs send to the
  // other half at their full injection rate. PCIe: the switch tree's uplinks bound it.
  const double intra_bisection = n.intra == IntraFabric::kNvSwitch
                                     ? (n.gpus / 2) * n.nvlink.bandwidth
                                     : (n.gpus / 2) * n.pcie.bandwidth;
  switch (s.network.kind) {
    case NetworkKind::kNone:
      f.bisection = intra_bisection;
      break;
    case NetworkKind::kNvlinkDomain:
      f.bisection = (f.total_gpus / 2) * n.nvlink.bandwidth;
      break;
    case NetworkKind::kRailFatTree: {
      const double o = s.network.oversubscription;
      f.nodes_per_leaf =
          std::max(1, static_cast<int>(std::floor(s.network.leaf_radix * o / (1.0 + o))));
      f.leaves_per_rail = (s.nodes + f.nodes_per_leaf - 1) / f.nodes_per_leaf;
      const int uplinks = f.nodes_per_leaf == s.network.leaf_radix
                              ? 0
                              : std::max(1, static_cast<int>(std::floor(f.nodes_per_leaf / o)));
      f.leaf_uplink_per_rail = uplinks * n.nics.bandwidth;
      const int leaves = f.leaves_per_rail * n.nics.count;
      f.spines = f.leaves_per_rail > 1 && s.network.spine_radix > 0
                     ? (leaves * uplinks + s.network.spine_radix - 1) / s.network.spine_radix
                     : 0;
      // Half the nodes send to the other half: each node's NICs at line rate, unless the cut
      // crosses leaf uplinks that carry less (oversubscription).
      const double nic_half = (s.nodes / 2) * f.scale_out_per_node;
      f.bisection = f.leaves_per_rail > 1 ? nic_half / o : nic_half;
      if (s.nodes == 1) f.bisection = intra_bisection;
      break;
    }
  }
  return f;
}

}  // namespace ridge::hw
