// `ridge hw list` and `ridge hw show NAME`: the shipped GPUs and their derived figures.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/model_params.hpp"

namespace ridge::cli {

void emit(bool as_json, const std::string& text, const nlohmann::json& json) {
  if (as_json) {
    std::cout << json.dump(2) << "\n";
  } else {
    std::cout << text;
  }
}

namespace {

nlohmann::json rates_json(const std::map<hw::Precision, double>& m) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [p, v] : m) j[std::string(hw::precision_name(p))] = v;
  return j;
}

nlohmann::json spec_json(const hw::GpuSpec& g) {
  nlohmann::json j;
  j["name"] = g.name;
  j["aliases"] = g.aliases;
  j["architecture"] = g.architecture;
  j["compute_capability"] = g.compute_capability;
  const auto& s = g.sm;
  j["sm"] = {{"count", s.count},
             {"warp_size", s.warp_size},
             {"max_threads_per_sm", s.max_threads_per_sm},
             {"max_warps_per_sm", s.max_warps_per_sm},
             {"max_blocks_per_sm", s.max_blocks_per_sm},
             {"max_threads_per_block", s.max_threads_per_block},
             {"registers_per_sm", s.registers_per_sm},
             {"max_registers_per_block", s.max_registers_per_block},
             {"max_registers_per_thread", s.max_registers_per_thread},
             {"register_allocation_unit", s.register_allocation_unit},
             {"schedulers_per_sm", s.schedulers_per_sm},
             {"shared_memory_per_sm_bytes", s.shared_memory_per_sm},
             {"max_shared_memory_per_block_bytes", s.max_shared_memory_per_block},
             {"default_shared_memory_per_block_bytes", s.default_shared_memory_per_block},
             {"reserved_shared_memory_per_block_bytes", s.reserved_shared_memory_per_block},
             {"shared_memory_allocation_unit_bytes", s.shared_memory_allocation_unit},
             {"shared_memory_carveouts_bytes", s.shared_memory_carveouts},
             {"l1_shared_per_sm_bytes", s.l1_shared_per_sm},
             {"fp32_lanes_per_sm", s.fp32_lanes_per_sm}};
  j["clocks"] = {{"boost_hz", g.clocks.boost_hz}, {"base_hz", g.clocks.base_hz}};
  j["memory"] = {{"l2_size_bytes", g.memory.l2_size},
                 {"l2_bandwidth_bytes_per_s", g.memory.l2_bandwidth},
                 {"hbm_size_bytes", g.memory.hbm_size},
                 {"hbm_bandwidth_bytes_per_s", g.memory.hbm_bandwidth},
                 {"hbm_type", g.memory.hbm_type}};
  j["compute_flops_per_s"] = {{"vector", rates_json(g.compute.vector)},
                              {"tensor_dense", rates_json(g.compute.tensor_dense)},
                              {"tensor_sparse", rates_json(g.compute.tensor_sparse)},
                              {"special_function", g.compute.special_function}};
  j["interconnect"] = {
      {"pcie_generation", g.interconnect.pcie_generation},
      {"pcie_bandwidth_bytes_per_s_per_direction", g.interconnect.pcie_bandwidth},
      {"nvlink_links", g.interconnect.nvlink_links},
      {"nvlink_bandwidth_bytes_per_s_per_direction", g.interconnect.nvlink_bandwidth}};
  nlohmann::json model = nlohmann::json::object();
  for (const auto& d : hw::model_param_table())
    model[std::string(d.name)] = g.param(std::string(d.name));
  j["model"] = model;
  nlohmann::json src = nlohmann::json::object();
  for (const auto& [path, s2] : g.sources) src[path] = s2;
  j["sources"] = src;
  return j;
}

// Derived figures: where the roofs meet per precision, bytes per FLOP, the L2/HBM ratio.
nlohmann::json derived_json(const hw::GpuSpec& g) {
  nlohmann::json j;
  nlohmann::json ridge = nlohmann::json::object();
  for (const auto& [p, v] : g.compute.tensor_dense)
    ridge[std::string(hw::precision_name(p)) + "_tensor"] = v / g.memory.hbm_bandwidth;
  for (const auto& [p, v] : g.compute.vector)
    ridge[std::string(hw::precision_name(p)) + "_vector"] = v / g.memory.hbm_bandwidth;
  j["ridge_point_flop_per_byte"] = ridge;
  const double bf16 = g.matmul_peak(hw::Precision::kBf16);
  j["bytes_per_flop_bf16"] = bf16 > 0 ? g.memory.hbm_bandwidth / bf16 : 0.0;
  j["l2_to_hbm_bandwidth_ratio"] = g.memory.l2_bandwidth / g.memory.hbm_bandwidth;
  j["hbm_bytes_per_sm_per_clock"] = g.memory.hbm_bandwidth / g.sm.count / g.clocks.boost_hz;
  j["hbm_fill_time_s"] = g.memory.hbm_size / g.memory.hbm_bandwidth;
  return j;
}

int show(const std::string& name, bool as_json) {
  const hw::GpuSpec g = hw::find_gpu(name);
  const nlohmann::json derived = derived_json(g);
  if (as_json) {
    nlohmann::json j = {
        {"gpu", spec_json(g)}, {"derived", derived}, {"provenance", provenance(g.files)}};
    emit(true, "", j);
    return 0;
  }
  std::string t =
      fmt::format("{} ({}, compute capability {})\n", g.name, g.architecture, g.compute_capability);
  t += provenance_text(g.files) + "\n";
  Table hw({"figure", "value", "source"});
  auto src = [&](const std::string& key) -> std::string {
    for (const auto& [p, s] : g.sources)
      if (p == key) return s.size() > 70 ? s.substr(0, 67) + "..." : s;
    return "";
  };
  hw.row({"SMs", fmt::format("{}", g.sm.count), src("gpu.sm.count")});
  hw.row({"boost clock", hw::format_quantity(g.clocks.boost_hz, hw::Dimension::kFrequency),
          src("gpu.clocks.boost")});
  hw.row({"max threads / warps / blocks per SM",
          fmt::format("{} / {} / {}", g.sm.max_threads_per_sm, g.sm.max_warps_per_sm,
                      g.sm.max_blocks_per_sm),
          src("gpu.sm.max_threads_per_sm")});
  hw.row({"registers per SM (unit per warp)",
          fmt::format("{} ({})", g.sm.registers_per_sm, g.sm.register_allocation_unit),
          src("gpu.sm.registers_per_sm")});
  hw.row({"shared memory per SM / per block",
          fmt::format("{} / {}", fmt_bytes(g.sm.shared_memory_per_sm),
                      fmt_bytes(g.sm.max_shared_memory_per_block)),
          src("gpu.sm.shared_memory_per_sm")});
  hw.row({"L1 + shared per SM", fmt_bytes(g.sm.l1_shared_per_sm), src("gpu.sm.l1_shared_per_sm")});
  hw.row({"L2 size", hw::format_quantity(g.memory.l2_size, hw::Dimension::kBytes),
          src("gpu.memory.l2_size")});
  hw.row({"L2 bandwidth", fmt_bw(g.memory.l2_bandwidth), src("gpu.memory.l2_bandwidth")});
  hw.row({"HBM size", fmt_bytes(g.memory.hbm_size) + " " + g.memory.hbm_type,
          src("gpu.memory.hbm_size")});
  hw.row({"HBM bandwidth", fmt_bw(g.memory.hbm_bandwidth), src("gpu.memory.hbm_bandwidth")});
  for (const auto& [p, v] : g.compute.vector)
    hw.row({fmt::format("{} vector", hw::precision_name(p)), fmt_rate(v),
            src(fmt::format("gpu.compute.vector.{}", hw::precision_name(p)))});
  for (const auto& [p, v] : g.compute.tensor_dense) {
    auto sp = g.compute.tensor_sparse.find(p);
    hw.row(
        {fmt::format("{} tensor dense (2:4 sparse)", hw::precision_name(p)),
         fmt::format("{}{}", fmt_rate(v),
                     sp != g.compute.tensor_sparse.end() ? " (" + fmt_rate(sp->second) + ")" : ""),
         src(fmt::format("gpu.compute.tensor_dense.{}", hw::precision_name(p)))});
  }
  hw.row({"PCIe per direction",
          fmt::format("{} (Gen{})", fmt_bw(g.interconnect.pcie_bandwidth),
                      g.interconnect.pcie_generation),
          src("gpu.interconnect.pcie_bandwidth")});
  hw.row({"NVLink per direction",
          fmt::format("{} ({} links)", fmt_bw(g.interconnect.nvlink_bandwidth),
                      g.interconnect.nvlink_links),
          src("gpu.interconnect.nvlink_bandwidth")});
  t += hw.str() + "\nDerived\n";
  Table d({"figure", "value"});
  for (const auto& [k, v] : derived["ridge_point_flop_per_byte"].items())
    d.row({"ridge point " + k, fmt::format("{:.1f} FLOP/B", v.get<double>())});
  d.row({"HBM bytes per bf16 FLOP",
         fmt::format("{:.5f}", derived["bytes_per_flop_bf16"].get<double>())});
  d.row({"L2 / HBM bandwidth",
         fmt::format("{:.2f}x", derived["l2_to_hbm_bandwidth_ratio"].get<double>())});
  d.row({"HBM bytes per SM per clock",
         fmt::format("{:.1f}", derived["hbm_bytes_per_sm_per_clock"].get<double>())});
  d.row({"time to read all of HBM", fmt_time(derived["hbm_fill_time_s"].get<double>())});
  t += d.str();
  emit(false, t, {});
  return 0;
}

int list(bool as_json) {
  Table t({"name", "file", "SMs", "HBM", "HBM bandwidth", "bf16 dense"});
  nlohmann::json arr = nlohmann::json::array();
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& file : hw::list_gpu_config_files()) {
    const hw::GpuSpec g = hw::load_gpu_spec(file);
    const std::string stem = std::filesystem::path(file).stem().string();
    t.row({g.name, stem, fmt::format("{}", g.sm.count), fmt_bytes(g.memory.hbm_size),
           fmt_bw(g.memory.hbm_bandwidth), fmt_rate(g.matmul_peak(hw::Precision::kBf16))});
    arr.push_back({{"name", g.name},
                   {"file", file},
                   {"aliases", g.aliases},
                   {"sm_count", g.sm.count},
                   {"hbm_size_bytes", g.memory.hbm_size},
                   {"hbm_bandwidth_bytes_per_s", g.memory.hbm_bandwidth}});
    files.insert(files.end(), g.files.begin(), g.files.end());
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  emit(as_json, t.str() + "\n" + provenance_text(files),
       {{"gpus", arr}, {"provenance", provenance(files)}});
  return 0;
}

}  // namespace

void register_hw(CLI::App& app, Action& action) {
  auto* hw = app.add_subcommand("hw", "shipped GPU descriptions");
  hw->require_subcommand(1);
  auto* ls = hw->add_subcommand("list", "list the shipped GPUs");
  auto* as_json_list = add_json_flag(ls);
  ls->callback([&action, as_json_list] {
    action = [as_json_list] { return list(as_json_list->count() > 0); };
  });
  auto* sh = hw->add_subcommand("show", "a GPU's figures, their sources and derived figures");
  auto name = std::make_shared<std::string>();
  sh->add_option("name", *name, "GPU name, alias, file stem or path to a YAML file")->required();
  auto* as_json_show = add_json_flag(sh);
  sh->callback([&action, name, as_json_show] {
    action = [name, as_json_show] { return show(*name, as_json_show->count() > 0); };
  });
}

}  // namespace ridge::cli
