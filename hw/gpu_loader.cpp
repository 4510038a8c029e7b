#include "hw/gpu_loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "hw/model_params.hpp"

namespace ridge::hw {

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::kFp64:
      return "fp64";
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kFp16:
      return "fp16";
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp4:
      return "fp4";
    case Precision::kInt8:
      return "int8";
  }
  return "?";
}

double GpuSpec::matmul_peak(Precision p) const {
  if (auto it = compute.tensor_dense.find(p); it != compute.tensor_dense.end() && it->second > 0)
    return it->second;
  if (auto it = compute.vector.find(p); it != compute.vector.end()) return it->second;
  return 0.0;
}

double GpuSpec::param(const std::string& name) const {
  if (auto it = model.find(name); it != model.end()) return it->second;
  const ModelParamDecl* d = find_model_param(name);
  return d ? d->fallback : 0.0;
}

namespace {

void read_rates(std::optional<MapReader> m, std::map<Precision, double>& out,
                std::initializer_list<Precision> allowed) {
  if (!m) return;
  for (Precision p : allowed) {
    const std::string key(precision_name(p));
    if (m->has(key))
      out[p] = m->quantity(key, Dimension::kFlopRate, std::nullopt, 1e9, 1e18);
    else
      m->ignore(key);
  }
  m->finish();
}

}  // namespace

GpuSpec read_gpu_spec(const LoadedConfig& config) {
  ErrorSink sink;
  GpuSpec g;
  g.files = config.files;
  MapReader top(config.root, "", sink, &g.sources);
  auto gpu = top.map("gpu");
  top.finish();
  if (!gpu) {
    sink.throw_if_any();
    return g;
  }
  g.name = gpu->text("name");
  g.aliases = gpu->text_list("aliases");
  g.architecture = gpu->text("architecture");
  g.compute_capability = gpu->text("compute_capability");
  gpu->ignore("description");

  if (auto sm = gpu->map("sm")) {
    SmSpec& s = g.sm;
    s.count = static_cast<int>(sm->integer("count", std::nullopt, 1, 1024));
    s.warp_size = static_cast<int>(sm->integer("warp_size", 32, 1, 128));
    s.max_threads_per_sm =
        static_cast<int>(sm->integer("max_threads_per_sm", std::nullopt, 32, 8192));
    s.max_warps_per_sm = static_cast<int>(sm->integer("max_warps_per_sm", std::nullopt, 1, 256));
    s.max_blocks_per_sm = static_cast<int>(sm->integer("max_blocks_per_sm", std::nullopt, 1, 256));
    s.max_threads_per_block =
        static_cast<int>(sm->integer("max_threads_per_block", std::nullopt, 32, 8192));
    s.registers_per_sm =
        static_cast<int>(sm->integer("registers_per_sm", std::nullopt, 1024, 1 << 20));
    s.max_registers_per_block =
        static_cast<int>(sm->integer("max_registers_per_block", std::nullopt, 1024, 1 << 20));
    s.max_registers_per_thread =
        static_cast<int>(sm->integer("max_registers_per_thread", std::nullopt, 16, 1024));
    s.register_allocation_unit =
        static_cast<int>(sm->integer("register_allocation_unit", std::nullopt, 1, 4096));
    s.shared_memory_per_sm =
        sm->quantity("shared_memory_per_sm", Dimension::kBytes, std::nullopt, 1024, 64.0 * 1048576);
    s.max_shared_memory_per_block = sm->quantity("max_shared_memory_per_block", Dimension::kBytes,
                                                 std::nullopt, 1024, 64.0 * 1048576);
    s.default_shared_memory_per_block = sm->quantity(
        "default_shared_memory_per_block", Dimension::kBytes, 49152.0, 1024, 64.0 * 1048576);
    s.reserved_shared_memory_per_block =
        sm->quantity("reserved_shared_memory_per_block", Dimension::kBytes, std::nullopt, 0, 65536);
    s.shared_memory_allocation_unit =
        sm->quantity("shared_memory_allocation_unit", Dimension::kBytes, std::nullopt, 1, 65536);
    s.shared_memory_carveouts =
        sm->quantity_list("shared_memory_carveouts", Dimension::kBytes, true);
    s.l1_shared_per_sm =
        sm->quantity("l1_shared_per_sm", Dimension::kBytes, std::nullopt, 1024, 64.0 * 1048576);
    s.fp32_lanes_per_sm = static_cast<int>(sm->integer("fp32_lanes_per_sm", std::nullopt, 1, 4096));
    s.schedulers_per_sm = static_cast<int>(sm->integer("schedulers_per_sm", std::nullopt, 1, 16));
    if (s.max_warps_per_sm * s.warp_size != s.max_threads_per_sm && s.warp_size > 0) {
      sink.add(sm->node(), sm->key_path("max_warps_per_sm"),
               fmt::format("inconsistent: {} warps x {} threads != max_threads_per_sm {}",
                           s.max_warps_per_sm, s.warp_size, s.max_threads_per_sm));
    }
    if (s.max_shared_memory_per_block > s.shared_memory_per_sm) {
      sink.add(sm->node(), sm->key_path("max_shared_memory_per_block"),
               "inconsistent: larger than shared_memory_per_sm");
    }
    sm->finish();
  }
  if (auto c = gpu->map("clocks")) {
    g.clocks.boost_hz = c->quantity("boost", Dimension::kFrequency, std::nullopt, 1e8, 1e10);
    g.clocks.base_hz = c->quantity("base", Dimension::kFrequency, 0.0, 0.0, 1e10);
    c->finish();
  }
  if (auto m = gpu->map("memory")) {
    g.memory.l2_size = m->quantity("l2_size", Dimension::kBytes, std::nullopt, 1024, 1e12);
    g.memory.l2_bandwidth =
        m->quantity("l2_bandwidth", Dimension::kBandwidth, std::nullopt, 1e9, 1e15);
    g.memory.hbm_size = m->quantity("hbm_size", Dimension::kBytes, std::nullopt, 1e6, 1e15);
    g.memory.hbm_bandwidth =
        m->quantity("hbm_bandwidth", Dimension::kBandwidth, std::nullopt, 1e9, 1e15);
    g.memory.hbm_type = m->text("hbm_type", std::string{});
    m->finish();
  }
  if (auto c = gpu->map("compute")) {
    read_rates(c->map("vector"), g.compute.vector,
               {Precision::kFp64, Precision::kFp32, Precision::kFp16, Precision::kBf16});
    read_rates(c->map("tensor_dense"), g.compute.tensor_dense,
               {Precision::kFp64, Precision::kTf32, Precision::kFp16, Precision::kBf16,
                Precision::kFp8, Precision::kFp4, Precision::kInt8});
    read_rates(c->map("tensor_sparse", false), g.compute.tensor_sparse,
               {Precision::kTf32, Precision::kFp16, Precision::kBf16, Precision::kFp8,
                Precision::kFp4, Precision::kInt8});
    g.compute.special_function =
        c->quantity("special_function", Dimension::kFlopRate, 0.0, 0.0, 1e18);
    if (!g.compute.vector.count(Precision::kFp32)) {
      sink.add(c->node(), c->key_path("vector.fp32"), "missing required key");
    }
    c->finish();
  }
  if (auto i = gpu->map("interconnect")) {
    g.interconnect.pcie_generation =
        static_cast<int>(i->integer("pcie_generation", std::nullopt, 1, 8));
    g.interconnect.pcie_bandwidth =
        i->quantity("pcie_bandwidth", Dimension::kBandwidth, std::nullopt, 1e8, 1e13);
    g.interconnect.nvlink_links = static_cast<int>(i->integer("nvlink_links", 0, 0, 64));
    g.interconnect.nvlink_bandwidth =
        i->quantity("nvlink_bandwidth", Dimension::kBandwidth, 0.0, 0.0, 1e14);
    i->finish();
  }
  if (gpu->has("model")) {
    if (auto m = gpu->map("model")) {
      for (const auto& decl : model_param_table()) {
        const std::string key(decl.name);
        if (m->has(key)) {
          g.model[key] = m->quantity(key, decl.dim, std::nullopt, decl.lo, decl.hi);
        } else {
          m->ignore(key);
        }
      }
      // Calibration provenance is documentation for people; the loader accepts and keeps it out.
      m->ignore("calibration");
      m->finish();
    }
  }
  gpu->finish();
  sink.throw_if_any();
  return g;
}

GpuSpec load_gpu_spec(const std::string& path) {
  return read_gpu_spec(load_config_file(path));
}

std::string config_dir() {
  if (const char* env = std::getenv("RIDGE_CONFIG_DIR"); env && *env) return env;
  return RIDGE_SOURCE_CONFIG_DIR;
}

std::vector<std::string> list_config_files(const std::string& subdir) {
  std::vector<std::string> out;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(config_dir()) / subdir;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> list_gpu_config_files() {
  return list_config_files("hw");
}

namespace {
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
}  // namespace

std::string resolve_named_config(const std::string& name_or_path, const std::string& subdir,
                                 const std::string& top_key, const std::string& option,
                                 const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(name_or_path, ec)) return name_or_path;
  const std::string want = lower(name_or_path);
  const std::vector<std::string> files = list_config_files(subdir);
  std::vector<std::string> names;
  for (const auto& file : files) {
    const std::string stem = std::filesystem::path(file).stem().string();
    names.push_back(stem);
    if (lower(stem) == want) return file;
  }
  // Then names and aliases inside the files (a cheap scan; the files are small).
  for (const auto& file : files) {
    try {
      LoadedConfig c = load_config_file(file);
      const ConfigNode* top = c.root.find(top_key);
      if (!top) continue;
      if (const ConfigNode* n = top->find("name"); n && lower(n->scalar) == want) return file;
      if (const ConfigNode* a = top->find("aliases")) {
        for (const auto& item : a->items)
          if (lower(item.scalar) == want) return file;
      }
    } catch (const ConfigException&) {
      // A broken shipped file is reported when it is loaded by name, not while searching.
    }
  }
  std::string best;
  int best_d = 1 << 30;
  for (const auto& n : names) {
    const int d = edit_distance(want, lower(n));
    if (d < best_d) best_d = d, best = n;
  }
  const std::string hint = best_d <= 4 ? fmt::format(" (did you mean '{}'?)", best) : "";
  throw ConfigException(
      {{name_or_path, 0, 0, option,
        fmt::format("no such {}{}; shipped: {}", what, hint, fmt::join(names, ", "))}});
}

std::string resolve_gpu_config(const std::string& name_or_path) {
  return resolve_named_config(name_or_path, "hw", "gpu", "--gpu", "GPU config");
}

GpuSpec find_gpu(const std::string& name_or_path) {
  return load_gpu_spec(resolve_gpu_config(name_or_path));
}

}  // namespace ridge::hw
