// The discrete-event simulator: a clock and a queue of pending events.
//
// Captures: events ordered totally by (time, priority, insertion sequence), so a run is
// deterministic; cancellation of pending events in O(1) (lazily: a cancelled event's queue entry
// is skipped when it reaches the top, and the queue is compacted when stale entries outnumber
// live ones); running to exhaustion, to a time limit, until stop() or until a predicate holds.
// Ignores: parallel execution, rollback, wall-clock pacing.
// Layout (why it is fast): simulated time never goes back, so the queue is a monotone radix heap
// (Ahuja, Mehlhorn, Orlin & Tarjan, JACM 1990) rather than a comparison heap: 8 levels of 256
// buckets; an event is filed by the highest 8-bit digit in which its time differs from the
// "radix time" (the last time taken out, never after any queued time). When nothing is due at
// the radix time, the lowest non-empty bucket (found with bit masks) is emptied: if it holds
// more than kRunMax events they are spread into the buckets below by their next digit; if
// fewer, spreading would leave about one per bucket, so they are sorted (counting sort on the
// top bits, then insertion sort) into a short sorted run, the "window", which also takes new
// events that fall inside its range. Each event is moved a few times, always by appending or
// by short sequential shifts: no data-dependent branches per compare and no cache miss per
// heap level, where a binary heap of 1e6 events misses on most of its ~20 levels.
// Events at the radix time wait in one FIFO per priority level. They arrive there in insertion
// order (simulator.cpp says why), so the total order (time, priority, sequence) holds without
// storing or comparing sequence numbers. An event scheduled before the radix time (possible only
// after the queue looked past cancelled events later than now()) goes to a small binary heap.
// Buckets are chains of 256-byte blocks from a shared pool. Each event's callable (Callback, 40
// bytes inline) and generation share one 64-byte slot in a slab of chunks that never move,
// reused through a free list. In steady state scheduling an event allocates nothing.
// With many events pending (about 1e6) the slot of each event about to run is prefetched when
// it reaches the window, level 0 or the FIFOs, and blocks of 2 MiB or more (later slab chunks,
// block chunks) are asked for transparent huge pages.
#pragma once

#include <algorithm>
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
    enqueue(static_cast<uint64_t>(t.ps), slot, static_cast<uint32_t>(priority));
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
  // Radix of the queue: times are split into kLevels digits of kDigitBits bits.
  static constexpr int kDigitBits = 8;
  static constexpr uint32_t kDigits = 1u << kDigitBits;
  static constexpr int kLevels = 64 / kDigitBits;
  static constexpr uint32_t kMaskWords = kDigits / 64;
  static constexpr uint32_t kBlockEntries = 15;  // a block is 256 bytes
  // A bucket of at most this many events is sorted into the window rather than spread.
  static constexpr uint32_t kRunMax = 512;
  // Beyond this many events in the window, it is given up (insertion costs O(run)).
  static constexpr uint32_t kRunSpill = 2 * kRunMax;

  // One cache line per event: its callable and generation. A cancelled event's slot is not
  // reused until its queue entry is discarded, so a queue entry's slot names exactly one event.
  struct alignas(64) Slot {
    Callback cb;
    uint32_t gen = 1;
    bool cancelled = false;
  };
  static_assert(sizeof(Slot) == 64);

  struct Entry {
    uint64_t time;  // picoseconds; never negative, since nothing is scheduled before time 0
    uint32_t slot;
    uint32_t priority;
  };
  // Buckets are chains of fixed-size blocks from a shared pool, so memory follows the number
  // pending, not the largest size each bucket ever had.
  struct alignas(64) Block {
    Block* next;
    uint64_t unused;
    Entry entry[kBlockEntries];
  };
  static_assert(sizeof(Block) == 256);
  struct Bucket {
    Block* head = nullptr;
    Block* tail = nullptr;
    uint32_t tail_size = kBlockEntries;  // "full" when empty, so the first append adds a block
    uint32_t size = 0;
    uint64_t min = UINT64_MAX;  // smallest time appended since the bucket was emptied
  };
  // Events at the current radix time, one FIFO per priority level: they arrive in insertion
  // order (see simulator.cpp), so FIFO order within a level is (priority, sequence) order.
  struct Fifo {
    std::vector<uint32_t> slots;
    std::size_t head = 0;
  };
  // An event scheduled before the radix time (possible only after the queue looked past
  // cancelled events later than now()); kept in a plain binary heap, needed rarely.
  struct Early {
    uint64_t time;
    uint64_t order;  // priority << 56 | sequence
    uint32_t slot;
    bool operator>(const Early& o) const {
      return time != o.time ? time > o.time : order > o.order;
    }
  };

  // 64-byte aligned memory; blocks of 2 MiB or more are 2 MiB aligned and asked to be backed by
  // huge pages, since random accesses into a slab of many megabytes otherwise miss the TLB on
  // almost every access (a page walk on top of the cache miss).
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

  // Files an event: into the bucket of the highest digit in which its time differs from the
  // radix time, into the current FIFOs if equal, into the early heap if before it.
  void enqueue(uint64_t t, uint32_t slot, uint32_t priority) {
    if (t > window_last_) [[likely]] {
      const int level = (std::bit_width(t ^ radix_time_) - 1) / kDigitBits;
      append(level, static_cast<uint32_t>(t >> (level * kDigitBits)) & (kDigits - 1),
             Entry{t, slot, priority});
    } else if (t > radix_time_) {
      insert_run(Entry{t, slot, priority});
    } else if (t == radix_time_) {
      push_current(slot, priority);
    } else {
      push_early(t, slot, priority);
    }
  }
  void append(int level, uint32_t digit, const Entry& e) {
    Bucket& b = buckets_[(static_cast<uint32_t>(level) << kDigitBits) | digit];
    if (b.tail_size == kBlockEntries) [[unlikely]]
      add_block(b);
    b.tail->entry[b.tail_size++] = e;
    b.min = std::min(b.min, e.time);
    if (b.size++ == 0) {
      digit_mask_[level][digit / 64] |= uint64_t{1} << (digit % 64);
      level_mask_ |= 1u << level;
    }
  }
  void add_block(Bucket& b) {
    if (free_blocks_ == nullptr) grow_blocks();
    Block* blk = free_blocks_;
    free_blocks_ = blk->next;
    blk->next = nullptr;
    (b.tail ? b.tail->next : b.head) = blk;
    b.tail = blk;
    b.tail_size = 0;
  }
  void free_block(Block* blk) {
    blk->next = free_blocks_;
    free_blocks_ = blk;
  }
  void grow_blocks();
  void push_current(uint32_t slot, uint32_t priority) {
    if (front_in_run_) [[unlikely]]
      materialize_front();
    push_fifo(slot, priority);
  }
  // The lone event at the radix time, left at the front of run_, joins current_ first, so that
  // an event scheduled at the same time is ordered against it by priority.
  void materialize_front() {
    front_in_run_ = false;
    push_fifo(run_[run_head_].slot, run_[run_head_].priority);
    pop_run_front();
  }
  void pop_run_front() {
    if (++run_head_ == run_.size()) {
      run_.clear();
      run_head_ = 0;
    }
  }
  void push_fifo(uint32_t slot, uint32_t priority) {
    Fifo& f = current_[priority];
    // Reclaim the consumed front before growing, so a chain of events at one instant reuses
    // its buffer; only when at least half is consumed, so the move is amortized O(1).
    if (f.slots.size() == f.slots.capacity() && f.head > 0 && 2 * f.head >= f.slots.size()) {
      f.slots.erase(f.slots.begin(), f.slots.begin() + static_cast<std::ptrdiff_t>(f.head));
      f.head = 0;
    }
    f.slots.push_back(slot);
    current_mask_[priority / 64] |= uint64_t{1} << (priority % 64);
    current_words_ |= 1u << (priority / 64);
  }
  // The lowest non-empty priority level in the current FIFOs (which must not be empty).
  uint32_t current_level() const {
    const auto w = static_cast<uint32_t>(std::countr_zero(current_words_));
    return w * 64 + static_cast<uint32_t>(std::countr_zero(current_mask_[w]));
  }
  bool current_empty() const { return current_words_ == 0; }
  uint32_t pop_current(uint32_t level) {
    Fifo& f = current_[level];
    const uint32_t slot = f.slots[f.head++];
    if (f.head == f.slots.size()) {
      f.slots.clear();
      f.head = 0;
      clear_current_bit(level);
    }
    return slot;
  }
  void clear_current_bit(uint32_t level) {
    current_mask_[level / 64] &= ~(uint64_t{1} << (level % 64));
    if (current_mask_[level / 64] == 0) current_words_ &= ~(1u << (level / 64));
  }
  void insert_run(const Entry& e);
  bool run_empty() const { return run_head_ == run_.size(); }
  void push_early(uint64_t t, uint32_t slot, uint32_t priority);
  // The lowest non-empty bucket (level_mask_ must not be 0).
  Bucket& lowest_bucket(int& level, uint32_t& digit) {
    level = std::countr_zero(level_mask_);
    const uint64_t* words = digit_mask_[level];
    uint32_t w = 0;
    while (words[w] == 0) ++w;
    digit = w * 64 + static_cast<uint32_t>(std::countr_zero(words[w]));
    return buckets_[(static_cast<uint32_t>(level) << kDigitBits) | digit];
  }
  void clear_bucket_bit(int level, uint32_t digit) {
    uint64_t* words = digit_mask_[level];
    words[digit / 64] &= ~(uint64_t{1} << (digit % 64));
    if ((words[0] | words[1] | words[2] | words[3]) == 0) level_mask_ &= ~(1u << level);
  }
  bool advance(uint64_t limit);
  bool settle(uint64_t limit);
  uint64_t front_time() const { return early_.empty() ? radix_time_ : early_.front().time; }
  bool release_if_cancelled(uint32_t slot);
  void compact();
  void compact_bucket(int level, uint32_t digit);
  void execute_front();
  [[noreturn]] void throw_in_past(Time t) const;

  Time now_{};
  uint64_t executed_ = 0;
  uint64_t live_ = 0;
  uint64_t stale_ = 0;  // cancelled entries still queued
  uint64_t early_seq_ = 0;
  bool stopped_ = false;
  // The queue: a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan, "Faster algorithms for the
  // shortest path problem", JACM 37(2), 1990) with 256-way digits. Every queued time t >=
  // radix_time_ sits in bucket (level, digit) where level is the highest 8-bit digit in which t
  // differs from radix_time_ and digit is t's digit there; times equal to radix_time_ sit in
  // current_.
  uint64_t radix_time_ = 0;
  uint32_t level_mask_ = 0;                        // bit l: level l has a non-empty bucket
  uint64_t digit_mask_[kLevels][kMaskWords] = {};  // non-empty buckets of each level
  uint64_t current_mask_[kMaskWords] = {};         // non-empty FIFOs in current_
  uint32_t current_words_ = 0;                     // bit w: current_mask_[w] != 0
  // The window: when a bucket with few events is emptied, they are sorted by time into run_
  // instead of being spread over the (mostly empty) buckets below; until the next bucket is
  // emptied, events with times in (radix_time_, window_last_] go there too, by insertion.
  // Otherwise window_last_ == radix_time_ and run_ is empty.
  uint64_t window_last_ = 0;
  std::vector<Entry> run_;  // sorted by time, equal times in insertion order, from run_head_
  std::size_t run_head_ = 0;
  // The front event is run_[run_head_] (alone at the radix time) rather than in current_: saves
  // a FIFO round trip per event when times are distinct. current_ is empty while this is set.
  bool front_in_run_ = false;
  uint32_t sort_pos_[kDigits] = {};    // counting sort's group positions
  std::unique_ptr<Bucket[]> buckets_;  // kLevels * kDigits
  std::unique_ptr<Fifo[]> current_;    // one per priority value
  Block* free_blocks_ = nullptr;
  std::vector<std::pair<Block*, std::size_t>> block_chunks_;  // for the destructor
  std::vector<Early> early_;                                  // min-heap on (time, order)
  uint32_t slot_count_ = 0;
  std::vector<uint32_t> free_;  // free slots
  std::vector<Slot*> chunks_;   // chunk k: kChunkSize << k slots from allocate_bytes
  std::function<bool()> stop_predicate_;
  Tracer* tracer_ = nullptr;
};

}  // namespace ridge::sim
