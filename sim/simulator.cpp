#include "sim/simulator.hpp"

#include <algorithm>
#include <memory>
#include <string>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace ridge::sim {

Simulator::Simulator()
    : buckets_(std::make_unique<Bucket[]>(std::size_t{kLevels} * kDigits)),
      current_(std::make_unique<Fifo[]>(256)) {}

Simulator::~Simulator() {
  for (uint32_t c = 0; c < chunks_.size(); ++c) {
    const std::size_t n = std::size_t{kChunkSize} << c;
    std::destroy_n(chunks_[c], n);
    deallocate_bytes(chunks_[c], n * sizeof(Slot));
  }
  for (const auto& [blocks, n] : block_chunks_) deallocate_bytes(blocks, n * sizeof(Block));
}

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this many slots (64 B each) the slab sits in L1/L2, and prefetching only adds
// instructions.
constexpr std::size_t kPrefetchFrom = 4096;
}  // namespace

void* Simulator::allocate_bytes(std::size_t bytes) {
  if (bytes < kHugePage) return ::operator new (bytes, std::align_val_t{64});
  void* p = ::operator new (bytes, std::align_val_t{kHugePage});
#ifdef __linux__
  // Advice only: where transparent huge pages are off, this fails harmlessly.
  (void)madvise(p, bytes & ~(kHugePage - 1), MADV_HUGEPAGE);
#endif
  return p;
}

void Simulator::deallocate_bytes(void* p, std::size_t bytes) {
  ::operator delete (p, std::align_val_t{bytes < kHugePage ? std::size_t{64} : kHugePage});
}

uint32_t Simulator::grow_slot() {
  const uint32_t slot = slot_count_++;
  const uint32_t c = chunk_of(slot);
  if (c == chunks_.size()) {
    const std::size_t n = std::size_t{kChunkSize} << c;
    Slot* chunk = static_cast<Slot*>(allocate_bytes(n * sizeof(Slot)));
    std::uninitialized_default_construct_n(chunk, n);
    chunks_.push_back(chunk);
  }
  return slot;
}

void Simulator::grow_blocks() {
  // Geometric chunks (64 blocks, then as many as already exist), threaded onto the free list.
  std::size_t total = 0;
  for (const auto& chunk : block_chunks_) total += chunk.second;
  const std::size_t n = std::max<std::size_t>(64, total);
  Block* blocks = static_cast<Block*>(allocate_bytes(n * sizeof(Block)));
  for (std::size_t i = n; i-- > 0;) {
    blocks[i].next = free_blocks_;
    free_blocks_ = &blocks[i];
  }
  block_chunks_.emplace_back(blocks, n);
}

void Simulator::push_early(uint64_t t, uint32_t slot, uint32_t priority) {
  early_.push_back(Early{t, (uint64_t{priority} << 56) | early_seq_++, slot});
  std::push_heap(early_.begin(), early_.end(), std::greater<>{});
}

void Simulator::throw_in_past(Time t) const {
  throw std::invalid_argument("ridge::sim::Simulator: event scheduled at " + std::to_string(t.ps) +
                              " ps, before now (" + std::to_string(now_.ps) + " ps)");
}

bool Simulator::cancel(EventId id) {
  if (!is_pending(id)) return false;
  Slot& sl = slot_at(static_cast<uint32_t>(id.value));
  sl.cb.reset();
  next_gen(sl);
  sl.cancelled = true;  // the slot is freed when its entry leaves the queue
  --live_;
  ++stale_;
  // Stale entries cost moves and memory; sweep them out once they are the majority.
  if (stale_ > 1024 && stale_ > live_) compact();
  return true;
}

// Why the FIFOs of current_ hold their events in insertion order: a bucket is only ever appended
// to, by a new event (which has the largest sequence so far) or when a bucket of a higher level
// is emptied into it; that happens only when every lower bucket, run_ and current_ are empty,
// and reads the source in order. So, by induction, every bucket holds its events in insertion
// order; run_ is sorted stably by time from one bucket and takes new events after equal times;
// each FIFO is filled either while empty, from one bucket or from the front of run_ (both in
// insertion order for one time), or by new events.
//
// Empties the lowest bucket, making its smallest time the radix time, unless that time is after
// `limit`. Returns whether it did. current_, run_ and early_ must be empty.
bool Simulator::advance(uint64_t limit) {
  int level;
  uint32_t digit;
  Bucket& b = lowest_bucket(level, digit);
  const uint64_t m = b.min;
  if (m > limit) return false;
  radix_time_ = m;
  Block* blk = b.head;
  Block* const tail = b.tail;
  const uint32_t tail_size = b.tail_size;
  const uint32_t size = b.size;
  b = Bucket{};
  clear_bucket_bit(level, digit);
  // With a large slab, an event reaching level 0, run_ or current_ runs within the next few
  // hundred events: start loading its slot now.
  const bool prefetch = slot_count_ > kPrefetchFrom;
  if (level > 0 && size <= kRunMax) {
    // A few events: spreading them over the 256 buckets of the level below would leave about
    // one per bucket, each then emptied on its own. Sort them by time into run_ instead: a
    // stable counting sort on the top bits of their offset in the bucket's range (about one
    // event per group), then insertion sort for the rest, stable too, so equal times keep
    // insertion order. The window is the bucket's whole range.
    window_last_ = m | ((uint64_t{1} << (level * kDigitBits)) - 1);
    const int bits = std::clamp(static_cast<int>(std::bit_width(size)) - 1, 1, kDigitBits);
    const int shift = level * kDigitBits - bits;
    const uint32_t group_mask = (1u << bits) - 1;
    uint32_t* const pos = sort_pos_;
    std::fill_n(pos, group_mask + 1, 0u);
    for (Block* q = blk;; q = q->next) {
      const uint32_t n = q == tail ? tail_size : kBlockEntries;
      for (uint32_t i = 0; i < n; ++i) ++pos[(q->entry[i].time >> shift) & group_mask];
      if (q == tail) break;
    }
    uint32_t sum = 0;
    for (uint32_t g = 0; g <= group_mask; ++g) {
      const uint32_t c = pos[g];
      pos[g] = sum;
      sum += c;
    }
    run_.clear();
    run_.resize(size);
    run_head_ = 0;
    Entry* const run = run_.data();
    for (;;) {
      const uint32_t n = blk == tail ? tail_size : kBlockEntries;
      for (uint32_t i = 0; i < n; ++i) {
        const Entry& e = blk->entry[i];
        if (prefetch) __builtin_prefetch(&slot_at(e.slot));
        run[pos[(e.time >> shift) & group_mask]++] = e;
      }
      Block* const next = blk->next;
      free_block(blk);
      if (blk == tail) break;
      blk = next;
    }
    for (uint32_t i = 1; i < size; ++i) {
      if (run[i].time >= run[i - 1].time) continue;
      const Entry e = run[i];
      uint32_t j = i;
      do {
        run[j] = run[j - 1];
        --j;
      } while (j > 0 && run[j - 1].time > e.time);
      run[j] = e;
    }
    return true;
  }
  window_last_ = m;
  for (;;) {
    Block* const next = blk->next;
    if (next != nullptr) {
      for (std::size_t off = 0; off < sizeof(Block); off += 64) {
        __builtin_prefetch(reinterpret_cast<const char*>(next) + off);
      }
    }
    const uint32_t n = blk == tail ? tail_size : kBlockEntries;
    for (uint32_t i = 0; i < n; ++i) {
      const Entry e = blk->entry[i];
      const uint64_t x = e.time ^ m;
      if (x == 0) {
        push_current(e.slot, e.priority);
        if (prefetch) __builtin_prefetch(&slot_at(e.slot));
      } else {
        const int to = (std::bit_width(x) - 1) / kDigitBits;
        append(to, static_cast<uint32_t>(e.time >> (to * kDigitBits)) & (kDigits - 1), e);
        if (prefetch && to == 0) __builtin_prefetch(&slot_at(e.slot));
      }
    }
    free_block(blk);
    if (blk == tail) break;
    blk = next;
  }
  return true;
}

void Simulator::insert_run(const Entry& e) {
  if (run_.size() - run_head_ >= kRunSpill) {
    // Many events scheduled into the window: insertion would cost too much. Give the window
    // up and file its events into the buckets below, in order, which keeps equal times in
    // insertion order.
    if (front_in_run_) materialize_front();
    window_last_ = radix_time_;
    for (std::size_t i = run_head_; i < run_.size(); ++i)
      enqueue(run_[i].time, run_[i].slot, run_[i].priority);
    run_.clear();
    run_head_ = 0;
    enqueue(e.time, e.slot, e.priority);
    return;
  }
  // Reclaim the consumed front before growing, as for a FIFO.
  if (run_.size() == run_.capacity() && run_head_ > 0 && 2 * run_head_ >= run_.size()) {
    run_.erase(run_.begin(), run_.begin() + static_cast<std::ptrdiff_t>(run_head_));
    run_head_ = 0;
  }
  // After every event at the same time or earlier: a new event is the last scheduled.
  if (run_.size() == run_head_ || run_.back().time <= e.time) {
    run_.push_back(e);
    return;
  }
  const auto at =
      std::upper_bound(run_.begin() + static_cast<std::ptrdiff_t>(run_head_), run_.end(), e.time,
                       [](uint64_t t, const Entry& x) { return t < x.time; });
  run_.insert(at, e);
}

// Brings the earliest live event to the front (early_'s top, else the front of run_ if
// front_in_run_, else current_'s lowest FIFO),
// discarding cancelled entries on the way, without moving the radix time past `limit`.
// Returns false if no event is at the front: none is left, or the next is after `limit`.
bool Simulator::settle(uint64_t limit) {
  for (;;) {
    if (!early_.empty()) [[unlikely]] {
      const uint32_t slot = early_.front().slot;
      if (stale_ == 0 || !release_if_cancelled(slot)) return true;
      std::pop_heap(early_.begin(), early_.end(), std::greater<>{});
      early_.pop_back();
      --stale_;
      continue;
    }
    if (front_in_run_) {
      if (stale_ == 0 || !release_if_cancelled(run_[run_head_].slot)) return true;
      front_in_run_ = false;
      pop_run_front();
      --stale_;
      continue;
    }
    if (!current_empty()) {
      if (stale_ == 0) return true;  // nothing cancelled: skip reading the front's slot
      const uint32_t level = current_level();
      const Fifo& f = current_[level];
      if (!release_if_cancelled(f.slots[f.head])) return true;
      pop_current(level);
      --stale_;
      continue;
    }
    if (!run_empty()) {
      // The next time in the window becomes the radix time; its events move to current_.
      const uint64_t t = run_[run_head_].time;
      if (t > limit) return false;
      radix_time_ = t;
      if (run_head_ + 1 == run_.size() || run_[run_head_ + 1].time != t) {
        front_in_run_ = true;  // alone at t: no priority order to keep
        continue;
      }
      do {
        push_fifo(run_[run_head_].slot, run_[run_head_].priority);
        ++run_head_;
      } while (run_head_ < run_.size() && run_[run_head_].time == t);
      if (run_empty()) {
        run_.clear();
        run_head_ = 0;
      }
      continue;
    }
    if (level_mask_ == 0 || !advance(limit)) return false;
  }
}

bool Simulator::release_if_cancelled(uint32_t slot) {
  Slot& sl = slot_at(slot);
  if (!sl.cancelled) return false;
  sl.cancelled = false;
  free_.push_back(slot);
  return true;
}

void Simulator::compact_bucket(int level, uint32_t digit) {
  Bucket& b = buckets_[(static_cast<uint32_t>(level) << kDigitBits) | digit];
  // Stable, in place: the write cursor never passes the read cursor.
  Block* wb = b.head;
  uint32_t wi = 0;
  std::size_t kept = 0;
  uint64_t min = UINT64_MAX;
  for (Block* rb = b.head; rb != nullptr; rb = rb->next) {
    const uint32_t n = rb == b.tail ? b.tail_size : kBlockEntries;
    for (uint32_t i = 0; i < n; ++i) {
      const Entry e = rb->entry[i];
      if (release_if_cancelled(e.slot)) continue;
      if (wi == kBlockEntries) {
        wb = wb->next;
        wi = 0;
      }
      wb->entry[wi++] = e;
      min = std::min(min, e.time);
      ++kept;
    }
  }
  Block* spare = kept == 0 ? b.head : wb->next;
  while (spare != nullptr) {
    Block* const next = spare->next;
    free_block(spare);
    spare = next;
  }
  if (kept == 0) {
    b = Bucket{};
    clear_bucket_bit(level, digit);
    return;
  }
  wb->next = nullptr;
  b.tail = wb;
  b.tail_size = wi;
  b.size = static_cast<uint32_t>(kept);
  b.min = min;
}

void Simulator::compact() {
  front_in_run_ = false;  // its event, if live, stays at the front of run_
  std::erase_if(early_, [this](const Early& e) { return release_if_cancelled(e.slot); });
  std::make_heap(early_.begin(), early_.end(), std::greater<>{});
  for (uint32_t level = 0; level < 256; ++level) {
    if ((current_mask_[level / 64] >> (level % 64) & 1) == 0) continue;
    Fifo& f = current_[level];
    std::size_t kept = 0;
    for (std::size_t i = f.head; i < f.slots.size(); ++i) {
      if (!release_if_cancelled(f.slots[i])) f.slots[kept++] = f.slots[i];
    }
    f.slots.resize(kept);
    f.head = 0;
    if (kept == 0) clear_current_bit(level);
  }
  std::size_t run_kept = 0;
  for (std::size_t i = run_head_; i < run_.size(); ++i) {
    if (!release_if_cancelled(run_[i].slot)) run_[run_kept++] = run_[i];
  }
  run_.resize(run_kept);
  run_head_ = 0;
  for (int level = 0; level < kLevels; ++level) {
    for (uint32_t w = 0; w < kMaskWords; ++w) {
      for (uint64_t bits = digit_mask_[level][w]; bits != 0; bits &= bits - 1) {
        compact_bucket(level, w * 64 + static_cast<uint32_t>(std::countr_zero(bits)));
      }
    }
  }
  stale_ = 0;
}

void Simulator::execute_front() {
  uint32_t slot;
  if (early_.empty()) [[likely]] {
    if (front_in_run_) {
      front_in_run_ = false;
      slot = run_[run_head_].slot;
      pop_run_front();
    } else {
      slot = pop_current(current_level());
    }
    now_ = Time{static_cast<int64_t>(radix_time_)};
  } else {
    slot = early_.front().slot;
    now_ = Time{static_cast<int64_t>(early_.front().time)};
    std::pop_heap(early_.begin(), early_.end(), std::greater<>{});
    early_.pop_back();
  }
  // The generation moves on before the call, so the running event is no longer pending
  // (cancel() of itself returns false), but the slot is freed only after the call: chunks never
  // move, so the callable can safely schedule events while it runs.
  Slot& sl = slot_at(slot);
  next_gen(sl);
  --live_;
  sl.cb();
  sl.cb.reset();
  free_.push_back(slot);
  ++executed_;
}

Time Simulator::next_event_time() {
  // With nothing cancelled, the front of run_ or the lowest bucket's minimum is exact: read it
  // without moving the radix time past now(), so that events scheduled next still go to the
  // buckets rather than the early heap.
  if (settle(stale_ == 0 ? static_cast<uint64_t>(now_.ps) : UINT64_MAX)) {
    return Time{static_cast<int64_t>(front_time())};
  }
  if (!run_empty()) return Time{static_cast<int64_t>(run_[run_head_].time)};
  if (level_mask_ == 0) return Time::max();
  int level;
  uint32_t digit;
  return Time{static_cast<int64_t>(lowest_bucket(level, digit).min)};
}

bool Simulator::step() {
  if (!settle(UINT64_MAX)) return false;
  execute_front();
  return true;
}

void Simulator::run() {
  run_until(Time::max());
}

void Simulator::run_until(Time limit) {
  stopped_ = false;
  if (limit < now_) return;  // every pending event is at now() or later
  const auto last = static_cast<uint64_t>(limit.ps);
  while (!stopped_) {
    if (!settle(last) || front_time() > last) break;
    execute_front();
    if (stop_predicate_ && stop_predicate_()) stopped_ = true;
  }
  if (!stopped_ && limit != Time::max() && limit > now_) now_ = limit;
}

}  // namespace ridge::sim
