// The discrete-event simulator: a clock and a queue of pending events.
//
// Captures: events ordered totally by (time, priority, insertion sequence), so a run is
// deterministic; cancellation of pending events in O(1) (lazily: a cancelled event's queue entry
// is skipped when it reaches the top, and the queue is compacted when stale entries outnumber
// live ones); running to exhaustion, to a time limit, until stop() or until a predicate holds.
// Ignores: parallel execution, rollback, wall-clock pacing.
// Layout (why it is fast): the queue is an implicit 4-ary min-heap of 24-byte keys
// {time, priority|sequence, slot, generation}; the callables live in a slab of fixed-size slots
// (Callback, 48 bytes inline) in chunks that never move, reused through a free list, so in
// steady state scheduling an event allocates nothing and the heap touches only its keys.
// A 4-ary heap halves the depth of a binary one at the cost of three more compares per level,
// which wins once the heap outgrows cache (LaMarca & Ladner, "The influence of caches on the
// performance of heaps", JEA 1996).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "sim/callback.hpp"
#include "sim/time.hpp"

namespace ridge::sim {

class Tracer;

/// Names one scheduled event; stays valid (and distinct) after the event ran or was cancelled.
struct EventId {
  uint64_t value = 0;  ///< generation << 32 | slot; 0 is never issued
  /// Whether this id was issued by a simulator (not default-constructed).
  constexpr bool valid() const { return value != 0; }
  constexpr auto operator<=>(const EventId&) const = default;
};

/// A clock and a queue of pending events, run in (time, priority, insertion order).
class Simulator {
 public:
  Simulator();
  ~Simulator();
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  /// The current simulated time.
  Time now() const { return now_; }

  /// Schedules `f` to run at absolute time `t` (not before now()).
  template <typename F>
  EventId schedule_at(Time t, F&& f, Priority priority = Priority::kNormal) {
    if (t < now_) throw_in_past(t);
    const uint32_t slot = alloc_slot();
    callback(slot).emplace(std::forward<F>(f));
    const uint32_t gen = gen_[slot];
    push(Entry{t.ps, (static_cast<uint64_t>(priority) << kSeqBits) | seq_++, slot, gen});
    ++live_;
    return EventId{(static_cast<uint64_t>(gen) << 32) | slot};
  }
  /// Schedules `f` to run `delay` after now() (`delay` >= 0).
  template <typename F>
  EventId schedule_after(Time delay, F&& f, Priority priority = Priority::kNormal) {
    return schedule_at(now_ + delay, std::forward<F>(f), priority);
  }

  /// Cancels a pending event; false if it already ran, was cancelled, or is running now.
  bool cancel(EventId id);
  /// Whether `id` is still waiting to run.
  bool is_pending(EventId id) const {
    const uint32_t slot = static_cast<uint32_t>(id.value);
    return id.valid() && slot < gen_.size() && gen_[slot] == static_cast<uint32_t>(id.value >> 32);
  }

  /// Runs events until none is left, stop() is called or the stop predicate holds.
  void run();
  /// Runs every event with time <= `limit` (unless stopped first); then, if not stopped, advances
  /// now() to `limit`.
  void run_until(Time limit);
  /// Runs the next event, if any; returns whether one ran.
  bool step();
  /// Makes run()/run_until() return after the event now running; the next run() clears it.
  void stop() { stopped_ = true; }
  /// Whether the last run ended because of stop() or the stop predicate.
  bool stopped() const { return stopped_; }
  /// A predicate checked after every event; when it returns true the run stops. Empty clears it.
  void set_stop_predicate(std::function<bool()> predicate) {
    stop_predicate_ = std::move(predicate);
  }

  /// Events executed so far (cancelled ones are not counted).
  uint64_t events_executed() const { return executed_; }
  /// Events scheduled and not yet run or cancelled.
  uint64_t pending_events() const { return live_; }
  /// Time of the earliest pending event, or Time::max() if none.
  Time next_event_time();

  /// Attaches a tracer that resources and flows record into (nullptr detaches); not owned.
  void set_tracer(Tracer* tracer) { tracer_ = tracer; }
  /// The attached tracer, or nullptr.
  Tracer* tracer() const { return tracer_; }

 private:
  static constexpr int kSeqBits = 56;
  static constexpr uint32_t kChunkBits = 10;  // 1024 callbacks (64 KiB) per chunk
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;

  struct Entry {
    int64_t time;
    uint64_t order;  // priority << 56 | insertion sequence
    uint32_t slot;
    uint32_t gen;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }

  Callback& callback(uint32_t slot) { return chunks_[slot >> kChunkBits][slot & (kChunkSize - 1)]; }
  uint32_t alloc_slot() {
    if (!free_.empty()) {
      const uint32_t s = free_.back();
      free_.pop_back();
      return s;
    }
    return grow_slot();
  }
  void release_slot(uint32_t slot) {
    uint32_t& g = gen_[slot];
    if (++g == 0) g = 1;  // generation 0 is never issued, so EventId{0} is never pending
    free_.push_back(slot);
  }
  uint32_t grow_slot();
  void push(const Entry& e) {
    heap_.push_back(e);
    std::size_t i = heap_.size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) >> 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  void pop_top();
  void sift_down(std::size_t i);
  void compact();
  bool discard_stale_top();
  void execute_top();
  [[noreturn]] void throw_in_past(Time t) const;

  Time now_{};
  uint64_t seq_ = 0;
  uint64_t executed_ = 0;
  uint64_t live_ = 0;
  uint64_t stale_ = 0;  // cancelled entries still in heap_
  bool stopped_ = false;
  std::vector<Entry> heap_;
  std::vector<uint32_t> gen_;   // per slot; an entry is live iff its gen equals gen_[slot]
  std::vector<uint32_t> free_;  // free slots
  std::vector<std::unique_ptr<Callback[]>> chunks_;
  std::function<bool()> stop_predicate_;
  Tracer* tracer_ = nullptr;
};

}  // namespace ridge::sim
