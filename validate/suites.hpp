// The suites of ridge-bench. Each appends records to the context (schema in validate/README.md).
#pragma once

#include <string>
#include <vector>

#include "bench_common.hpp"

namespace ridge::validate {

struct Suite {
  const char* name;
  const char* description;
  void (*run)(Context&);
};

/// Every suite, in the order `--suite all` runs them.
const std::vector<Suite>& all_suites();

void suite_device(Context& ctx);
void suite_memory(Context& ctx);
void suite_compute(Context& ctx);
void suite_launch(Context& ctx);
void suite_gemm(Context& ctx);
void suite_kernels(Context& ctx);
void suite_occupancy(Context& ctx);

// Parts of the kernels suite, one file each.
void run_elementwise_cases(Context& ctx);
void run_row_cases(Context& ctx);  ///< softmax, layernorm, rmsnorm
void run_attention_cases(Context& ctx);
void run_copy_cases(Context& ctx);

/// The records document's "device" member: name, SMs, CC, versions, clocks.
Json device_json(Context& ctx);
/// Writes the hardware-config overlay YAML (`base: h200-sxm-141gb.yaml` + measured gpu keys).
void write_overlay(Context& ctx, const std::string& path);

}  // namespace ridge::validate
