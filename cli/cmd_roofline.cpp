// `ridge roofline OP key=value ... --gpu NAME`: FLOPs, minimum bytes, intensity, ridge point,
// attainable FLOP/s and time, and the bound, from datasheet peaks (no efficiencies).
#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/gpu_loader.hpp"
#include "models/op_cost.hpp"
#include "models/op_support.hpp"
#include "models/roofline.hpp"

namespace ridge::cli {

nlohmann::json roofline_json(const models::OpSpec& op, const models::Roofline& r) {
  return {{"op", op.kind()},
          {"params", op.params()},
          {"flops", r.flops},
          {"bytes", r.bytes},
          {"intensity_flop_per_byte", r.intensity},
          {"unit", r.unit},
          {"memory", r.memory},
          {"peak_flops_per_s", r.peak_flops},
          {"bandwidth_bytes_per_s", r.bandwidth},
          {"ridge_point_flop_per_byte", r.ridge_point},
          {"attainable_flops_per_s", r.attainable_flops},
          {"time_s", r.time_s},
          {"bound", r.compute_bound ? "compute" : "memory"}};
}

std::string roofline_text(const models::OpSpec& op, const models::Roofline& r) {
  Table t({"figure", "value"});
  t.row({"op", op.str()});
  t.row({"FLOPs", fmt::format("{:.4g}", r.flops)});
  t.row({"minimum bytes", fmt::format("{:.4g} ({})", r.bytes, fmt_bytes(r.bytes))});
  t.row({"arithmetic intensity", fmt::format("{:.1f} FLOP/B", r.intensity)});
  t.row({"compute roof", fmt::format("{} ({})", fmt_rate(r.peak_flops), r.unit)});
  t.row({"memory roof", fmt::format("{} ({})", fmt_bw(r.bandwidth), r.memory)});
  t.row({"ridge point", fmt::format("{:.0f} FLOP/B", r.ridge_point)});
  t.row({"attainable", fmt_rate(r.attainable_flops)});
  t.row({"time at the roof", fmt_time(r.time_s)});
  t.row({"bound", r.compute_bound ? "compute" : "memory"});
  return t.str();
}

void register_roofline(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("roofline", "roofline bound of one op on a GPU (datasheet peaks)");
  auto kind = std::make_shared<std::string>();
  auto params = std::make_shared<std::vector<std::string>>();
  auto gpu = std::make_shared<std::string>("h200");
  cmd->add_option("op", *kind,
                  "op kind: gemm, elementwise, softmax, layernorm, rmsnorm, attention, copy, ...")
      ->required();
  cmd->add_option("params", *params, "key=value parameters (see `ridge describe ops`)");
  cmd->add_option("--gpu", *gpu, "GPU name, alias or config file")->capture_default_str();
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, kind, params, gpu, as_json] {
    action = [=] {
      const models::OpSpec op = models::OpSpec::parse(*kind, *params);
      const hw::GpuSpec g = hw::find_gpu(*gpu);
      models::require_supported(g, op);
      const models::Roofline r = models::roofline(g, models::op_cost(op));
      nlohmann::json j = roofline_json(op, r);
      j["gpu"] = g.name;
      j["provenance"] = provenance(g.files);
      emit(as_json->count() > 0,
           fmt::format("{} on {}\n", op.kind(), g.name) + roofline_text(op, r) + "\n" +
               provenance_text(g.files),
           j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
