#include "sim/flow.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/trace.hpp"

namespace ridge::sim {

namespace {

// Spare capacity below this fraction of a link's capacity counts as saturated. Loads are sums
// of doubles, so exact zero cannot be relied on; the fast paths treat "nearly saturated" as
// saturated, which only sends more changes to the exact recompute.
constexpr double kSaturationTolerance = 1e-9;

// Two rates this close (relative) are the same allocation computed in a different order; keeping
// the old one avoids rescheduling completions for rounding noise.
constexpr double kRateTolerance = 1e-12;

bool share_after(const auto& a, const auto& b) {  // min-heap order for std::*_heap
  return a.share > b.share || (a.share == b.share && a.link > b.link);
}

}  // namespace

FlowNetwork::FlowNetwork(Simulator& sim) : sim_(sim) {}

FlowNetwork::~FlowNetwork() {
  // Events that capture `this` must not run after the network is gone.
  if (completion_pending_) sim_.cancel(completion_event_);
  if (settle_pending_) sim_.cancel(settle_event_);
  for (Flow& fl : flows_) {
    if (fl.state == State::kLatency) sim_.cancel(fl.arrival);
  }
}

LinkId FlowNetwork::add_link(std::string name, double capacity_bytes_per_s, Time latency) {
  if (!(capacity_bytes_per_s >= 0) || !std::isfinite(capacity_bytes_per_s)) {
    throw std::invalid_argument("FlowNetwork: link '" + name + "' needs a finite capacity >= 0");
  }
  if (latency < Time{}) throw std::invalid_argument("FlowNetwork: negative latency");
  Link l;
  l.counter_name = name + " utilisation";
  l.name = std::move(name);
  l.capacity = capacity_bytes_per_s;
  l.latency = latency;
  l.created = sim_.now();
  links_.push_back(std::move(l));
  return LinkId{static_cast<uint32_t>(links_.size() - 1)};
}

void FlowNetwork::set_link_capacity(LinkId link, double capacity_bytes_per_s) {
  if (!(capacity_bytes_per_s >= 0) || !std::isfinite(capacity_bytes_per_s)) {
    throw std::invalid_argument("FlowNetwork: capacity must be finite and >= 0");
  }
  Link& l = links_.at(link.index);
  l.capacity = capacity_bytes_per_s;
  if (!l.dirty) {
    l.dirty = true;
    dirty_links_.push_back(link.index);
  }
  request_settle();
}

uint32_t FlowNetwork::lookup(FlowId id) const {
  const auto slot = static_cast<uint32_t>(id.value);
  if (!id.valid() || slot >= flows_.size()) return kNone;
  const Flow& fl = flows_[slot];
  if (fl.gen != static_cast<uint32_t>(id.value >> 32) || fl.state == State::kFree) return kNone;
  return slot;
}

FlowId FlowNetwork::start_flow(std::span<const LinkId> path, double bytes, Callback on_complete,
                               double max_rate_bytes_per_s, std::string_view trace_name) {
  if (!(bytes >= 0) || !std::isfinite(bytes)) {
    throw std::invalid_argument("FlowNetwork: flow size must be finite and >= 0");
  }
  if (!(max_rate_bytes_per_s >= 0)) {
    throw std::invalid_argument("FlowNetwork: max rate must be >= 0");
  }
  Time latency{};
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i].index >= links_.size()) throw std::out_of_range("FlowNetwork: unknown link");
    for (std::size_t j = 0; j < i; ++j) {
      if (path[j] == path[i]) throw std::invalid_argument("FlowNetwork: link repeated in path");
    }
    latency += links_[path[i].index].latency;
  }

  uint32_t f;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<uint32_t>(flows_.size());
    flows_.emplace_back();
    fixed_.push_back(0);
  }
  Flow& fl = flows_[f];
  fl.path.assign(path.begin(), path.end());
  fl.bytes = bytes;
  fl.remaining = bytes;
  fl.rate = 0;
  fl.cap = max_rate_bytes_per_s;
  fl.started = sim_.now();
  fl.finish = Time::max();
  fl.seq = next_seq_++;
  fl.on_complete = std::move(on_complete);
  fl.trace_name.assign(trace_name);
  ++active_;
  const FlowId id{(static_cast<uint64_t>(fl.gen) << 32) | f};
  if (latency > Time{}) {
    fl.state = State::kLatency;
    fl.arrival = sim_.schedule_after(latency, [this, f] { arrive(f); });
  } else {
    fl.state = State::kLatency;
    arrive(f);
  }
  return id;
}

void FlowNetwork::arrive(uint32_t f) {
  Flow& fl = flows_[f];
  fl.state = State::kMoving;
  fl.arrival = EventId{};
  fl.arrived = sim_.now();
  fl.last_update = sim_.now();
  fl.hops.resize(fl.path.size());
  bool fast = std::isfinite(fl.cap);
  for (std::size_t h = 0; h < fl.path.size(); ++h) {
    const uint32_t li = fl.path[h].index;
    Link& l = links_[li];
    fl.hops[h] = Hop{li, static_cast<uint32_t>(l.flows.size())};
    l.flows.push_back(LinkEntry{f, static_cast<uint32_t>(h)});
    if (l.dirty || fl.cap > (l.capacity - l.load) - kSaturationTolerance * l.capacity) {
      fast = false;
    }
  }
  if (fl.path.empty()) {
    // Nothing to share: it moves at its cap (an uncapped one completes at once).
    set_rate(f, fl.cap);
    arm();
    return;
  }
  if (fast) {
    ++fast_updates_;
    for (const Hop& h : fl.hops) set_load(h.link, links_[h.link].load + fl.cap);
    set_rate(f, fl.cap);
    arm();
    notify_settled();
    return;
  }
  mark_dirty(f);
  request_settle();
}

// Takes a moving flow off its links; the others are re-shared now (fast path) or at the settle.
void FlowNetwork::depart(uint32_t f) {
  Flow& fl = flows_[f];
  bool fast = true;
  for (const Hop& h : fl.hops) {
    const Link& l = links_[h.link];
    if (l.dirty || l.capacity - l.load <= kSaturationTolerance * l.capacity) fast = false;
  }
  for (const Hop& h : fl.hops) {
    Link& l = links_[h.link];
    const LinkEntry moved = l.flows.back();
    l.flows[h.pos] = moved;
    flows_[moved.flow].hops[moved.hop].pos = h.pos;
    l.flows.pop_back();
  }
  if (fl.hops.empty()) return;
  if (fast) {
    ++fast_updates_;
    for (const Hop& h : fl.hops) {
      Link& l = links_[h.link];
      set_load(h.link, l.flows.empty() ? 0.0 : std::max(0.0, l.load - fl.rate));
    }
  } else {
    mark_dirty(f);
    request_settle();
  }
}

void FlowNetwork::mark_dirty(uint32_t f) {
  for (const Hop& h : flows_[f].hops) {
    Link& l = links_[h.link];
    if (!l.dirty) {
      l.dirty = true;
      dirty_links_.push_back(h.link);
    }
  }
}

void FlowNetwork::request_settle() {
  if (settle_pending_) return;
  settle_pending_ = true;
  settle_event_ = sim_.schedule_at(
      sim_.now(), [this] { settle(); }, Priority::kLast);
}

void FlowNetwork::release(uint32_t f) {
  Flow& fl = flows_[f];
  if (fl.heap_pos != kNone) heap_remove(f);
  fl.state = State::kFree;
  if (++fl.gen == 0) fl.gen = 1;
  fl.on_complete.reset();
  fl.hops.clear();
  fl.path.clear();
  fl.trace_rates.clear();
  fl.rate = 0;
  --active_;
  free_flows_.push_back(f);
}

// Moves a flow's remaining bytes forward to now at its current rate, crediting its links.
void FlowNetwork::advance(Flow& fl) {
  const Time now = sim_.now();
  const Time dt = now - fl.last_update;
  fl.last_update = now;
  if (dt.ps <= 0 || fl.rate <= 0) return;
  const double moved = std::min(fl.remaining, fl.rate * (static_cast<double>(dt.ps) * 1e-12));
  fl.remaining -= moved;
  for (const Hop& h : fl.hops) links_[h.link].bytes += moved;
}

void FlowNetwork::set_rate(uint32_t f, double rate) {
  Flow& fl = flows_[f];
  advance(fl);
  fl.rate = rate;
  if (Tracer* t = sim_.tracer()) {
    (void)t;
    fl.trace_rates.emplace_back(sim_.now(), rate);
  }
  update_finish(f);
}

void FlowNetwork::update_finish(uint32_t f) {
  Flow& fl = flows_[f];
  const Time now = sim_.now();
  if (fl.remaining <= finish_epsilon(fl)) {
    fl.finish = now;
  } else if (fl.rate <= 0) {
    fl.finish = Time::max();
  } else {
    const Time d = Time::ceil_seconds(fl.remaining / fl.rate);
    fl.finish = d >= Time::max() - now ? Time::max() : now + d;
  }
  if (fl.finish == Time::max()) {
    if (fl.heap_pos != kNone) heap_remove(f);
  } else if (fl.heap_pos == kNone) {
    fl.heap_pos = static_cast<uint32_t>(heap_.size());
    heap_.push_back(f);
    heap_up(heap_.size() - 1);
  } else {
    heap_update(f);
  }
}

void FlowNetwork::set_load(uint32_t li, double load) {
  Link& l = links_[li];
  const Time now = sim_.now();
  if (l.load <= 0 && load > 0) l.busy_since = now;
  if (l.load > 0 && load <= 0) l.busy += now - l.busy_since;
  const bool changed = l.load != load;
  l.load = load;
  if (changed) {
    if (Tracer* t = sim_.tracer()) {
      t->counter("links", l.counter_name, now, l.capacity > 0 ? load / l.capacity : 0.0);
    }
  }
}

void FlowNetwork::settle() {
  settle_pending_ = false;
  ++epoch_;
  comp_links_.clear();
  comp_flows_.clear();
  for (const uint32_t li : dirty_links_) {
    Link& l = links_[li];
    l.dirty = false;
    if (l.mark != epoch_) {
      l.mark = epoch_;
      comp_links_.push_back(li);
    }
  }
  dirty_links_.clear();
  // The connected component(s) of the changed links: links joined by flows crossing them.
  for (std::size_t i = 0; i < comp_links_.size(); ++i) {
    const Link& l = links_[comp_links_[i]];
    for (const LinkEntry& e : l.flows) {
      Flow& fl = flows_[e.flow];
      if (fl.mark == epoch_) continue;
      fl.mark = epoch_;
      comp_flows_.push_back(e.flow);
      for (const Hop& h : fl.hops) {
        Link& m = links_[h.link];
        if (m.mark != epoch_) {
          m.mark = epoch_;
          comp_links_.push_back(h.link);
        }
      }
    }
  }
  fill();
  for (const uint32_t f : comp_flows_) {
    const Flow& fl = flows_[f];
    const double diff = std::fabs(fl.new_rate - fl.rate);
    if (diff > kRateTolerance * std::max(fl.new_rate, fl.rate) ||
        (fl.rate == 0) != (fl.new_rate == 0)) {
      set_rate(f, fl.new_rate);
    }
  }
  for (const uint32_t li : comp_links_) {
    double load = 0;
    for (const LinkEntry& e : links_[li].flows) load += flows_[e.flow].rate;
    set_load(li, load);
  }
  ++recomputes_;
  arm();
  notify_settled();
}

// Progressive filling over comp_flows_/comp_links_: raise every unfixed flow's rate together;
// when a link runs out of capacity, its unfixed flows are fixed at the link's fair share; when
// the level reaches a flow's cap, that flow is fixed at its cap. The level only rises, so the
// link with the least share per unfixed flow is the next bottleneck: found by a scan when the
// component has few links (the scan is cheaper than heap upkeep per fixed flow), else from a
// lazy min-heap of (share, link, version).
void FlowNetwork::fill() {
  share_heap_.clear();
  capped_.clear();
  scan_links_ = comp_links_.size() <= kScanLinks;
  for (const uint32_t li : comp_links_) {
    Link& l = links_[li];
    l.rem = l.capacity;
    l.cnt = static_cast<uint32_t>(l.flows.size());
    ++l.ver;
    if (!scan_links_ && l.cnt > 0) share_heap_.push_back(ShareEntry{l.rem / l.cnt, li, l.ver});
  }
  const auto cmp = [](const ShareEntry& a, const ShareEntry& b) { return share_after(a, b); };
  std::make_heap(share_heap_.begin(), share_heap_.end(), cmp);
  for (const uint32_t f : comp_flows_) {
    fixed_[f] = 0;
    if (std::isfinite(flows_[f].cap)) capped_.push_back(f);
  }
  std::sort(capped_.begin(), capped_.end(), [this](uint32_t a, uint32_t b) {
    const Flow& x = flows_[a];
    const Flow& y = flows_[b];
    return x.cap < y.cap || (x.cap == y.cap && x.seq < y.seq);
  });
  unfixed_ = static_cast<uint32_t>(comp_flows_.size());
  std::size_t ci = 0;
  while (unfixed_ > 0) {
    uint32_t bottleneck = kNone;
    double level = kNoRateLimit;
    if (scan_links_) {
      for (const uint32_t li : comp_links_) {
        const Link& l = links_[li];
        if (l.cnt == 0) continue;
        const double share = std::max(0.0, l.rem) / l.cnt;
        if (share < level || bottleneck == kNone) {
          level = share;
          bottleneck = li;
        }
      }
    } else {
      while (!share_heap_.empty()) {
        const ShareEntry& top = share_heap_.front();
        const Link& l = links_[top.link];
        if (top.ver == l.ver && l.cnt > 0) break;
        std::pop_heap(share_heap_.begin(), share_heap_.end(), cmp);
        share_heap_.pop_back();
      }
      if (!share_heap_.empty()) {
        level = std::max(0.0, share_heap_.front().share);
        bottleneck = share_heap_.front().link;
      }
    }
    while (ci < capped_.size() && fixed_[capped_[ci]]) ++ci;
    if (ci < capped_.size() && flows_[capped_[ci]].cap <= level) {
      for (; ci < capped_.size() && flows_[capped_[ci]].cap <= level; ++ci) {
        const uint32_t f = capped_[ci];
        if (!fixed_[f]) fix(f, flows_[f].cap, kNone);
      }
      continue;
    }
    if (bottleneck == kNone) break;  // cannot happen: every flow here crosses a link
    if (!scan_links_) {
      std::pop_heap(share_heap_.begin(), share_heap_.end(), cmp);
      share_heap_.pop_back();
    }
    Link& l = links_[bottleneck];
    for (const LinkEntry& e : l.flows) {
      if (!fixed_[e.flow]) fix(e.flow, level, bottleneck);
    }
    l.cnt = 0;
    ++l.ver;
  }
}

void FlowNetwork::fix(uint32_t f, double rate, uint32_t skip_link) {
  Flow& fl = flows_[f];
  fixed_[f] = 1;
  fl.new_rate = rate;
  --unfixed_;
  for (const Hop& h : fl.hops) {
    if (h.link == skip_link) continue;
    Link& m = links_[h.link];
    m.rem -= rate;
    --m.cnt;
    if (scan_links_) continue;
    ++m.ver;
    if (m.cnt > 0) {
      share_heap_.push_back(ShareEntry{std::max(0.0, m.rem) / m.cnt, h.link, m.ver});
      std::push_heap(share_heap_.begin(), share_heap_.end(),
                     [](const ShareEntry& a, const ShareEntry& b) { return share_after(a, b); });
    }
  }
}

void FlowNetwork::arm() {
  if (heap_.empty()) return;
  const Time t = flows_[heap_[0]].finish;
  if (completion_pending_) {
    if (completion_time_ <= t) return;  // fires first; it re-arms for what is then due
    sim_.cancel(completion_event_);
  }
  completion_pending_ = true;
  completion_time_ = t;
  completion_event_ = sim_.schedule_at(t, [this] { on_completion_event(); });
}

void FlowNetwork::on_completion_event() {
  completion_pending_ = false;
  completion_time_ = Time::max();
  const Time now = sim_.now();
  std::vector<Callback> callbacks = std::move(done_callbacks_);
  callbacks.clear();
  while (!heap_.empty() && flows_[heap_[0]].finish <= now) {
    const uint32_t f = heap_[0];
    heap_remove(f);
    Flow& fl = flows_[f];
    // Credit exactly what was left: the completion time was rounded up, so the last partial
    // picosecond would otherwise over- or under-count.
    for (const Hop& h : fl.hops) {
      links_[h.link].bytes += fl.remaining;
      ++links_[h.link].completed;
    }
    fl.remaining = 0;
    fl.last_update = now;
    depart(f);
    trace_flow_end(flows_[f], false);
    callbacks.push_back(std::move(flows_[f].on_complete));
    release(f);
  }
  arm();
  if (!settle_pending_) notify_settled();
  for (Callback& cb : callbacks) {
    if (cb) cb();
  }
  callbacks.clear();
  if (done_callbacks_.capacity() < callbacks.capacity()) done_callbacks_ = std::move(callbacks);
}

bool FlowNetwork::cancel_flow(FlowId id) {
  const uint32_t f = lookup(id);
  if (f == kNone) return false;
  Flow& fl = flows_[f];
  if (fl.state == State::kLatency) {
    sim_.cancel(fl.arrival);
  } else {
    advance(fl);
    depart(f);
    trace_flow_end(flows_[f], true);
  }
  release(f);
  if (!settle_pending_) notify_settled();
  return true;
}

void FlowNetwork::trace_flow_end(const Flow& fl, bool cancelled) {
  Tracer* t = sim_.tracer();
  if (t == nullptr) return;
  std::string args =
      fmt::format("{{\"flow\":{},\"bytes\":{},\"links\":[", fl.seq, Tracer::json_number(fl.bytes));
  for (std::size_t i = 0; i < fl.path.size(); ++i) {
    args +=
        fmt::format("{}\"{}\"", i ? "," : "", Tracer::json_escape(links_[fl.path[i].index].name));
  }
  args += "],\"rate_Bps_from_us\":[";
  for (std::size_t i = 0; i < fl.trace_rates.size(); ++i) {
    args += fmt::format("{}[{},{}]", i ? "," : "", Tracer::format_us(fl.trace_rates[i].first),
                        Tracer::json_number(fl.trace_rates[i].second));
  }
  args += "]";
  if (cancelled) args += ",\"cancelled\":true";
  args += "}";
  const std::string name = fl.trace_name.empty() ? fmt::format("flow {}", fl.seq) : fl.trace_name;
  t->slice("flows", fl.trace_name.empty() ? std::string_view("flows") : fl.trace_name, name,
           fl.arrived, sim_.now(), args);
}

void FlowNetwork::notify_settled() {
  if (settled_hook_) settled_hook_();
}

double FlowNetwork::flow_rate(FlowId id) const {
  const uint32_t f = lookup(id);
  return f == kNone ? 0.0 : flows_[f].rate;
}

double FlowNetwork::flow_remaining_bytes(FlowId id) const {
  const uint32_t f = lookup(id);
  if (f == kNone) return 0.0;
  const Flow& fl = flows_[f];
  const double dt = static_cast<double>((sim_.now() - fl.last_update).ps) * 1e-12;
  return std::max(0.0, fl.remaining - (fl.rate > 0 ? fl.rate * dt : 0.0));
}

Time FlowNetwork::flow_finish_time(FlowId id) const {
  const uint32_t f = lookup(id);
  return f == kNone ? Time::max() : flows_[f].finish;
}

void FlowNetwork::for_each_flow(const std::function<void(const FlowInfo&)>& fn) const {
  std::vector<uint32_t> order;
  for (uint32_t f = 0; f < flows_.size(); ++f) {
    if (flows_[f].state != State::kFree) order.push_back(f);
  }
  std::sort(order.begin(), order.end(),
            [this](uint32_t a, uint32_t b) { return flows_[a].seq < flows_[b].seq; });
  for (const uint32_t f : order) {
    const Flow& fl = flows_[f];
    fn(FlowInfo{FlowId{(static_cast<uint64_t>(fl.gen) << 32) | f}, fl.path, fl.bytes, fl.cap,
                fl.rate, fl.state == State::kMoving});
  }
}

LinkStats FlowNetwork::link_stats(LinkId link) const {
  const Link& l = links_.at(link.index);
  const Time now = sim_.now();
  LinkStats s;
  s.observed = now - l.created;
  s.busy = l.busy + (l.load > 0 ? now - l.busy_since : Time{});
  // Bytes moved by flows still running since their last rate change are not yet credited.
  double pending = 0;
  for (const LinkEntry& e : l.flows) {
    const Flow& fl = flows_[e.flow];
    const double dt = static_cast<double>((now - fl.last_update).ps) * 1e-12;
    pending += std::min(fl.remaining, fl.rate * dt);
  }
  s.bytes = l.bytes + pending;
  s.mean_rate = s.observed.ps > 0 ? s.bytes / s.observed.seconds() : 0.0;
  s.mean_rate_busy = s.busy.ps > 0 ? s.bytes / s.busy.seconds() : 0.0;
  s.utilisation = l.capacity > 0 ? s.mean_rate / l.capacity : 0.0;
  s.flows_completed = l.completed;
  return s;
}

void FlowNetwork::heap_up(std::size_t i) {
  const uint32_t f = heap_[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!heap_before(f, heap_[parent])) break;
    heap_place(i, heap_[parent]);
    i = parent;
  }
  heap_place(i, f);
}

void FlowNetwork::heap_down(std::size_t i) {
  const uint32_t f = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && heap_before(heap_[c + 1], heap_[c])) ++c;
    if (!heap_before(heap_[c], f)) break;
    heap_place(i, heap_[c]);
    i = c;
  }
  heap_place(i, f);
}

void FlowNetwork::heap_update(uint32_t f) {
  const std::size_t i = flows_[f].heap_pos;
  heap_up(i);
  heap_down(flows_[f].heap_pos);
}

void FlowNetwork::heap_remove(uint32_t f) {
  const std::size_t i = flows_[f].heap_pos;
  flows_[f].heap_pos = kNone;
  const uint32_t last = heap_.back();
  heap_.pop_back();
  if (i < heap_.size()) {
    heap_place(i, last);
    heap_update(last);
  }
}

}  // namespace ridge::sim
