// The discrete-event simulator: a clock and a queue of pending events.
//
// Captures: events ordered totally by (time, priority, insertion sequence), so a run is
// deterministic; cancellation of pending events in O(1) (lazily: a cancelled event's queue entry
// is skipped when it reaches the top, and the queue is compacted when stale entries outnumber
// live ones); running to exhaustion, to a time limit, until stop() or until a predicate holds.
// Ignores: parallel execution, rollback, wall-clock pacing.
// Layout (why it is fast): the queue is an implicit 4-ary min-heap of 16-byte keys
// (time, priority, sequence packed in 128 bits), aligned so that a node's four children share
// one cache line, with a parallel array of slot indices; each event's callable (Callback, 40
// bytes inline) and generation share one 64-byte slot in a slab of chunks that never move,
// reused through a free list. In steady state scheduling an event allocates nothing.
// With many events pending (about 1e6) the cost is memory latency, not compares: each sift
// level prefetches the next level's keys and slot indices, the next event's slot is prefetched
// while the current one runs, and blocks of 2 MiB or more (the heap, later slab chunks) are
// asked for transparent huge pages so random accesses do not also miss the TLB.
// A 4-ary heap halves the depth of a binary one at the cost of three more compares per level,
// which wins once the heap outgrows cache (LaMarca & Ladner, "The influence of caches on the
// performance of heaps", JEA 1996).
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
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
    Slot& sl = slot_at(slot);
    sl.cb.emplace(std::forward<F>(f));
    push(make_key(t.ps, priority, seq_++), slot);
    ++live_;
    return EventId{(static_cast<uint64_t>(sl.gen) << 32) | slot};
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
    return id.valid() && slot < slot_count_ &&
           slot_at(slot).gen == static_cast<uint32_t>(id.value >> 32) && !slot_at(slot).cancelled;
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
  static constexpr uint32_t kChunkBits = 10;  // 1024 slots (64 KiB) in the first chunk
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  // The key array starts kPad entries into a 64-byte aligned buffer, so that the four children
  // of every node (4i+1..4i+4) fill exactly one cache line.
  static constexpr std::size_t kPad = 3;
  static constexpr int kSeqBits = 56;

  // (time, priority, insertion sequence) as one unsigned 128-bit number: time with its sign bit
  // flipped (so signed order becomes unsigned order), then priority << 56 | sequence. One wide
  // compare orders two events completely.
  __extension__ using Key = unsigned __int128;
  static Key make_key(int64_t time, Priority priority, uint64_t seq) {
    return (static_cast<Key>(static_cast<uint64_t>(time) ^ (uint64_t{1} << 63)) << 64) |
           (static_cast<uint64_t>(priority) << kSeqBits) | seq;
  }
  static int64_t key_time(Key k) {
    return static_cast<int64_t>(static_cast<uint64_t>(k >> 64) ^ (uint64_t{1} << 63));
  }

  // One cache line per event: its callable and generation. A cancelled event's slot is not
  // reused until its heap entry is discarded, so a heap entry's slot names exactly one event.
  struct alignas(64) Slot {
    Callback cb;
    uint32_t gen = 1;
    bool cancelled = false;
  };
  static_assert(sizeof(Slot) == 64);

  template <typename T>
  struct CacheAligned {
    using value_type = T;
    CacheAligned() = default;
    template <typename U>
    CacheAligned(const CacheAligned<U>&) {}  // NOLINT: allocator rebinding
    T* allocate(std::size_t n) { return static_cast<T*>(allocate_bytes(n * sizeof(T))); }
    void deallocate(T* p, std::size_t n) { deallocate_bytes(p, n * sizeof(T)); }
    friend bool operator==(const CacheAligned&, const CacheAligned&) { return true; }
  };

  // 64-byte aligned memory; blocks of 2 MiB or more are 2 MiB aligned and asked to be backed by
  // huge pages, since random accesses into a heap or slab of many megabytes otherwise miss the
  // TLB on almost every access (a page walk on top of the cache miss).
  static void* allocate_bytes(std::size_t bytes);
  static void deallocate_bytes(void* p, std::size_t bytes);
  // Chunk k of the slab holds kChunkSize << k slots, so slot s lives in chunk
  // bit_width(s / kChunkSize + 1) - 1: a small simulator stays small and a large one gets
  // chunks big enough for huge pages.
  static uint32_t chunk_of(uint32_t slot) {
    return static_cast<uint32_t>(std::bit_width((slot >> kChunkBits) + 1u)) - 1u;
  }
  static uint32_t chunk_start(uint32_t chunk) { return (kChunkSize << chunk) - kChunkSize; }
  Slot& slot_at(uint32_t slot) const {
    const uint32_t c = chunk_of(slot);
    return chunks_[c][slot - chunk_start(c)];
  }
  std::size_t heap_size() const { return keys_.size() - kPad; }
  void place(std::size_t i, Key k, uint32_t slot) {
    keys_[i + kPad] = k;
    slots_[i + kPad] = slot;
  }
  void move_entry(std::size_t to, std::size_t from) {
    keys_[to + kPad] = keys_[from + kPad];
    slots_[to + kPad] = slots_[from + kPad];
  }
  uint32_t alloc_slot() {
    if (!free_.empty()) {
      const uint32_t s = free_.back();
      free_.pop_back();
      return s;
    }
    return grow_slot();
  }
  static void next_gen(Slot& sl) {
    if (++sl.gen == 0) sl.gen = 1;  // generation 0 is never issued, so EventId{0} is never pending
  }
  uint32_t grow_slot();
  void push(Key k, uint32_t slot) {
    if (top_is_done_) {
      // The event now running still occupies the top: put its first successor there and sift
      // it down, one pass instead of a pop and a push (the hold pattern of most models).
      top_is_done_ = false;
      sift_down(0, k, slot);
      return;
    }
    keys_.push_back(k);
    slots_.push_back(slot);
    std::size_t i = heap_size() - 1;
    while (i > 0) {
      const std::size_t parent = (i - 1) >> 2;
      if (!(k < keys_[parent + kPad])) break;
      move_entry(i, parent);
      i = parent;
    }
    place(i, k, slot);
  }
  void settle_top() {
    if (top_is_done_) {
      top_is_done_ = false;
      pop_top();
    }
  }
  void pop_top();
  void sift_down(std::size_t i, Key k, uint32_t slot);
  void compact();
  bool discard_stale_top();
  void execute_top();
  [[noreturn]] void throw_in_past(Time t) const;

  Time now_{};
  uint64_t seq_ = 0;
  uint64_t executed_ = 0;
  uint64_t live_ = 0;
  uint64_t stale_ = 0;  // cancelled entries still in the heap
  bool stopped_ = false;
  bool top_is_done_ = false;  // the top entry is the event now running, not yet removed
  // The 4-ary heap, as parallel arrays after kPad unused entries: keys (compared) and slots
  // (moved along, read only for the winner).
  std::vector<Key, CacheAligned<Key>> keys_;
  std::vector<uint32_t> slots_;
  uint32_t slot_count_ = 0;
  std::vector<uint32_t> free_;  // free slots
  std::vector<Slot*> chunks_;   // chunk k: kChunkSize << k slots from allocate_bytes
  std::function<bool()> stop_predicate_;
  Tracer* tracer_ = nullptr;
};

}  // namespace ridge::sim
