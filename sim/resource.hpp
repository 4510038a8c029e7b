// Scheduling helpers on top of the Simulator: a counted Resource with a FIFO wait queue, and a
// Join (countdown) that fires a callback when all of its parties have arrived.
//
// Captures: a pool of `capacity` identical units granted first-come first-served (strict FIFO:
// a large request at the head blocks smaller ones behind it, as a hardware queue does); the
// integral of units in use over time and so utilisation (Little's-law style accounting:
// Kleinrock, Queueing Systems vol. 1, 1975, sec. 2.1); busy periods for tracing.
// Ignores: preemption, priorities among waiters, reservations, timeouts.
// Grants run synchronously: acquire() calls on_grant before returning when the units are free
// and nobody waits; otherwise the release() that frees them calls it. A grant that immediately
// releases does not recurse: the wait queue is drained by one loop.
#pragma once

#include <cstdint>
#include <deque>
#include <string>

#include "sim/callback.hpp"
#include "sim/simulator.hpp"
#include "sim/stats.hpp"

namespace ridge::sim {

/// `capacity` identical units handed out in FIFO order, with usage statistics.
class Resource {
 public:
  /// A resource named `name` (used in traces) with `capacity` > 0 units, all free.
  Resource(Simulator& sim, std::string name, int64_t capacity);
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;

  /// Requests `units` (1..capacity); `on_grant` runs once they are held (maybe before returning).
  void acquire(int64_t units, Callback on_grant);
  /// Returns `units` previously granted, and grants waiters that now fit, in FIFO order.
  void release(int64_t units);

  /// The resource's name.
  const std::string& name() const { return name_; }
  /// Total units.
  int64_t capacity() const { return capacity_; }
  /// Units currently granted.
  int64_t in_use() const { return in_use_; }
  /// Units currently free.
  int64_t available() const { return capacity_ - in_use_; }
  /// Requests waiting.
  std::size_t waiting() const { return waiters_.size(); }
  /// Statistics from creation until now.
  ResourceStats stats() const;

 private:
  struct Waiter {
    int64_t units;
    Time requested;
    Callback on_grant;
  };
  void set_in_use(int64_t v);
  void dispatch();

  Simulator& sim_;
  std::string name_;
  int64_t capacity_;
  int64_t in_use_ = 0;
  Time created_;
  Time last_change_;
  Time busy_since_;
  Time busy_;
  double unit_ps_ = 0;  // integral of in_use over time, unit-picoseconds
  uint64_t grants_ = 0;
  Time total_wait_;
  bool dispatching_ = false;
  std::deque<Waiter> waiters_;
};

/// A countdown: `on_all_done` runs once `count` arrivals have happened.
class Join {
 public:
  /// Expects `count` >= 0 arrivals; with 0 the callback runs in the constructor.
  Join(int64_t count, Callback on_all_done);
  /// Records `n` arrivals; the last one runs the callback (exactly once).
  void arrive(int64_t n = 1);
  /// Expects `n` more arrivals (only before the count reached zero).
  void add(int64_t n = 1);
  /// Arrivals still expected.
  int64_t remaining() const { return remaining_; }
  /// Whether the callback has run.
  bool done() const { return remaining_ == 0; }

 private:
  int64_t remaining_;
  Callback on_all_done_;
};

}  // namespace ridge::sim
