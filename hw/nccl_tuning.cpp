#include "hw/nccl_tuning.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"

namespace ridge::hw {

std::string_view nccl_algo_name(NcclAlgo a) {
  switch (a) {
    case NcclAlgo::kTree:
      return "tree";
    case NcclAlgo::kRing:
      return "ring";
    case NcclAlgo::kCollNetDirect:
      return "collnet_direct";
    case NcclAlgo::kCollNetChain:
      return "collnet_chain";
    case NcclAlgo::kNvls:
      return "nvls";
    case NcclAlgo::kNvlsTree:
      return "nvls_tree";
  }
  return "?";
}

std::string_view nccl_proto_name(NcclProto p) {
  switch (p) {
    case NcclProto::kLL:
      return "ll";
    case NcclProto::kLL128:
      return "ll128";
    case NcclProto::kSimple:
      return "simple";
  }
  return "?";
}

const NcclArchCaps& NcclTuning::arch_caps(std::string_view arch_class) const {
  for (const auto& [name, c] : caps)
    if (name == arch_class) return c;
  throw std::invalid_argument(
      fmt::format("NCCL {} tuning has no caps for GPU architecture '{}'", version, arch_class));
}

namespace {
// The figure listed for an architecture class, 0 where the list has none.
double by_class(const std::vector<std::pair<std::string, double>>& list,
                std::string_view arch_class) {
  for (const auto& [name, v] : list)
    if (name == arch_class) return v;
  return 0.0;
}
}  // namespace

double NcclTuning::nvls_eff(std::string_view arch_class) const {
  return by_class(nvls_efficiency, arch_class);
}

double NcclTuning::p2p_block_rate(std::string_view arch_class) const {
  return by_class(p2p.block_rate, arch_class);
}

double NcclTuning::tree_ll128_miss_rate(std::string_view arch_class) const {
  return by_class(tree_ll128_l2_miss_rate, arch_class);
}

double NcclTuning::channel_mem_rate(std::string_view arch_class, NcclProto p) const {
  for (const auto& [name, r] : channel_memory_rate)
    if (name == arch_class) return r[static_cast<std::size_t>(p)];
  return 0.0;
}

std::string nccl_arch_class(std::string_view arch) {
  if (arch == "volta" || arch == "ampere" || arch == "ada") return "ampere";
  if (arch == "hopper") return "hopper";
  return "blackwell";
}

namespace {

template <std::size_t N>
void fill(MapReader& m, std::string_view key, double (&out)[N]) {
  const std::vector<double> v = m.quantity_list(key, Dimension::kCount, true);
  if (v.size() != N) {
    if (const ConfigNode* c = m.node().find(key))
      m.sink().add(*c, m.key_path(key), fmt::format("expected {} values, got {}", N, v.size()));
    return;
  }
  for (std::size_t i = 0; i < N; ++i) out[i] = v[i];
}
template <std::size_t N>
void fill(MapReader& m, std::string_view key, std::array<double, N>& out) {
  double tmp[N] = {};
  fill(m, key, tmp);
  for (std::size_t i = 0; i < N; ++i) out[i] = tmp[i];
}

void read_algo_table(MapReader& m, double (&out)[kNcclAlgos][kNcclProtos]) {
  for (int a = 0; a < kNcclAlgos; ++a) fill(m, nccl_algo_name(static_cast<NcclAlgo>(a)), out[a]);
  m.finish();
}

}  // namespace

NcclTuning load_nccl_tuning(const std::string& version_or_path) {
  std::string path = version_or_path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    path = (std::filesystem::path(config_dir()) / "nccl" / (version_or_path + ".yaml")).string();
  if (!std::filesystem::is_regular_file(path, ec))
    throw ConfigException(
        {{version_or_path, 0, 0, "nccl.version",
          fmt::format("no NCCL tuning constants for '{}' (configs/nccl/)", version_or_path)}});
  const LoadedConfig config = load_config_file(path);
  ErrorSink sink;
  NcclTuning t;
  t.files = config.files;
  MapReader top(config.root, "", sink, &t.sources);
  auto n = top.map("nccl");
  top.finish();
  if (n) {
    t.version = n->text("version");
    n->ignore("source");
    if (auto m = n->map("base_latency_us")) read_algo_table(*m, t.base_lat_us);
    if (auto hw = n->map("hw_latency_us")) {
      const char* classes[3] = {"nvlink", "pcie", "net"};
      for (int c = 0; c < 3; ++c)
        if (auto m = hw->map(classes[c])) read_algo_table(*m, t.hw_lat_us[c]);
      hw->finish();
    }
    if (auto caps = n->map("caps_gbps")) {
      for (const char* arch : {"ampere", "hopper", "blackwell"}) {
        if (auto m = caps->map(arch)) {
          NcclArchCaps c;
          fill(*m, "ll_max", c.ll_max);
          fill(*m, "ring_ll128", c.ring_ll128);
          fill(*m, "tree_ll128", c.tree_ll128);
          fill(*m, "tree", c.tree);
          fill(*m, "nvls_tree", c.nvls_tree);
          m->finish();
          t.caps.emplace_back(arch, c);
        }
      }
      caps->finish();
    }
    if (auto m = n->map("ll_max_multinode_gbps")) {
      fill(*m, "intel", t.ll_max_multinode_intel);
      fill(*m, "amd", t.ll_max_multinode_amd);
      m->finish();
    }
    if (auto m = n->map("net_overhead_us")) {
      t.net_overhead_intel_us = m->quantity("intel", Dimension::kCount, std::nullopt, 0, 1e3);
      t.net_overhead_amd_us = m->quantity("amd", Dimension::kCount, std::nullopt, 0, 1e3);
      m->finish();
    }
    if (auto m = n->map("nvls_efficiency")) {
      for (const char* arch : {"hopper", "blackwell"})
        t.nvls_efficiency.emplace_back(arch,
                                       m->quantity(arch, Dimension::kFraction, std::nullopt, 0, 1));
      m->finish();
    }
    t.ring_simple_plateau =
        n->quantity("ring_simple_plateau_factor", Dimension::kCount, std::nullopt, 1, 10);
    if (auto m = n->map("tree_correction")) {
      t.tree_correction[0] = m->quantity_list("ll", Dimension::kCount, true);
      t.tree_correction[1] = m->quantity_list("ll128", Dimension::kCount, true);
      t.tree_correction[2] = m->quantity_list("simple", Dimension::kCount, true);
      m->finish();
    }
    if (auto m = n->map("channel_memory_gbps")) {
      m->ignore("source");
      for (const char* arch : {"ampere", "hopper", "blackwell"})
        if (m->node().find(arch)) {
          std::array<double, kNcclProtos> v{};
          fill(*m, arch, v);
          for (double& x : v) x *= 1e9;
          t.channel_memory_rate.emplace_back(arch, v);
        }
      m->finish();
    }
    if (auto m = n->map("tree_ll128_l2_miss_gbps")) {
      m->ignore("source");
      for (const char* arch : {"ampere", "hopper", "blackwell"})
        if (m->node().find(arch))
          t.tree_ll128_l2_miss_rate.emplace_back(
              arch, 1e9 * m->quantity(arch, Dimension::kCount, std::nullopt, 0, 1e4));
      m->finish();
    }
    if (auto m = n->map("channels")) {
      m->ignore("source");
      fill(*m, "ring_max_threads", t.coll_channels.ring_max_threads);
      fill(*m, "thread_threshold", t.coll_channels.thread_threshold);
      t.coll_channels.min_traffic_per_channel =
          m->quantity("min_traffic_per_channel_bytes", Dimension::kCount, std::nullopt, 1, 1e12);
      m->finish();
    }
    if (auto m = n->map("p2p")) {
      m->ignore("source");
      t.p2p.ll_threshold =
          m->quantity("ll_threshold_bytes", Dimension::kCount, std::nullopt, 0, 1e12);
      t.p2p.nvl_chunk = m->quantity("nvl_chunk_bytes", Dimension::kCount, std::nullopt, 1, 1e12);
      t.p2p.net_chunk = m->quantity("net_chunk_bytes", Dimension::kCount, std::nullopt, 1, 1e12);
      t.p2p.pci_chunk = m->quantity("pci_chunk_bytes", Dimension::kCount, std::nullopt, 1, 1e12);
      t.p2p.net_channels_per_peer =
          static_cast<int>(m->integer("net_channels_per_peer", std::nullopt, 1, 64));
      t.p2p.max_channels = static_cast<int>(m->integer("max_channels", std::nullopt, 1, 1024));
      if (auto b = m->map("block_memory_gbps")) {
        b->ignore("source");
        for (const char* arch : {"ampere", "hopper", "blackwell"})
          if (b->node().find(arch))
            t.p2p.block_rate.emplace_back(
                arch, 1e9 * b->quantity(arch, Dimension::kCount, std::nullopt, 0, 1e4));
        b->finish();
      }
      m->finish();
    }
    if (auto m = n->map("protocols")) {
      m->ignore("source");
      fill(*m, "wire_factor", t.wire_factor);
      fill(*m, "buffer_bytes", t.buffer_bytes);
      t.steps = static_cast<int>(m->integer("steps", std::nullopt, 1, 64));
      m->finish();
    }
    n->finish();
  }
  sink.throw_if_any();
  return t;
}

}  // namespace ridge::hw
