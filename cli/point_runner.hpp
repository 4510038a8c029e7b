// Runs many independent points (sweep points, plan candidates) on this process's threads or on MPI
// ranks, handing each result to one coordinating thread in completion order. The caller orders
// results by point index, so what it writes does not depend on threads, ranks or timing.
//
// Threads: a pool takes points from a shared counter (dynamic load balancing); results are queued
// to the calling thread, which runs `on_result` for each as it arrives.
// MPI (built with RIDGE_MPI, started by mpirun): rank 0 coordinates: each worker rank asks for a
// point, computes it (on a thread of its own while its main thread sends a heartbeat every
// second) and returns the result with its next request. A worker silent for longer than
// `rank_timeout_s` is declared lost with its point; the others go on. A point whose computation
// throws comes back as a failed point with the message. Only rank 0 sees results.
//
// To use it for another command (ridge plan): make the work a list of indices that every rank can
// rebuild by itself from the same inputs, a `compute(i)` returning the serialized result (a
// string), and an `on_result` on rank 0 that stores it by index; write outputs on rank 0 only
// (`MpiSession::rank() == 0`) once run_points returns.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace ridge::cli {

struct PointOutcome {
  std::size_t index = 0;
  bool ok = false;
  std::string payload;  ///< the result, or the error message when !ok
};

using ComputeFn = std::function<std::string(std::size_t)>;
using ResultFn = std::function<void(const PointOutcome&)>;

struct PointRunSummary {
  std::vector<std::size_t> failed;  ///< compute threw (payload: the message)
  std::vector<std::size_t> lost;    ///< handed to an MPI rank that went silent
  int lost_ranks = 0;
};

/// `todo` on `threads` threads (0: one per hardware thread); `on_result` runs on the calling
/// thread.
PointRunSummary run_points_threads(const std::vector<std::size_t>& todo, const ComputeFn& compute,
                                   const ResultFn& on_result, int threads);

/// Whether this process was started by mpirun (OpenMPI's environment variables).
bool started_by_mpirun();
/// Whether this build has MPI.
bool mpi_built();

/// MPI for one command: initialised on construction, finalised on destruction (skipped after a
/// rank was lost, where finalising would wait on it forever).
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const;
  int size() const;
  /// Rank 0: hands out `todo` and collects results; other ranks compute what they are given
  /// (their `todo` and `on_result` are unused). Ranks' timeouts are `rank_timeout_s` of silence.
  PointRunSummary run(const std::vector<std::size_t>& todo, const ComputeFn& compute,
                      const ResultFn& on_result, double rank_timeout_s);
  /// Every rank: the same flag from rank 0 (so all ranks agree, e.g. to stop after an error).
  bool broadcast(bool value);
  bool lost_a_rank() const { return lost_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  bool lost_ = false;
};

}  // namespace ridge::cli
