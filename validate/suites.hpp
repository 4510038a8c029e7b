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

// Single cases with explicit parameters (the `--cases FILE` mode, suite_cases.cpp); each appends
// one record with the same id and params as the suite's sweep would.
void run_elementwise_case(Context& ctx, const std::string& op, Dtype d, std::size_t n, int stride);
void run_copy_d2d_case(Context& ctx, std::size_t bytes);
void run_row_case(Context& ctx, const std::string& op, Dtype d, int rows, int cols);
void run_membw_case(Context& ctx, const std::string& kind, std::size_t bytes, int sets);
void run_host_copy_case(Context& ctx, const std::string& memory, const std::string& dir,
                        std::size_t bytes);
void run_launch_case(Context& ctx, const std::string& kind, int n);
void run_attention_case(Context& ctx, int batch, int heads, int kv_heads, int seq_q, int seq_kv,
                        int head_dim, bool causal, const std::string& label);
/// Runs every case of a case file (a ridge.records/1 document or a JSON list of {id, op, params});
/// a case whose op or params it cannot run is a failure of that case. Returns the cases read.
std::size_t run_cases_file(Context& ctx, const std::string& path);

/// The records document's "device" member: name, SMs, CC, versions, clocks.
Json device_json(Context& ctx);
/// Writes the hardware-config overlay YAML (`base: h200-sxm-141gb.yaml` + measured gpu keys).
void write_overlay(Context& ctx, const std::string& path);

}  // namespace ridge::validate
