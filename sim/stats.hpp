// Summary statistics the engine's shared objects report.
//
// Captures: for a Resource, the time-integral of units in use (exact, in unit-picoseconds
// summed as doubles) and the time anything was in use; for a link of a FlowNetwork, the bytes
// it carried (credited per flow whenever a flow's rate changes or it ends, so the totals are
// exact up to floating-point summation) and the time it carried anything.
// Ignores: distributions and percentiles; a model that needs them records its own samples.
#pragma once

#include <cstdint>

#include "sim/time.hpp"

namespace ridge::sim {

/// Usage of one Resource from its creation to the time the stats were taken.
struct ResourceStats {
  Time observed;            ///< span the statistics cover (creation to now)
  Time busy;                ///< time with at least one unit in use
  double unit_seconds = 0;  ///< integral of units in use over time, in unit-seconds
  double utilisation = 0;   ///< unit_seconds / (capacity * observed), in [0, 1]
  uint64_t grants = 0;      ///< acquisitions granted
  Time total_wait;          ///< sum over grants of (grant time - request time)
};

/// Traffic on one link of a FlowNetwork from its creation to the time the stats were taken.
struct LinkStats {
  Time observed;                 ///< span the statistics cover (creation to now)
  Time busy;                     ///< time the link carried a non-zero rate
  double bytes = 0;              ///< bytes carried
  double mean_rate = 0;          ///< bytes / observed, in bytes/s (0 if observed is 0)
  double mean_rate_busy = 0;     ///< bytes / busy, in bytes/s (0 if never busy)
  double utilisation = 0;        ///< mean_rate / capacity (capacity at the time of the call)
  uint64_t flows_completed = 0;  ///< flows over this link that completed
};

}  // namespace ridge::sim
