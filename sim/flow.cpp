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

// A group's virtual clock is rebased to zero when it passes this many bytes per member.
constexpr double kRebaseBytes = 1e9;

// Indexed binary min-heap helpers: `before(a, b)` orders items, `place(i, x)` stores item x at
// index i and records i in x.
template <typename Vec, typename Before, typename Place>
void sift_up(Vec& h, std::size_t i, const Before& before, const Place& place) {
  const typename Vec::value_type x = h[i];
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(x, h[parent])) break;
    place(i, h[parent]);
    i = parent;
  }
  place(i, x);
}

template <typename Vec, typename Before, typename Place>
void sift_down(Vec& h, std::size_t i, const Before& before, const Place& place) {
  const typename Vec::value_type x = h[i];
  const std::size_t n = h.size();
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && before(h[c + 1], h[c])) ++c;
    if (!before(h[c], x)) break;
    place(i, h[c]);
    i = c;
  }
  place(i, x);
}

template <typename Vec, typename Before, typename Place>
void heap_fix(Vec& h, std::size_t i, const Before& before, const Place& place) {
  if (i > 0 && before(h[i], h[(i - 1) / 2])) {
    sift_up(h, i, before, place);
  } else {
    sift_down(h, i, before, place);
  }
}

template <typename Vec, typename Before, typename Place>
void heap_push(Vec& h, const typename Vec::value_type& x, const Before& before,
               const Place& place) {
  h.push_back(x);
  sift_up(h, h.size() - 1, before, place);
}

template <typename Vec, typename Before, typename Place>
void heap_erase(Vec& h, std::size_t i, const Before& before, const Place& place) {
  const typename Vec::value_type last = h.back();
  h.pop_back();
  if (i < h.size()) {
    place(i, last);
    heap_fix(h, i, before, place);
  }
}

double seconds(Time t) {
  return static_cast<double>(t.ps) * 1e-12;
}

// Whole picoseconds to move `bytes` at `rate`, rounded up, or nullopt-like Time::max().
Time finish_after(Time from, double bytes, double rate) {
  if (rate <= 0) return Time::max();
  const Time d = Time::ceil_seconds(bytes / rate);
  return d >= Time::max() - from ? Time::max() : from + d;
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
  l.name = std::move(name);
  l.capacity = capacity_bytes_per_s;
  l.latency = latency;
  l.created = sim_.now();
  l.members = PoolVector<Member>(FlowPoolAllocator<Member>(&pool_));
  l.glinks = PoolVector<GroupLink>(FlowPoolAllocator<GroupLink>(&pool_));
  l.live = PoolVector<LivePair>(FlowPoolAllocator<LivePair>(&pool_));
  l.pairs = PoolVector<uint32_t>(FlowPoolAllocator<uint32_t>(&pool_));
  // The pool's smallest block (16 B) holds two live pairs and four pair ids: reserving them
  // costs no more memory than the first push would, and saves the growth up to that.
  l.live.reserve(2);
  l.pairs.reserve(4);
  links_.push_back(std::move(l));
  const auto id = static_cast<uint32_t>(links_.size() - 1);
  group_pos_.push_back(kNone);
  // Its own island until a flow joins it to others; the filling's per-link state grows with it.
  island_parent_.push_back(id);
  island_pos_.push_back(0);
  island_links_.push_back({id});
  island_dirty_.push_back(0);
  records_.emplace_back();
  link_pending_.emplace_back();
  fill_rem_.push_back(0);
  fill_cnt_.push_back(0);
  fill_frozen_.push_back(1);
  fill_level_.push_back(0);
  fill_slot_.push_back(kNone);
  fill_link_.push_back(kNone);
  step_of_.push_back(kNone);
  return LinkId{id};
}

void FlowNetwork::reserve_links(std::size_t n) {
  links_.reserve(n);
  group_pos_.reserve(n);
  island_parent_.reserve(n);
  island_pos_.reserve(n);
  island_links_.reserve(n);
  island_dirty_.reserve(n);
  records_.reserve(n);
  link_pending_.reserve(n);
  fill_rem_.reserve(n);
  fill_cnt_.reserve(n);
  fill_frozen_.reserve(n);
  fill_level_.reserve(n);
  fill_slot_.reserve(n);
  fill_link_.reserve(n);
  step_of_.reserve(n);
}

void FlowNetwork::set_link_capacity(LinkId link, double capacity_bytes_per_s) {
  if (!(capacity_bytes_per_s >= 0) || !std::isfinite(capacity_bytes_per_s)) {
    throw std::invalid_argument("FlowNetwork: capacity must be finite and >= 0");
  }
  links_.at(link.index).capacity = capacity_bytes_per_s;
  forget_record(link.index);
  mark_dirty(link.index);
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
  // A repeated link is found by pairwise comparison on short paths and, on long ones (a ring
  // through a large network crosses thousands of links), by marking each link with this check's
  // epoch.
  constexpr std::size_t kPairwisePath = 32;
  if (path.size() > kPairwisePath) {
    if (path_mark_.size() < links_.size()) path_mark_.resize(links_.size(), 0);
    if (++path_epoch_ == 0) {
      std::fill(path_mark_.begin(), path_mark_.end(), 0);
      path_epoch_ = 1;
    }
  }
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i].index >= links_.size()) throw std::out_of_range("FlowNetwork: unknown link");
    if (path.size() > kPairwisePath) {
      if (path_mark_[path[i].index] == path_epoch_)
        throw std::invalid_argument("FlowNetwork: link repeated in path");
      path_mark_[path[i].index] = path_epoch_;
    } else {
      for (std::size_t j = 0; j < i; ++j) {
        if (path[j] == path[i]) throw std::invalid_argument("FlowNetwork: link repeated in path");
      }
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
    heap_pos_.push_back(kNone);
  }
  Flow& fl = flows_[f];
  fl.path.assign(path.begin(), path.end());
  fl.bytes = bytes;
  fl.rem_join = bytes;
  fl.cap = max_rate_bytes_per_s;
  fl.started = sim_.now();
  fl.finish = Time::max();
  fl.frozen_mark = 0;
  fl.group = kNone;
  fl.pending = false;
  heap_pos_[f] = kNone;
  fl.capped_moving = false;
  fl.in_sorted = false;
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
  const auto hop_count = static_cast<uint32_t>(fl.path.size());
  if (fl.hop_room < hop_count) {
    fl.hop_base = static_cast<uint32_t>(hops_.size());
    fl.hop_room = hop_count;
    hops_.resize(hops_.size() + hop_count);
  }
  fl.hop_count = hop_count;
  if (fl.path.size() > 1) {
    const uint32_t r0 = island(fl.path[0].index);
    for (std::size_t h = 1; h < fl.path.size(); ++h) {
      if (island(fl.path[h].index) != r0) unite(fl.path[0].index, fl.path[h].index);
    }
  }
  const std::span<Hop> hops = hops_of(fl);
  // With a filling pending, loads are stale: only the filling may place the flow.
  bool fast = std::isfinite(fl.cap) && !settle_pending_;
  for (std::size_t h = 0; h < fl.path.size(); ++h) {
    const uint32_t li = fl.path[h].index;
    Link& l = links_[li];
    hops[h].link = li;
    ++l.flow_count;
    if (fl.cap > (l.capacity - l.load) - kSaturationTolerance * l.capacity) fast = false;
  }
  if (fl.path.empty()) {
    // Nothing to share: it moves at its cap (an uncapped one completes at once).
    join_pairs(f, kCapGroup);
    enter_group(f, kCapGroup);
    trace_rate(fl, fl.cap);
    arm();
    return;
  }
  if (std::isfinite(fl.cap)) {
    fl.capped_moving = true;
    Record& r = records_[island(hops[0].link)];
    ++r.capped;
    r.capped_new.push_back(CappedRef{f, fl.seq});
    if (r.capped_new.size() > 2 * static_cast<std::size_t>(r.capped) + 64) {
      // Many came and went with no pass since (fast paths): drop those gone, so the list stays
      // within twice the island's capped flows.
      std::erase_if(r.capped_new, [this](const CappedRef& c) {
        const Flow& x = flows_[c.flow];
        return x.seq != c.seq || !x.capped_moving || x.in_sorted;
      });
    }
  }
  if (fast) {
    ++fast_updates_;
    forget_record(hops[0].link);
    join_pairs(f, kCapGroup);
    enter_group(f, kCapGroup);
    for (const Hop& h : hops) set_load(h.link, links_[h.link].load + fl.cap);
    trace_rate(fl, fl.cap);
    arm();
    notify_settled();
    return;
  }
  // Provisionally in the group of its first link; the filling moves it where it belongs.
  note_change(+1, f);
  fl.pending = true;
  pending_.push_back(f);
  // In no group until the filling places it (freeze_link(), freeze_capped()): listed on its links.
  fl.group = kNone;
  for (const Hop& h : hops) {
    std::vector<PendingRef>& list = link_pending_[h.link];
    if (list.empty()) pending_links_.push_back(h.link);
    list.push_back(PendingRef{f, fl.seq});
  }
  request_settle();
}

// Takes a moving flow off its links and out of its group; the others are re-shared now (fast
// path) or at the filling. `completed`: already out of its group's heap, its bytes credited.
void FlowNetwork::depart(uint32_t f, bool completed) {
  Flow& fl = flows_[f];
  const std::span<const Hop> hops = hops_of(fl);
  bool fast = !settle_pending_;
  for (const Hop& h : hops) {
    const Link& l = links_[h.link];
    if (l.capacity - l.load <= kSaturationTolerance * l.capacity) fast = false;
  }
  const double rate = current_rate(fl);
  if (fast || hops.empty()) {
    if (!hops.empty()) forget_record(hops[0].link);
  } else {
    note_change(-1, f);
  }
  if (!completed) {
    leave_group(f);
  } else if (fl.group != kCapGroup) {
    touch(fl.group);
  }
  fl.pending = false;
  leave_pairs(f);
  fl.group = kNone;
  if (fl.capped_moving) {
    // Its references in the island's lists go stale (dropped at the island's next pass).
    fl.capped_moving = false;
    fl.in_sorted = false;
    --records_[island(hops[0].link)].capped;
  }
  for (const Hop& h : hops) --links_[h.link].flow_count;
  if (hops.empty()) return;
  if (fast) {
    ++fast_updates_;
    for (const Hop& h : hops) {
      const Link& l = links_[h.link];
      set_load(h.link, l.flow_count == 0 ? 0.0 : std::max(0.0, l.load - rate));
    }
  } else {
    request_settle();
  }
}

uint32_t FlowNetwork::pair_of(uint32_t link, uint32_t group) {
  // The two pairs every arrival or bottleneck move needs most are cached on the link; then the
  // table; a new pair takes the out-of-line add_pair() (so that this look-up stays small).
  const Link& l = links_[link];
  if (group == kCapGroup && l.cap_pair != kNone) return l.cap_pair;
  if (group == link && l.self_pair != kNone) return l.self_pair;
  if (!pair_table_.empty()) {
    const uint64_t key = (static_cast<uint64_t>(link) << 32) | group;
    for (std::size_t i = pair_slot(key);; i = (i + 1) & (pair_table_.size() - 1)) {
      if (pair_table_[i].key == key) return pair_table_[i].id;
      if (pair_table_[i].key == kEmptyPairKey) break;
    }
  }
  return add_pair(link, group);
}

uint32_t FlowNetwork::add_pair(uint32_t link, uint32_t group) {
  if (2 * (pairs_.size() + 1) > pair_table_.size()) {
    // Grow (a power of two, at most half full) and re-insert.
    const std::size_t size = std::max<std::size_t>(64, 2 * pair_table_.size());
    pair_table_.assign(size, PairSlot{kEmptyPairKey, 0});
    for (uint32_t id = 0; id < pairs_.size(); ++id) {
      const uint64_t key = (static_cast<uint64_t>(pairs_[id].link) << 32) | pairs_[id].group;
      std::size_t i = pair_slot(key);
      while (pair_table_[i].key != kEmptyPairKey) i = (i + 1) & (pair_table_.size() - 1);
      pair_table_[i] = PairSlot{key, id};
    }
  }
  const uint64_t key = (static_cast<uint64_t>(link) << 32) | group;
  std::size_t i = pair_slot(key);
  while (pair_table_[i].key != kEmptyPairKey) i = (i + 1) & (pair_table_.size() - 1);
  const auto id = static_cast<uint32_t>(pairs_.size());
  pair_table_[i] = PairSlot{key, id};
  pairs_.push_back(Pair{link, group, PoolVector<PairEntry>(FlowPoolAllocator<PairEntry>(&pool_))});
  // Room for two flows from the start: the pool's smallest block (16 B) holds two entries, so
  // this costs no memory and saves the growth from one to two (later growth is unchanged).
  pairs_.back().flows.reserve(2);
  Link& l = links_[link];
  l.pairs.push_back(id);
  if (group == link) l.self_pair = id;
  if (group == kCapGroup) l.cap_pair = id;
  return id;
}

void FlowNetwork::join_pairs(uint32_t f, uint32_t group) {
  Flow& fl = flows_[f];
  fl.group = group;
  if (group != kCapGroup) ++links_[group].group_flows;
  for (uint32_t h = fl.hop_base; h < fl.hop_base + fl.hop_count; ++h) {
    // By index: pair_of() may grow pairs_, never hops_.
    Hop& hop = hops_[h];
    hop.pair = pair_of(hop.link, group);
    Pair& p = pairs_[hop.pair];
    hop.pos = static_cast<uint32_t>(p.flows.size());
    p.flows.push_back(PairEntry{f, h});
    if (p.lpos == kNone) {
      PoolVector<LivePair>& live = links_[hop.link].live;
      p.lpos = static_cast<uint32_t>(live.size());
      live.push_back(LivePair{group, hop.pair});
    }
    if (group == kCapGroup) continue;
    PoolVector<GroupLink>& gl = links_[group].glinks;
    if (p.gpos == kNone) {
      p.gpos = static_cast<uint32_t>(gl.size());
      gl.push_back(GroupLink{hop.link, 1, hop.pair});
    } else {
      ++gl[p.gpos].count;
    }
  }
}

void FlowNetwork::leave_pairs(uint32_t f) {
  if (flows_[f].group == kNone) return;  // pending, not placed yet
  if (flows_[f].group != kCapGroup) --links_[flows_[f].group].group_flows;
  for (const Hop& h : hops_of(flows_[f])) {
    Pair& p = pairs_[h.pair];
    const PairEntry moved = p.flows.back();
    p.flows[h.pos] = moved;
    hops_[moved.hop].pos = h.pos;
    p.flows.pop_back();
    if (p.flows.empty()) {
      PoolVector<LivePair>& live = links_[h.link].live;
      const LivePair last = live.back();
      live[p.lpos] = last;
      pairs_[last.pair].lpos = p.lpos;
      live.pop_back();
      p.lpos = kNone;
    }
    if (p.group == kCapGroup) continue;
    PoolVector<GroupLink>& gl = links_[p.group].glinks;
    if (--gl[p.gpos].count == 0) {
      const GroupLink last = gl.back();
      gl[p.gpos] = last;
      pairs_[last.pair].gpos = p.gpos;
      gl.pop_back();
      p.gpos = kNone;
    }
  }
}

double FlowNetwork::vclock_now(const Link& g) const {
  return g.vclock + g.level * seconds(sim_.now() - g.level_since);
}

double FlowNetwork::remaining_now(const Flow& fl) const {
  if (fl.pending || fl.state != State::kMoving) return fl.rem_join;
  if (fl.group == kCapGroup) {
    const Time dt = sim_.now() - fl.joined;
    if (dt.ps <= 0 || fl.cap <= 0) return fl.rem_join;
    return std::max(0.0, fl.rem_join - fl.cap * seconds(dt));
  }
  return std::max(0.0, fl.target - vclock_now(links_[fl.group]));
}

double FlowNetwork::current_rate(const Flow& fl) const {
  if (fl.state != State::kMoving || fl.pending || fl.group == kNone) return 0.0;
  return fl.group == kCapGroup ? fl.cap : links_[fl.group].level;
}

Time FlowNetwork::member_finish(const Link& g, double target, double epsilon) const {
  const double left = target - g.vclock;
  if (left <= epsilon) return g.level_since;
  return finish_after(g.level_since, left, g.level);
}

void FlowNetwork::credit(const Flow& fl, double moved) {
  if (moved <= 0) return;
  for (const Hop& h : hops_of(fl)) links_[h.link].bytes += moved;
}

// Takes a placed flow out of its group's heap, crediting what it moved while in the group.
void FlowNetwork::leave_group(uint32_t f) {
  Flow& fl = flows_[f];
  if (fl.pending) return;
  const double rem = remaining_now(fl);
  credit(fl, fl.rem_join - rem);
  fl.rem_join = rem;
  if (fl.group == kCapGroup) {
    if (heap_pos_[f] != kNone) {
      heap_erase(
          capped_heap_, heap_pos_[f],
          [this](uint32_t a, uint32_t b) { return capped_before(a, b); },
          [this](std::size_t i, uint32_t x) {
            capped_heap_[i] = x;
            heap_pos_[x] = static_cast<uint32_t>(i);
          });
    }
  } else {
    Link& g = links_[fl.group];
    if (heap_pos_[f] != kNone) {
      heap_erase(
          g.members, heap_pos_[f],
          [this](const Member& a, const Member& b) { return member_before(a, b); },
          [this, &g](std::size_t i, const Member& x) {
            g.members[i] = x;
            heap_pos_[x.flow] = static_cast<uint32_t>(i);
          });
    }
    touch(fl.group);
  }
  heap_pos_[f] = kNone;
}

// Puts a flow whose rem_join is current into the heap of `group` (its pairs already say so).
void FlowNetwork::enter_group(uint32_t f, uint32_t group) {
  Flow& fl = flows_[f];
  const Time now = sim_.now();
  if (group == kCapGroup) {
    fl.joined = now;
    fl.finish = fl.rem_join <= finish_epsilon(fl) ? now : finish_after(now, fl.rem_join, fl.cap);
    if (fl.finish != Time::max()) {
      heap_push(
          capped_heap_, f, [this](uint32_t a, uint32_t b) { return capped_before(a, b); },
          [this](std::size_t i, uint32_t x) {
            capped_heap_[i] = x;
            heap_pos_[x] = static_cast<uint32_t>(i);
          });
    }
    return;
  }
  Link& g = links_[group];
  if (g.members.empty()) {
    // Rebase the virtual clock so that it stays small next to the bytes it is compared with.
    g.vclock = 0;
    g.level_since = now;
  }
  fl.target = vclock_now(g) + fl.rem_join;
  heap_push(
      g.members, Member{fl.target, finish_epsilon(fl), f},
      [this](const Member& a, const Member& b) { return member_before(a, b); },
      [this, &g](std::size_t i, const Member& x) {
        g.members[i] = x;
        heap_pos_[x.flow] = static_cast<uint32_t>(i);
      });
  touch(group);
}

void FlowNetwork::move_flow(uint32_t f, uint32_t group) {
  // What leaving and joining will read, requested together rather than met miss after miss:
  // per hop the old pair, the new pair's table slot, and the link's byte counter.
  for (const Hop& h : hops_of(flows_[f])) {
    __builtin_prefetch(&pairs_[h.pair]);
    const uint64_t key = (static_cast<uint64_t>(h.link) << 32) | group;
    if (!pair_table_.empty()) __builtin_prefetch(&pair_table_[pair_slot(key)]);
    __builtin_prefetch(&links_[h.link].bytes);
  }
  leave_group(f);
  leave_pairs(f);
  join_pairs(f, group);
  if (!flows_[f].pending) enter_group(f, group);
}

void FlowNetwork::touch(uint32_t g) {
  Link& l = links_[g];
  if (l.touched) return;
  l.touched = true;
  touched_.push_back(g);
}

void FlowNetwork::set_level(uint32_t g, double level) {
  Link& l = links_[g];
  l.vclock = vclock_now(l);
  l.level_since = sim_.now();
  l.level = level;
  if (l.vclock > kRebaseBytes) {
    // Targets are compared with the clock by subtraction: keep both small so that the
    // difference keeps its precision. Order in the heap is unchanged.
    for (Member& m : l.members) {
      m.target -= l.vclock;
      flows_[m.flow].target -= l.vclock;
    }
    l.vclock = 0;
  }
  touch(g);
}

// Recomputes the earliest finish of every touched group and its place in group_heap_.
void FlowNetwork::refresh_groups() {
  const auto place = [this](std::size_t i, const GroupEntry& x) {
    group_heap_[i] = x;
    group_pos_[x.group] = static_cast<uint32_t>(i);
  };
  // Each group's earliest member sits in its own heap allocation: request them all first, so
  // that the misses overlap instead of coming one per group.
  for (const uint32_t g : touched_) {
    if (!links_[g].members.empty()) __builtin_prefetch(links_[g].members.data());
  }
  for (const uint32_t g : touched_) {
    Link& l = links_[g];
    l.touched = false;
    l.finish = l.members.empty() ? Time::max()
                                 : member_finish(l, l.members[0].target, l.members[0].epsilon);
    const uint32_t pos = group_pos_[g];
    if (l.finish == Time::max()) {
      if (pos != kNone) {
        group_pos_[g] = kNone;
        heap_erase(group_heap_, pos, group_before, place);
      }
    } else if (pos == kNone) {
      heap_push(group_heap_, GroupEntry{l.finish, g}, group_before, place);
    } else {
      group_heap_[pos].finish = l.finish;
      heap_fix(group_heap_, pos, group_before, place);
    }
  }
  touched_.clear();
}

void FlowNetwork::request_settle() {
  if (settle_pending_) return;
  settle_pending_ = true;
  settle_event_ = sim_.schedule_at(
      sim_.now(), [this] { settle(); }, Priority::kLast);
}

void FlowNetwork::release(uint32_t f) {
  Flow& fl = flows_[f];
  fl.state = State::kFree;
  if (++fl.gen == 0) fl.gen = 1;
  fl.on_complete.reset();
  fl.hop_count = 0;
  fl.path.clear();
  fl.trace_rates.clear();
  fl.group = kNone;
  fl.pending = false;
  heap_pos_[f] = kNone;
  --active_;
  free_flows_.push_back(f);
}

// Notes an arrival (+1) or departure (-1) of a flow with a path for its island's next filling,
// which may resume part-way after a single one.
void FlowNetwork::note_change(int delta, uint32_t f) {
  const Flow& fl = flows_[f];
  const uint32_t root = island(hops_[fl.hop_base].link);
  mark_dirty(root);
  Record& r = records_[root];
  if (++r.changes > 1) return;
  r.change_delta = delta;
  r.change_group = fl.group;
  r.change_links.clear();
  for (const Hop& h : hops_of(fl)) r.change_links.push_back(h.link);
}

// The island (root link) of `link`, halving the path on the way.
uint32_t FlowNetwork::island(uint32_t link) {
  while (island_parent_[link] != link) {
    island_parent_[link] = island_parent_[island_parent_[link]];
    link = island_parent_[link];
  }
  return link;
}

// Joins the islands of two links: the smaller one's links are appended to the larger one's. A
// resume record of either no longer describes the joined island; their pending changes and
// capped flows add up.
void FlowNetwork::unite(uint32_t a, uint32_t b) {
  a = island(a);
  b = island(b);
  if (a == b) return;
  if (island_links_[a].size() < island_links_[b].size()) std::swap(a, b);
  Record& into_rec = records_[a];
  Record& from_rec = records_[b];
  into_rec.resumable = false;
  into_rec.links_sorted = false;
  if (into_rec.changes == 0) {
    into_rec.change_delta = from_rec.change_delta;
    into_rec.change_group = from_rec.change_group;
    into_rec.change_links = std::move(from_rec.change_links);
  }
  into_rec.changes += from_rec.changes;
  into_rec.capped += from_rec.capped;
  // The other island's capped flows join this one's as new (sorted in at the next pass).
  for (const CappedRef& c : from_rec.capped_sorted) {
    if (flows_[c.flow].seq != c.seq) continue;  // gone, its slot reused
    flows_[c.flow].in_sorted = false;
    into_rec.capped_new.push_back(c);
  }
  into_rec.capped_new.insert(into_rec.capped_new.end(), from_rec.capped_new.begin(),
                             from_rec.capped_new.end());
  from_rec = Record{};
  std::vector<uint32_t>& into = island_links_[a];
  for (const uint32_t k : island_links_[b]) {
    island_pos_[k] = static_cast<uint32_t>(into.size());
    into.push_back(k);
  }
  island_links_[b] = {};
  island_parent_[b] = a;
  if (island_dirty_[b] != 0) {
    island_dirty_[b] = 0;
    if (island_dirty_[a] == 0) {
      island_dirty_[a] = 1;
      dirty_islands_.push_back(a);
    }
  }
}

void FlowNetwork::mark_dirty(uint32_t link) {
  const uint32_t r = island(link);
  if (island_dirty_[r] != 0) return;
  island_dirty_[r] = 1;
  dirty_islands_.push_back(r);
}

// A change the resume record cannot account for happened on `link`'s island.
void FlowNetwork::forget_record(uint32_t link) {
  records_[island(link)].resumable = false;
}

void FlowNetwork::settle() {
  settle_pending_ = false;
  // In the order marked (deterministic); an entry whose island has since joined another finds
  // the joined one, passed once.
  for (std::size_t i = 0; i < dirty_islands_.size(); ++i) {
    const uint32_t r = island(dirty_islands_[i]);
    if (island_dirty_[r] == 0) continue;
    island_dirty_[r] = 0;
    fill(r);
    ++recomputes_;
    filled_links_ += island_links_[r].size();
  }
  dirty_islands_.clear();
  // Every pending flow is placed now (those gone before are stale in the lists).
  for (const uint32_t k : pending_links_) link_pending_[k].clear();
  pending_links_.clear();
  for (const uint32_t f : pending_) {
    Flow& fl = flows_[f];
    if (!fl.pending) continue;  // left before the filling, or a duplicate entry
    fl.pending = false;
    enter_group(f, fl.group);
    if (fl.group == kCapGroup) trace_rate(fl, fl.cap);
  }
  pending_.clear();
  if (sim_.tracer() != nullptr) {
    for (const uint32_t g : touched_) {
      const Link& l = links_[g];
      if (l.self_pair == kNone) continue;
      for (const PairEntry& e : pairs_[l.self_pair].flows) trace_rate(flows_[e.flow], l.level);
    }
  }
  arm();
  notify_settled();
}

void FlowNetwork::arm() {
  refresh_groups();
  Time t = Time::max();
  if (!group_heap_.empty()) t = group_heap_[0].finish;
  if (!capped_heap_.empty()) t = std::min(t, flows_[capped_heap_[0]].finish);
  if (t == Time::max()) return;
  t = std::max(t, sim_.now());
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
  refresh_groups();
  done_.clear();
  const auto member_place = [this](std::vector<uint32_t>& h) {
    return [this, &h](std::size_t i, uint32_t x) {
      h[i] = x;
      heap_pos_[x] = static_cast<uint32_t>(i);
    };
  };
  const auto by_member = [this](const Member& a, const Member& b) { return member_before(a, b); };
  while (!group_heap_.empty() && group_heap_[0].finish <= now) {
    const uint32_t g = group_heap_[0].group;
    Link& l = links_[g];
    while (!l.members.empty() &&
           member_finish(l, l.members[0].target, l.members[0].epsilon) <= now) {
      const uint32_t f = l.members[0].flow;
      heap_erase(l.members, 0, by_member, [this, &l](std::size_t i, const Member& x) {
        l.members[i] = x;
        heap_pos_[x.flow] = static_cast<uint32_t>(i);
      });
      heap_pos_[f] = kNone;
      done_.push_back(f);
    }
    touch(g);
    refresh_groups();
  }
  while (!capped_heap_.empty() && flows_[capped_heap_[0]].finish <= now) {
    const uint32_t f = capped_heap_[0];
    heap_erase(
        capped_heap_, 0, [this](uint32_t a, uint32_t b) { return capped_before(a, b); },
        member_place(capped_heap_));
    heap_pos_[f] = kNone;
    done_.push_back(f);
  }
  std::sort(done_.begin(), done_.end(),
            [this](uint32_t a, uint32_t b) { return flows_[a].seq < flows_[b].seq; });
  std::vector<Callback> callbacks = std::move(done_callbacks_);
  callbacks.clear();
  for (const uint32_t f : done_) {
    Flow& fl = flows_[f];
    // Credit exactly what was left: the completion time was rounded up, so the last partial
    // picosecond would otherwise over- or under-count.
    credit(fl, fl.rem_join);
    for (const Hop& h : hops_of(fl)) ++links_[h.link].completed;
    fl.rem_join = 0;
    depart(f, true);
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
    depart(f, false);
    trace_flow_end(flows_[f], true);
  }
  release(f);
  arm();
  if (!settle_pending_) notify_settled();
  return true;
}

void FlowNetwork::trace_rate(Flow& fl, double rate) {
  if (sim_.tracer() == nullptr) return;
  const double last = fl.trace_rates.empty() ? 0.0 : fl.trace_rates.back().second;
  if (fl.trace_rates.empty() || std::fabs(rate - last) > kRateTolerance * std::max(rate, last)) {
    if (!fl.trace_rates.empty() || rate != 0) fl.trace_rates.emplace_back(sim_.now(), rate);
  }
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

void FlowNetwork::set_load(uint32_t li, double load) {
  Link& l = links_[li];
  const Time now = sim_.now();
  if (l.load <= 0 && load > 0) l.busy_since = now;
  if (l.load > 0 && load <= 0) l.busy += now - l.busy_since;
  const bool changed = l.load != load;
  l.load = load;
  if (changed) {
    if (sim_.tracer() != nullptr) trace_load(li);
  }
}

void FlowNetwork::trace_load(uint32_t li) {
  Link& l = links_[li];
  // The counter's name is built on first use: only traced runs need it.
  if (l.counter_name.empty()) l.counter_name = l.name + " utilisation";
  sim_.tracer()->counter("links", l.counter_name, sim_.now(),
                         l.capacity > 0 ? l.load / l.capacity : 0.0);
}

double FlowNetwork::flow_rate(FlowId id) const {
  const uint32_t f = lookup(id);
  return f == kNone ? 0.0 : current_rate(flows_[f]);
}

double FlowNetwork::flow_remaining_bytes(FlowId id) const {
  const uint32_t f = lookup(id);
  return f == kNone ? 0.0 : remaining_now(flows_[f]);
}

Time FlowNetwork::flow_finish_time(FlowId id) const {
  const uint32_t f = lookup(id);
  if (f == kNone) return Time::max();
  const Flow& fl = flows_[f];
  if (fl.state != State::kMoving || fl.pending || heap_pos_[f] == kNone) return Time::max();
  return fl.group == kCapGroup ? fl.finish
                               : member_finish(links_[fl.group], fl.target, finish_epsilon(fl));
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
                current_rate(fl), fl.state == State::kMoving});
  }
}

LinkStats FlowNetwork::link_stats(LinkId link) const {
  const Link& l = links_.at(link.index);
  const Time now = sim_.now();
  LinkStats s;
  s.observed = now - l.created;
  s.busy = l.busy + (l.load > 0 ? now - l.busy_since : Time{});
  // Bytes moved by flows still in the group they joined are not yet credited.
  double pending = 0;
  for (const uint32_t pid : l.pairs) {
    for (const PairEntry& e : pairs_[pid].flows) {
      const Flow& fl = flows_[e.flow];
      pending += fl.rem_join - remaining_now(fl);
    }
  }
  s.bytes = l.bytes + pending;
  s.mean_rate = s.observed.ps > 0 ? s.bytes / s.observed.seconds() : 0.0;
  s.mean_rate_busy = s.busy.ps > 0 ? s.bytes / s.busy.seconds() : 0.0;
  s.utilisation = l.capacity > 0 ? s.mean_rate / l.capacity : 0.0;
  s.flows_completed = l.completed;
  return s;
}

}  // namespace ridge::sim
