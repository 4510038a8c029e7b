#include "sim/resource.hpp"

#include <stdexcept>
#include <utility>

#include "sim/trace.hpp"

namespace ridge::sim {

Resource::Resource(Simulator& sim, std::string name, int64_t capacity)
    : sim_(sim),
      name_(std::move(name)),
      capacity_(capacity),
      created_(sim.now()),
      last_change_(sim.now()) {
  if (capacity <= 0) throw std::invalid_argument("Resource '" + name_ + "': capacity must be > 0");
}

void Resource::set_in_use(int64_t v) {
  const Time now = sim_.now();
  unit_ps_ += static_cast<double>(in_use_) * static_cast<double>((now - last_change_).ps);
  last_change_ = now;
  if (in_use_ == 0 && v > 0) busy_since_ = now;
  if (in_use_ > 0 && v == 0) {
    busy_ += now - busy_since_;
    if (Tracer* t = sim_.tracer()) t->slice("resources", name_, "busy", busy_since_, now);
  }
  in_use_ = v;
  if (Tracer* t = sim_.tracer()) {
    t->counter("resources", name_ + " units in use", now, static_cast<double>(v));
  }
}

void Resource::acquire(int64_t units, Callback on_grant) {
  if (units <= 0 || units > capacity_) {
    throw std::invalid_argument("Resource '" + name_ + "': acquire(" + std::to_string(units) +
                                ") outside 1.." + std::to_string(capacity_));
  }
  waiters_.push_back(Waiter{units, sim_.now(), std::move(on_grant)});
  dispatch();
}

void Resource::release(int64_t units) {
  if (units <= 0 || units > in_use_) {
    throw std::logic_error("Resource '" + name_ + "': release(" + std::to_string(units) +
                           ") with " + std::to_string(in_use_) + " units in use");
  }
  set_in_use(in_use_ - units);
  dispatch();
}

void Resource::dispatch() {
  // A grant callback may release (or acquire) re-entrantly; the outer loop keeps draining.
  if (dispatching_) return;
  dispatching_ = true;
  while (!waiters_.empty() && waiters_.front().units <= capacity_ - in_use_) {
    Waiter w = std::move(waiters_.front());
    waiters_.pop_front();
    set_in_use(in_use_ + w.units);
    ++grants_;
    total_wait_ += sim_.now() - w.requested;
    w.on_grant();
  }
  dispatching_ = false;
}

ResourceStats Resource::stats() const {
  const Time now = sim_.now();
  ResourceStats s;
  s.observed = now - created_;
  s.busy = busy_ + (in_use_ > 0 ? now - busy_since_ : Time{});
  const double unit_ps =
      unit_ps_ + static_cast<double>(in_use_) * static_cast<double>((now - last_change_).ps);
  s.unit_seconds = unit_ps * 1e-12;
  s.utilisation =
      s.observed.ps > 0 ? unit_ps / (static_cast<double>(capacity_) * s.observed.ps) : 0.0;
  s.grants = grants_;
  s.total_wait = total_wait_;
  return s;
}

Join::Join(int64_t count, Callback on_all_done)
    : remaining_(count), on_all_done_(std::move(on_all_done)) {
  if (count < 0) throw std::invalid_argument("Join: negative count");
  if (count == 0 && on_all_done_) on_all_done_();
}

void Join::arrive(int64_t n) {
  if (n <= 0 || n > remaining_) throw std::logic_error("Join: more arrivals than expected");
  remaining_ -= n;
  if (remaining_ == 0 && on_all_done_) {
    Callback cb = std::move(on_all_done_);
    cb();  // may destroy this Join
  }
}

void Join::add(int64_t n) {
  if (n < 0 || remaining_ == 0) throw std::logic_error("Join: add() after completion");
  remaining_ += n;
}

}  // namespace ridge::sim
