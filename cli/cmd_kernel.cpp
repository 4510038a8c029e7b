// `ridge kernel OP key=value ... --gpu NAME [--mode fast|detailed] [--timing kernel|per_call]`:
// the kernel model's prediction for one op: time, achieved FLOP/s and bandwidth, fraction of the
// applicable roof, the bound, occupancy and its limiter, waves, grid/block and the kernel's name.
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op_support.hpp"

namespace ridge::cli {

nlohmann::json prediction_json(const models::KernelPrediction& p) {
  const auto& o = p.occupancy;
  return {{"time_s", p.time_s},
          {"kernel_time_s", p.kernel_time_s},
          {"per_call_time_s", p.per_call_time_s},
          {"kernels", p.kernels},
          {"bound", p.bound},
          {"flops", p.flops},
          {"hbm_bytes", p.hbm_bytes},
          {"l2_bytes", p.l2_bytes},
          {"achieved_flops_per_s", p.achieved_flops_per_s},
          {"achieved_bytes_per_s", p.achieved_bytes_per_s},
          {"roof_fraction", p.roof_fraction},
          {"roof", p.roof},
          {"grid", p.grid},
          {"block", p.block},
          {"waves", p.waves},
          {"kernel_name", p.kernel_name},
          {"occupancy",
           {{"blocks_per_sm", o.blocks_per_sm},
            {"warps_per_sm", o.warps_per_sm},
            {"fraction", o.fraction},
            {"limiter", models::limiter_name(o.limiter)}}},
          {"detail", p.detail}};
}

models::Mode parse_mode(const std::string& s) {
  if (s == "fast") return models::Mode::kFast;
  if (s == "detailed") return models::Mode::kDetailed;
  throw std::invalid_argument(fmt::format("--mode: expected fast or detailed, got '{}'", s));
}

models::Timing parse_timing(const std::string& s) {
  if (s == "kernel") return models::Timing::kKernel;
  if (s == "per_call") return models::Timing::kPerCall;
  throw std::invalid_argument(fmt::format("--timing: expected kernel or per_call, got '{}'", s));
}

namespace {

std::string prediction_text(const models::OpSpec& op, const hw::GpuSpec& g, models::Mode mode,
                            models::Timing timing, const models::KernelPrediction& p) {
  Table t({"figure", "value"});
  t.row({"op", op.str()});
  t.row({"time", fmt::format("{} ({} timing, {} mode)", fmt_time(p.time_s),
                             models::timing_name(timing), models::mode_name(mode))});
  t.row({"kernel time", fmt_time(p.kernel_time_s)});
  t.row({"per-call time", fmt_time(p.per_call_time_s)});
  t.row({"bound", p.bound});
  // A PCIe copy's bytes cross PCIe, not HBM (it was labelled HBM).
  t.row(
      {"achieved", fmt::format("{}, {} {}", fmt_rate(p.achieved_flops_per_s),
                               fmt_bw(p.achieved_bytes_per_s), p.roof == "PCIe" ? "PCIe" : "HBM")});
  t.row({"roof fraction", fmt::format("{:.1f}% of the {} roof", 100 * p.roof_fraction, p.roof)});
  if (p.bound == "latency") {
    const bool set = g.model.count("max_inflight_bytes_per_sm") > 0;
    t.row({"why latency",
           fmt::format("the bytes one SM keeps in flight ({:.0f} B, max_inflight_bytes_per_sm: {}) "
                       "over the load latency feed it slower than it computes",
                       g.param("max_inflight_bytes_per_sm"),
                       set ? "from the GPU config" : "the default, not fitted on this GPU")});
  }
  t.row({"FLOPs", fmt::format("{:.4g}", p.flops)});
  t.row({"HBM bytes", fmt_bytes(p.hbm_bytes)});
  t.row({"L2 bytes", fmt_bytes(p.l2_bytes)});
  t.row({"kernel",
         fmt::format("{} ({} launch{})", p.kernel_name, p.kernels, p.kernels == 1 ? "" : "es")});
  t.row({"grid x block", fmt::format("{} x {}", p.grid, p.block)});
  t.row({"waves", fmt::format("{} over {} SMs", p.waves, g.sm.count)});
  const auto& o = p.occupancy;
  t.row({"occupancy",
         fmt::format("{} blocks/SM, {} warps/SM ({:.0f}%), limited by {}", o.blocks_per_sm,
                     o.warps_per_sm, 100 * o.fraction, models::limiter_name(o.limiter))});
  if (p.detail.contains("l2_hit_rate")) {
    t.row({"L2 hit rate (re-reads)",
           fmt::format("{:.0f}%", 100 * p.detail["l2_hit_rate"].get<double>())});
  }
  if (p.detail.contains("split_k")) {
    t.row({"tile", fmt::format("{}x{}x{}, split-K {}", p.detail["tile_m"].get<int>(),
                               p.detail["tile_n"].get<int>(), p.detail["tile_k"].get<int>(),
                               p.detail["split_k"].get<int>())});
  }
  return fmt::format("{} on {}\n", op.kind(), g.name) + t.str();
}

}  // namespace

void register_kernel(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("kernel", "predict one op's time on a GPU, and what bounds it");
  auto kind = std::make_shared<std::string>();
  auto params = std::make_shared<std::vector<std::string>>();
  auto gpu = std::make_shared<std::string>("h200");
  auto mode = std::make_shared<std::string>("fast");
  auto timing = std::make_shared<std::string>("kernel");
  cmd->add_option("op", *kind, "op kind (see `ridge describe ops`)")->required();
  cmd->add_option("params", *params, "key=value parameters");
  cmd->add_option("--gpu", *gpu, "GPU name, alias or config file")->capture_default_str();
  cmd->add_option("--mode", *mode,
                  "fast (closed form, fitted) or detailed (interval model on the event engine)")
      ->capture_default_str();
  cmd->add_option("--timing", *timing, "kernel (GPU duration) or per_call (events around a call)")
      ->capture_default_str();
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, kind, params, gpu, mode, timing, as_json] {
    action = [=] {
      const models::OpSpec op = models::OpSpec::parse(*kind, *params);
      const models::Mode m = parse_mode(*mode);
      const models::Timing t = parse_timing(*timing);
      const hw::GpuSpec g = hw::find_gpu(*gpu);
      models::require_supported(g, op);
      models::require_detailed_budget(g, op, m, t);
      const models::KernelPrediction p = models::predict_kernel(g, op, m, t);
      nlohmann::json j = {{"op", op.kind()},
                          {"params", op.params()},
                          {"gpu", g.name},
                          {"mode", models::mode_name(m)},
                          {"timing", models::timing_name(t)}};
      j["prediction"] = prediction_json(p);
      j["provenance"] = provenance(g.files);
      emit(as_json->count() > 0, prediction_text(op, g, m, t, p) + "\n" + provenance_text(g.files),
           j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
