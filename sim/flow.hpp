// Transfers ("flows") sharing the bandwidth of links, max-min fairly, in simulated time.
//
// Captures: a set of links, each with a capacity (bytes/s) and a latency; flows that each cross
// a path of links carrying a number of bytes, optionally capped at a maximum rate of their own
// (what the source can keep in flight). Concurrent flows get the max-min fair allocation with
// those caps: computed by progressive filling (Bertsekas & Gallager, Data Networks, 2nd ed.,
// 1992, sec. 6.5.2), where a flow's cap acts as a private link of that capacity. A flow's data
// starts moving after the sum of its path's latencies, so it completes at
//   start + sum(latency) + (time to move `bytes` at the rates it is given),
// and it takes no bandwidth during the latency. Completion times are integer picoseconds,
// rounded up; a flow is finished once its remaining bytes are within 1e-12 of its size.
// Ignores: packets, protocol overheads, congestion-control dynamics (the allocation is the fluid
// steady state, reached instantly), per-hop store-and-forward, and buffer limits.
//
// Incremental work: when flows arrive or leave, only the connected component of links touched by
// the change (links joined by flows crossing them) is recomputed, and only flows whose rate
// changed get a new completion time. Two O(path) fast paths skip even that, and are exact:
// a capped flow arriving where every link has spare capacity >= its cap gets its cap, and a flow
// leaving links none of which is saturated leaves the others' rates unchanged (in both cases
// every flow still has its cap or a saturated bottleneck link where its rate is maximal, which
// characterises the max-min fair allocation: Bertsekas & Gallager, sec. 6.5.2, prop. 1).
// Changes within one instant are batched: the recompute runs once, in an event at the same time
// with Priority::kLast, so a thousand flows started together cost one recompute. Until then a
// new flow's rate reads as 0 (no simulated time passes, so no bytes are lost).
// Completions: one Simulator event at a time, for the earliest finish among all flows (kept in
// an indexed heap by (finish time, start order)); flows due at the same picosecond complete in
// start order, all are removed before any of their callbacks runs.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/callback.hpp"
#include "sim/simulator.hpp"
#include "sim/stats.hpp"
#include "sim/time.hpp"

namespace ridge::sim {

/// Names one link of a FlowNetwork.
struct LinkId {
  uint32_t index = std::numeric_limits<uint32_t>::max();
  constexpr auto operator<=>(const LinkId&) const = default;
};

/// Names one flow; stays distinct after the flow completed or was cancelled.
struct FlowId {
  uint64_t value = 0;  ///< generation << 32 | slot; 0 is never issued
  /// Whether this id was issued by a FlowNetwork.
  constexpr bool valid() const { return value != 0; }
  constexpr auto operator<=>(const FlowId&) const = default;
};

/// What a test or report may read about one flow.
struct FlowInfo {
  FlowId id;
  std::span<const LinkId> path;
  double bytes;     ///< size
  double max_rate;  ///< its cap in bytes/s (infinity if none)
  double rate;      ///< current rate in bytes/s (0 while in latency)
  bool moving;      ///< past its latency, so sharing links
};

/// Links with capacities and latencies, and flows that share them max-min fairly.
class FlowNetwork {
 public:
  /// No per-flow cap.
  static constexpr double kNoRateLimit = std::numeric_limits<double>::infinity();

  /// An empty network that schedules its events on `sim` (which must outlive it).
  explicit FlowNetwork(Simulator& sim);
  ~FlowNetwork();
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  /// Adds a link of `capacity_bytes_per_s` (finite, >= 0) and `latency` (>= 0).
  LinkId add_link(std::string name, double capacity_bytes_per_s, Time latency = Time{});
  /// Changes a link's capacity from now on (flows crossing it are re-shared).
  void set_link_capacity(LinkId link, double capacity_bytes_per_s);

  /// Starts moving `bytes` over `path` (links may not repeat); `on_complete` runs when the last
  /// byte arrives. `max_rate_bytes_per_s` caps this flow's rate; `trace_name` labels it in traces.
  FlowId start_flow(std::span<const LinkId> path, double bytes, Callback on_complete,
                    double max_rate_bytes_per_s = kNoRateLimit, std::string_view trace_name = {});
  /// start_flow() with the path written inline: start_flow({a, b}, ...).
  FlowId start_flow(std::initializer_list<LinkId> path, double bytes, Callback on_complete,
                    double max_rate_bytes_per_s = kNoRateLimit, std::string_view trace_name = {}) {
    return start_flow(std::span<const LinkId>(path.begin(), path.size()), bytes,
                      std::move(on_complete), max_rate_bytes_per_s, trace_name);
  }
  /// Stops a flow without running its callback; false if it already completed or was cancelled.
  bool cancel_flow(FlowId flow);

  /// Links added so far.
  std::size_t link_count() const { return links_.size(); }
  /// A link's name.
  const std::string& link_name(LinkId link) const { return links_.at(link.index).name; }
  /// A link's capacity in bytes/s.
  double link_capacity(LinkId link) const { return links_.at(link.index).capacity; }
  /// A link's latency.
  Time link_latency(LinkId link) const { return links_.at(link.index).latency; }
  /// Sum of the current rates of the flows crossing a link, in bytes/s.
  double link_load(LinkId link) const { return links_.at(link.index).load; }
  /// Flows currently sharing a link (past their latency).
  std::size_t link_flow_count(LinkId link) const { return links_.at(link.index).flows.size(); }
  /// A link's traffic statistics up to now.
  LinkStats link_stats(LinkId link) const;

  /// Whether a flow has been started and has neither completed nor been cancelled.
  bool is_active(FlowId flow) const { return lookup(flow) != kNone; }
  /// A flow's current rate in bytes/s (0 if not active or still in its latency).
  double flow_rate(FlowId flow) const;
  /// Bytes a flow has still to move, as of now() (0 if not active).
  double flow_remaining_bytes(FlowId flow) const;
  /// When a flow completes if rates stay as they are now (Time::max() if never or not active).
  Time flow_finish_time(FlowId flow) const;
  /// Flows started and not yet completed or cancelled.
  std::size_t active_flows() const { return active_; }
  /// Calls `fn(const FlowInfo&)` for every active flow, in start order.
  void for_each_flow(const std::function<void(const FlowInfo&)>& fn) const;

  /// Full progressive-filling passes run so far.
  uint64_t recomputes() const { return recomputes_; }
  /// Arrivals and departures handled by an O(path) fast path so far.
  uint64_t fast_updates() const { return fast_updates_; }
  /// Test hook: called whenever rates have settled after a change (never mid-batch).
  void set_settled_hook(std::function<void()> hook) { settled_hook_ = std::move(hook); }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  enum class State : uint8_t { kFree, kLatency, kMoving };
  struct Hop {
    uint32_t link;
    uint32_t pos;  // index in links_[link].flows
  };
  struct LinkEntry {
    uint32_t flow;
    uint32_t hop;  // index in flows_[flow].hops
  };
  struct Link {
    std::string name;
    std::string counter_name;
    double capacity;
    Time latency;
    double load = 0;
    std::vector<LinkEntry> flows;
    // progressive-filling scratch
    double rem = 0;
    uint32_t cnt = 0;
    uint32_t ver = 0;
    uint64_t mark = 0;
    bool dirty = false;
    // statistics
    double bytes = 0;
    Time created;
    Time busy;
    Time busy_since;
    uint64_t completed = 0;
  };
  struct Flow {
    uint32_t gen = 1;
    State state = State::kFree;
    uint32_t heap_pos = kNone;
    std::vector<Hop> hops;
    std::vector<LinkId> path;
    double bytes = 0;
    double remaining = 0;
    double rate = 0;
    double cap = kNoRateLimit;
    double new_rate = 0;
    Time started;
    Time arrived;
    Time last_update;
    Time finish = Time::max();
    uint64_t seq = 0;
    uint64_t mark = 0;
    EventId arrival;
    Callback on_complete;
    std::string trace_name;
    std::vector<std::pair<Time, double>> trace_rates;
  };
  struct ShareEntry {
    double share;
    uint32_t link;
    uint32_t ver;
  };

  uint32_t lookup(FlowId id) const;
  void arrive(uint32_t f);
  void depart(uint32_t f);
  void release(uint32_t f);
  void advance(Flow& fl);
  void set_rate(uint32_t f, double rate);
  void update_finish(uint32_t f);
  void set_load(uint32_t link, double load);
  void mark_dirty(uint32_t f);
  void request_settle();
  void settle();
  void fill();
  void fix(uint32_t f, double rate, uint32_t skip_link);
  void on_completion_event();
  void arm();
  void notify_settled();
  void trace_flow_end(const Flow& fl, bool cancelled);
  static double finish_epsilon(const Flow& fl) { return 1e-12 * fl.bytes + 1e-9; }

  // indexed min-heap of moving flows by (finish, seq)
  bool heap_before(uint32_t a, uint32_t b) const {
    const Flow& x = flows_[a];
    const Flow& y = flows_[b];
    return x.finish < y.finish || (x.finish == y.finish && x.seq < y.seq);
  }
  void heap_place(std::size_t i, uint32_t f) {
    heap_[i] = f;
    flows_[f].heap_pos = static_cast<uint32_t>(i);
  }
  void heap_up(std::size_t i);
  void heap_down(std::size_t i);
  void heap_update(uint32_t f);
  void heap_remove(uint32_t f);

  Simulator& sim_;
  std::vector<Link> links_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_flows_;
  std::vector<uint32_t> heap_;
  std::vector<uint32_t> dirty_links_;
  std::vector<uint32_t> comp_links_;
  std::vector<uint32_t> comp_flows_;
  std::vector<uint32_t> capped_;
  std::vector<ShareEntry> share_heap_;
  std::vector<uint32_t> done_;
  std::vector<Callback> done_callbacks_;
  uint64_t next_seq_ = 0;
  uint64_t epoch_ = 0;
  uint32_t unfixed_ = 0;
  // Components with at most this many links find each bottleneck by a linear scan.
  static constexpr std::size_t kScanLinks = 256;
  bool scan_links_ = false;
  std::vector<uint8_t> fixed_;  // per flow slot, progressive-filling scratch (dense: cache)
  std::size_t active_ = 0;
  bool settle_pending_ = false;
  bool completion_pending_ = false;
  Time completion_time_ = Time::max();
  EventId completion_event_;
  EventId settle_event_;
  uint64_t recomputes_ = 0;
  uint64_t fast_updates_ = 0;
  std::function<void()> settled_hook_;
};

}  // namespace ridge::sim
