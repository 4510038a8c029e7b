// `ridge occupancy --gpu NAME --threads N --registers R --shared 48KiB`: resident blocks and warps
// per SM and the limiting resource, by CUDA's allocation rules.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/units.hpp"
#include "models/occupancy.hpp"

namespace ridge::cli {

void register_occupancy(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("occupancy", "resident blocks per SM for a kernel's resources");
  struct Args {
    std::string gpu = "h200";
    int threads = 256;
    int registers = 32;
    std::string shared = "0 B";
    std::string carveout;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--gpu", a->gpu, "GPU name, alias or config file")->capture_default_str();
  cmd->add_option("--threads", a->threads, "threads per block")->capture_default_str();
  cmd->add_option("--registers", a->registers, "registers per thread (as compiled: ptxas -v)")
      ->capture_default_str();
  cmd->add_option("--shared", a->shared,
                  "shared memory per block, static + dynamic, with a unit (e.g. '48 KiB')")
      ->capture_default_str();
  cmd->add_option("--carveout", a->carveout,
                  "shared memory per SM asked for "
                  "(cudaFuncAttributePreferredSharedMemoryCarveout), with a unit");
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, a, as_json] {
    action = [=] {
      auto parse = [](const std::string& flag, const std::string& text) {
        hw::ParsedQuantity q = hw::parse_quantity(text, hw::Dimension::kBytes);
        if (!q.error.empty()) {
          // A bare number of bytes is accepted here, as CUDA tools print them.
          hw::ParsedQuantity n = hw::parse_quantity(text, hw::Dimension::kCount);
          if (n.error.empty() && n.value >= 0) return n.value;
          throw std::invalid_argument(fmt::format("{}: {}", flag, q.error));
        }
        if (q.value < 0) throw std::invalid_argument(fmt::format("{}: {} is negative", flag, text));
        return q.value;
      };
      const hw::GpuSpec g = hw::find_gpu(a->gpu);
      models::KernelResources k;
      k.threads_per_block = a->threads;
      k.registers_per_thread = a->registers;
      k.shared_bytes_per_block = parse("--shared", a->shared);
      if (!a->carveout.empty()) k.carveout_bytes = parse("--carveout", a->carveout);
      const models::Occupancy o = models::occupancy(g.sm, k);
      nlohmann::json j = {{"gpu", g.name},
                          {"threads_per_block", k.threads_per_block},
                          {"registers_per_thread", k.registers_per_thread},
                          {"shared_bytes_per_block", k.shared_bytes_per_block},
                          {"blocks_per_sm", o.blocks_per_sm},
                          {"warps_per_sm", o.warps_per_sm},
                          {"occupancy", o.fraction},
                          {"limiter", limiter_name(o.limiter)},
                          {"limits_in_blocks",
                           {{"warps", o.by_warps},
                            {"registers", o.by_registers},
                            {"shared_memory", o.by_shared},
                            {"blocks", o.by_blocks}}},
                          {"registers_per_warp_allocated", o.registers_per_warp},
                          {"shared_bytes_per_block_allocated", o.shared_per_block},
                          {"shared_bytes_per_sm", o.shared_per_sm},
                          {"provenance", provenance(g.files)}};
      if (!o.error.empty()) j["error"] = o.error;
      Table t({"figure", "value"});
      t.row({"kernel",
             fmt::format("{} threads, {} registers/thread, {} shared/block", k.threads_per_block,
                         k.registers_per_thread, fmt_bytes(k.shared_bytes_per_block))});
      t.row({"resident blocks per SM", fmt::format("{}", o.blocks_per_sm)});
      t.row({"resident warps per SM", fmt::format("{} of {} ({:.0f}%)", o.warps_per_sm,
                                                  g.sm.max_warps_per_sm, 100 * o.fraction)});
      t.row({"limited by", std::string(limiter_name(o.limiter))});
      auto lim = [](int v) { return v > 1000000 ? std::string("-") : fmt::format("{}", v); };
      t.row({"blocks allowed by warps", lim(o.by_warps)});
      t.row(
          {"blocks allowed by registers", fmt::format("{} ({} registers per warp allocated)",
                                                      lim(o.by_registers), o.registers_per_warp)});
      t.row({"blocks allowed by shared memory",
             fmt::format("{} ({} per block of {} per SM)", lim(o.by_shared),
                         fmt_bytes(o.shared_per_block), fmt_bytes(o.shared_per_sm))});
      t.row({"blocks allowed per SM", lim(o.by_blocks)});
      std::string text = fmt::format("occupancy on {}\n", g.name) + t.str();
      if (!o.error.empty()) text += "cannot launch: " + o.error + "\n";
      emit(as_json->count() > 0, text + "\n" + provenance_text(g.files), j);
      return o.error.empty() ? 0 : 3;
    };
  });
}

}  // namespace ridge::cli
