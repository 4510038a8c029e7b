#include "sim/simulator.hpp"

#include <algorithm>
#include <string>

namespace ridge::sim {

Simulator::Simulator() = default;
Simulator::~Simulator() = default;

uint32_t Simulator::grow_slot() {
  const auto slot = static_cast<uint32_t>(gen_.size());
  if ((slot & (kChunkSize - 1)) == 0) chunks_.push_back(std::make_unique<Callback[]>(kChunkSize));
  gen_.push_back(1);
  return slot;
}

void Simulator::throw_in_past(Time t) const {
  throw std::invalid_argument("ridge::sim::Simulator: event scheduled at " + std::to_string(t.ps) +
                              " ps, before now (" + std::to_string(now_.ps) + " ps)");
}

bool Simulator::cancel(EventId id) {
  if (!is_pending(id)) return false;
  const auto slot = static_cast<uint32_t>(id.value);
  callback(slot).reset();
  release_slot(slot);
  --live_;
  ++stale_;
  // Stale entries cost heap depth and memory; rebuild once they are the majority.
  if (stale_ > 1024 && stale_ * 2 > heap_.size()) compact();
  return true;
}

void Simulator::sift_down(std::size_t i) {
  const std::size_t n = heap_.size();
  const Entry e = heap_[i];
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t last = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < last; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

void Simulator::pop_top() {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) {
    heap_[0] = last;
    sift_down(0);
  }
}

void Simulator::compact() {
  std::erase_if(heap_, [this](const Entry& e) { return gen_[e.slot] != e.gen; });
  stale_ = 0;
  if (heap_.size() > 1) {
    for (std::size_t i = (heap_.size() - 2) / 4 + 1; i-- > 0;) sift_down(i);
  }
}

// Pops cancelled entries off the top; returns whether a live event is on top.
bool Simulator::discard_stale_top() {
  while (!heap_.empty()) {
    const Entry& top = heap_[0];
    if (gen_[top.slot] == top.gen) return true;
    pop_top();
    --stale_;
  }
  return false;
}

void Simulator::execute_top() {
  const Entry top = heap_[0];
  pop_top();
  now_ = Time{top.time};
  // The slot's generation moves on before the call, so the running event is no longer pending
  // (cancel() of itself returns false), but the slot is freed only after the call: chunks never
  // move, so the callable can safely schedule events while it runs.
  uint32_t& g = gen_[top.slot];
  if (++g == 0) g = 1;
  --live_;
  Callback& cb = callback(top.slot);
  cb();
  cb.reset();
  free_.push_back(top.slot);
  ++executed_;
}

Time Simulator::next_event_time() {
  return discard_stale_top() ? Time{heap_[0].time} : Time::max();
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
    if (heap_.empty()) break;
    const Entry& top = heap_[0];
    if (gen_[top.slot] != top.gen) {
      pop_top();
      --stale_;
      continue;
    }
    if (top.time > limit.ps) break;
    execute_top();
    if (stop_predicate_ && stop_predicate_()) stopped_ = true;
  }
  if (!stopped_ && limit != Time::max() && limit > now_) now_ = limit;
}

}  // namespace ridge::sim
