// Predicted against measured end-to-end runs: reads validate/e2e records (ridge.records/1, ops
// e2e_train, e2e_prefill, e2e_decode, e2e_diffusion, e2e_stage), rebuilds each workload from the
// record's params with the builders that mirror the PyTorch programs, simulates it, and reports the
// error of the step time against timing.median_us and the kernel count against the profile's.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "hw/gpu_spec.hpp"

namespace ridge::workloads {

struct E2eRow {
  std::string id, op;
  double measured_s = 0, predicted_s = 0;
  double error = 0;  ///< (predicted - measured) / measured
  long long measured_kernels = -1, predicted_kernels = 0;
  std::string bound;         ///< host-bound or GPU-bound, from the critical path
  long long dispatches = 0;  ///< eager host dispatches (0 when replayed as a CUDA graph)
};

/// Rows for every record it knows how to rebuild; others are left out. `config_dir` holds models/.
std::vector<E2eRow> compare_e2e(const nlohmann::json& records_doc, const hw::GpuSpec& gpu);
/// A Markdown table of the rows, with the command that made it.
std::string e2e_markdown(const std::vector<E2eRow>& rows, const std::string& source,
                         const std::string& gpu_name, double host_launch_eager_s = 0);

}  // namespace ridge::workloads
