// The performance model's free parameters, declared once: name, dimension, default, range, meaning.
// This table drives loading (gpu.model in configs), validation, `ridge describe` and calibration.
// Defaults are first-principles or published figures, each with its reason in model_params.cpp;
// `ridge calibrate` replaces them with values fitted to measurements.
#pragma once

#include <span>
#include <string_view>

#include "hw/units.hpp"

namespace ridge::hw {

struct ModelParamDecl {
  std::string_view name;
  Dimension dim;
  double fallback;
  double lo;
  double hi;
  std::string_view meaning;
};

std::span<const ModelParamDecl> model_param_table();
const ModelParamDecl* find_model_param(std::string_view name);

}  // namespace ridge::hw
