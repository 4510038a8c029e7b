#include "sim/simulator.hpp"

#include <algorithm>
#include <memory>
#include <string>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace ridge::sim {

Simulator::Simulator() {
  keys_.resize(kPad);
  slots_.resize(kPad);
}
Simulator::~Simulator() {
  for (uint32_t c = 0; c < chunks_.size(); ++c) {
    const std::size_t n = std::size_t{kChunkSize} << c;
    std::destroy_n(chunks_[c], n);
    deallocate_bytes(chunks_[c], n * sizeof(Slot));
  }
}

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this many pending events the heap (16 B each) and the slots they use sit in L1/L2, and
// prefetching only adds instructions.
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

void Simulator::throw_in_past(Time t) const {
  throw std::invalid_argument("ridge::sim::Simulator: event scheduled at " + std::to_string(t.ps) +
                              " ps, before now (" + std::to_string(now_.ps) + " ps)");
}

bool Simulator::cancel(EventId id) {
  if (!is_pending(id)) return false;
  Slot& sl = slot_at(static_cast<uint32_t>(id.value));
  sl.cb.reset();
  next_gen(sl);
  sl.cancelled = true;  // the slot is freed when its entry leaves the heap
  --live_;
  ++stale_;
  // Stale entries cost heap depth and memory; rebuild once they are the majority.
  if (stale_ > 1024 && stale_ * 2 > heap_size()) compact();
  return true;
}

// Places (k, slot) at position i or below. The smallest of four children is chosen with
// conditional moves rather than branches: which child is smallest is a coin toss, and
// mispredicted branches cost more than the compares.
void Simulator::sift_down(std::size_t i, Key k, uint32_t slot) {
  const std::size_t n = heap_size();
  const Key* key = keys_.data() + kPad;
  const uint32_t* slot_index = slots_.data() + kPad;
  const bool deep = n > kPrefetchFrom;
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best;
    Key kb;
    // The next level's four candidate child groups are one cache line each: start loading them
    // all now, since with conditional moves the CPU cannot guess which it will need.
    // Their sixteen slot indices (64 bytes, over at most two lines) are loaded when an entry
    // moves up: without this, that load, not the keys, is the miss that stalls each level once
    // the heap outgrows the caches.
    const std::size_t grand = 4 * first + 1;
    if (deep && grand < n) {
      for (std::size_t g = 0; g < 4; ++g) __builtin_prefetch(key + grand + 4 * g);
      __builtin_prefetch(slot_index + grand);
      __builtin_prefetch(slot_index + grand + 15);
    }
    if (first + 4 <= n) {
      const Key k0 = key[first], k1 = key[first + 1], k2 = key[first + 2], k3 = key[first + 3];
      const bool b01 = k1 < k0;
      const bool b23 = k3 < k2;
      const Key m01 = b01 ? k1 : k0;
      const Key m23 = b23 ? k3 : k2;
      const bool b = m23 < m01;
      kb = b ? m23 : m01;
      best = first + (b ? 2 + static_cast<std::size_t>(b23) : static_cast<std::size_t>(b01));
    } else {
      best = first;
      kb = key[first];
      for (std::size_t c = first + 1; c < n; ++c) {
        if (key[c] < kb) {
          kb = key[c];
          best = c;
        }
      }
    }
    if (!(kb < k)) break;
    move_entry(i, best);
    i = best;
  }
  place(i, k, slot);
}

void Simulator::pop_top() {
  const Key k = keys_.back();
  const uint32_t slot = slots_.back();
  keys_.pop_back();
  slots_.pop_back();
  if (heap_size() > 0) sift_down(0, k, slot);
}

void Simulator::compact() {
  settle_top();
  std::size_t kept = 0;
  const std::size_t n = heap_size();
  for (std::size_t i = 0; i < n; ++i) {
    const uint32_t slot = slots_[i + kPad];
    Slot& sl = slot_at(slot);
    if (sl.cancelled) {
      sl.cancelled = false;
      free_.push_back(slot);
    } else {
      move_entry(kept++, i);
    }
  }
  keys_.resize(kept + kPad);
  slots_.resize(kept + kPad);
  stale_ = 0;
  if (kept > 1) {
    for (std::size_t i = (kept - 2) / 4 + 1; i-- > 0;) {
      sift_down(i, keys_[i + kPad], slots_[i + kPad]);
    }
  }
}

// Pops cancelled entries off the top (freeing their slots); returns whether an event remains.
bool Simulator::discard_stale_top() {
  settle_top();
  if (stale_ == 0) return heap_size() > 0;  // nothing cancelled: skip reading the top's slot
  while (heap_size() > 0) {
    const uint32_t slot = slots_[kPad];
    Slot& sl = slot_at(slot);
    if (!sl.cancelled) return true;
    sl.cancelled = false;
    free_.push_back(slot);
    pop_top();
    --stale_;
  }
  return false;
}

void Simulator::execute_top() {
  const uint32_t top_slot = slots_[kPad];
  top_is_done_ = true;  // removed lazily: the first event it schedules takes its place
  now_ = Time{key_time(keys_[kPad])};
  // The next event is the smallest child of the top, unless this one schedules an earlier one:
  // start loading its slot now so the miss overlaps this callback (matters in large queues).
  const std::size_t n = heap_size();
  if (n > kPrefetchFrom) {
    std::size_t best = 1;
    for (std::size_t c = 2; c < std::min<std::size_t>(5, n); ++c) {
      if (keys_[c + kPad] < keys_[best + kPad]) best = c;
    }
    __builtin_prefetch(&slot_at(slots_[best + kPad]));
  }
  // The generation moves on before the call, so the running event is no longer pending
  // (cancel() of itself returns false), but the slot is freed only after the call: chunks never
  // move, so the callable can safely schedule events while it runs.
  Slot& sl = slot_at(top_slot);
  next_gen(sl);
  --live_;
  sl.cb();
  sl.cb.reset();
  free_.push_back(top_slot);
  settle_top();
  ++executed_;
}

Time Simulator::next_event_time() {
  return discard_stale_top() ? Time{key_time(keys_[kPad])} : Time::max();
}

bool Simulator::step() {
  if (!discard_stale_top()) return false;
  execute_top();
  return true;
}

void Simulator::run() {
  run_until(Time::max());
}

void Simulator::run_until(Time limit) {
  stopped_ = false;
  while (!stopped_) {
    if (!discard_stale_top()) break;
    if (key_time(keys_[kPad]) > limit.ps) break;
    execute_top();
    if (stop_predicate_ && stop_predicate_()) stopped_ = true;
  }
  if (!stopped_ && limit != Time::max() && limit > now_) now_ = limit;
}

}  // namespace ridge::sim
