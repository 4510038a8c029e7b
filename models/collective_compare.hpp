// Predicted vs measured collectives: validate/'s collective records (ridge-nccl-bench) and
// nccl-tests' text output, read from text the caller has loaded, each measurement simulated on a
// system (models/collective.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hw/nccl_tuning.hpp"
#include "hw/system_spec.hpp"
#include "models/collective.hpp"

namespace ridge::models {

/// One measured collective: what ran and how long it took.
struct CollectiveMeasurement {
  std::string series;  ///< "allreduce/Ring/LL128" (op/NCCL_ALGO/NCCL_PROTO as measured)
  CollectiveRequest request;
  double measured_us = 0;
};

/// Reads ridge.records JSON: the records whose op is a collective (allreduce, allgather,
/// reducescatter, alltoall, broadcast, reduce, sendrecv); others are skipped and counted in
/// `skipped`. Throws hw::ConfigException naming the file, the record (index and id) and field.
std::vector<CollectiveMeasurement> read_collective_records(const std::string& file,
                                                           const std::string& text,
                                                           int* skipped = nullptr);

/// Reads nccl-tests' text output (all_reduce_perf and friends): the data rows' size and
/// out-of-place time; the op is `op` (nccl-tests does not print it), the ranks are counted from
/// its "#  Rank" lines, else `gpus`. Throws hw::ConfigException naming the file and line.
std::vector<CollectiveMeasurement> read_nccl_tests_text(const std::string& file,
                                                        const std::string& text, CollOp op,
                                                        int gpus);

struct CollectiveComparison {
  CollectiveMeasurement m;
  double predicted_us = 0;
  std::string choice;  ///< "ring/simple", "p2p/ll"
  double error() const { return predicted_us / m.measured_us - 1; }
};

/// Simulates every measurement on `system` (NVLS off when `nvls_enabled` is false, as
/// NCCL_NVLS_ENABLE=0; `host_issue_us_per_rank` x ranks added when one thread issued every rank).
std::vector<CollectiveComparison> compare_collectives(
    const hw::SystemSpec& system, const hw::NcclTuning& tuning,
    const std::vector<CollectiveMeasurement>& measured, bool nvls_enabled,
    double host_issue_us_per_rank);

}  // namespace ridge::models
