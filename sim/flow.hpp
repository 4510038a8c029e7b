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
// How a change is handled (why per-change work does not grow with the flows whose rate changes):
// every moving flow belongs to one group: the link that is its bottleneck (its rate is that
// link's fair level), or the "capped" set (its rate is its own cap). A link group keeps a
// virtual clock V (bytes served per member, the integral of its level) and its members in a
// min-heap of virtual targets V_join + remaining, so a level change reschedules one group (its
// earliest member), not its members. Progressive filling runs over links with counts aggregated
// by group: for every (link, group) pair, the flows crossing that link in that group. Freezing
// link l at level s first moves the still-unfrozen flows crossing l that sit in another
// unfrozen group into group l (per-flow work only for flows whose bottleneck changes), then,
// for every link k crossed by group l's members, removes those members from k's unfrozen count
// and s x their number from k's spare capacity. Each flow so freezes at the first of its links
// to saturate (or at its cap, if lower), which is the textbook progressive filling. A pass
// costs O(sum over groups of the links their members cross + flows that change group + capped
// flows + new capped flows x log) instead of O(flows x path), all of them its island's. A pass
// covers one island: the links joined, directly or through other links, by the paths of flows
// that have moved over them (islands merge as flows join links, and never split). The
// allocation on one island does not depend on any other (max-min fairness decomposes over
// connected components), so a change costs a pass over its own island, however many others
// there are (one device's links do not pay for another's changes). Virtual clocks are
// rebased to zero past 1e9 bytes per member so that target - V keeps its precision.
// The filling's per-link state (spare capacity, unfrozen count, share) sits in dense arrays;
// a freeze updates a link's share as spare x 1/count from a table (within 2 ulp of the
// quotient; no division per update), and the next link to saturate is found by a linear SIMD
// scan of the unfrozen links' shares (block by block, with lazy lower bounds, past 256 links);
// the chosen link's level is the exact quotient.
// Resuming: a pass records, for its island, the links it froze in order with their levels, and
// every 8th freeze a snapshot of the per-link state (only while snapshots cost less than the
// pass's count updates). When the only change on the island since its last pass is one arrival
// or one departure, and no flow on it is capped, the next pass restores the snapshot at or
// before the first freeze the change can alter, replays the recorded freezes up to it, and goes
// on from there (on BM_FlowChurn/10000/0, 95% of passes resume ~30% into the previous pass's
// freezes, which skips ~45% of its count updates). Exact: a departing flow was unfrozen on all its
// links before its group's freeze, so removing it only raises those links' shares and every earlier
// choice stands; an arriving flow lowers its links' shares, and an earlier choice stands while
// each of them stays above that step's level, checked per snapshot interval (a share only
// rises between snapshots), up to the first freeze of one of its links.
// Two O(path) fast paths skip the filling (when none is pending), and are exact: a capped flow
// arriving where every link has spare capacity >= its cap gets its cap, and a flow leaving
// links none of which is saturated leaves the others' rates unchanged (in both cases every
// flow still has its cap or a saturated bottleneck link where its rate is maximal, which
// characterises the max-min fair allocation: Bertsekas & Gallager, sec. 6.5.2, prop. 1).
// Changes within one instant are batched: the filling runs once, in an event at the same time
// with Priority::kLast, so a thousand flows started together cost one pass. Until then a new
// flow's rate reads as 0 (no simulated time passes, so no bytes are lost). A new flow joins no
// group (nor its pairs) until that pass: it is listed on its links, and the freeze of the first
// of them to saturate places it in that link's group (or its cap places it in the capped set),
// where the pass would have moved it; so it is placed once, not placed and then moved.
// Completions: one Simulator event at a time, for the earliest finish among the groups' earliest
// members and the capped flows; flows due at the same picosecond complete in start order, all
// are removed before any of their callbacks runs. A member's finish is
//   t_level_set + ceil((target - V(t_level_set)) / level)  (whole picoseconds, rounded up).
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
#include "sim/flow_pool.hpp"
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
  /// Makes room for `n` links in all, so that adding them reallocates nothing.
  void reserve_links(std::size_t n);
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
  std::size_t link_flow_count(LinkId link) const { return links_.at(link.index).flow_count; }
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

  /// Progressive-filling passes run so far (one per island that needed one at a settle).
  uint64_t recomputes() const { return recomputes_; }
  /// Links covered by those passes, summed over passes (a pass covers its island's links).
  uint64_t filled_links() const { return filled_links_; }
  /// Arrivals and departures handled by an O(path) fast path so far.
  uint64_t fast_updates() const { return fast_updates_; }
  /// Filling passes (among recomputes()) resumed part-way from the previous pass's record.
  uint64_t resumed_fills() const { return resumed_; }
  /// Test hook: called whenever rates have settled after a change (never mid-batch).
  void set_settled_hook(std::function<void()> hook) { settled_hook_ = std::move(hook); }

 private:
  static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  // Group id of flows moving at their own cap; other group ids are link indices.
  static constexpr uint32_t kCapGroup = kNone - 1;
  // Two rates this close (relative) are the same allocation computed in a different order;
  // keeping the old one avoids rescheduling completions for rounding noise.
  static constexpr double kRateTolerance = 1e-12;
  // Links per block of the filling's search for the least share: with at most this many links
  // the search is one linear scan; past it, blocks keep lazy lower bounds of their shares.
  static constexpr uint32_t kScanBlock = 256;
  // Steps (link freezes) between two snapshots of the filling's per-link state.
  static constexpr uint32_t kSnapshotSteps = 8;
  enum class State : uint8_t { kFree, kLatency, kMoving };
  struct Record;  // an island's resume record and pending changes (below)
  struct Hop {
    uint32_t link;
    uint32_t pair;  // index in pairs_ of (link, the flow's group)
    uint32_t pos;   // index in pairs_[pair].flows
  };
  struct PairEntry {
    uint32_t flow;
    uint32_t hop;  // index in hops_ (one of flows_[flow]'s hops)
  };
  // The moving flows that cross `link` and belong to `group`.
  struct Pair {
    uint32_t link;
    uint32_t group;
    PoolVector<PairEntry> flows;
    uint32_t gpos = kNone;  // index in links_[group].glinks while it has flows
    uint32_t lpos = kNone;  // index in links_[link].live while it has flows
  };
  // A pair with flows, as listed on its link.
  struct LivePair {
    uint32_t group;
    uint32_t pair;
  };
  // A link group's member, keyed inline so that sifting reads no flow.
  struct Member {
    double target;   // the flow's target
    double epsilon;  // finish_epsilon() of the flow
    uint32_t flow;
  };
  // One link crossed by a group's members, and how many of them cross it.
  struct GroupLink {
    uint32_t link;
    uint32_t count;
    uint32_t pair;
  };

  // Laid out by use: the first cache line is what a filling pass reads and writes for every
  // link (spare capacity, load, level and virtual clock), the second what a freeze or a move
  // reads of it as a group, the third its pair lists; names and statistics last.
  struct alignas(64) Link {
    double capacity;
    double load = 0;
    double level = 0;   // as a group: rate of each member, bytes/s
    double vclock = 0;  // bytes served per member, as of level_since
    Time level_since;
    Time finish = Time::max();   // its earliest member's
    uint32_t flow_count = 0;     // moving flows crossing it
    uint32_t group_flows = 0;    // flows in the group, pending ones included
    uint32_t self_pair = kNone;  // pair (this link, this group)
    uint32_t cap_pair = kNone;   // pair (this link, kCapGroup)
    // as a group: the flows whose bottleneck it is
    PoolVector<Member> members;    // min-heap by (target, seq); pending flows excluded
    PoolVector<GroupLink> glinks;  // links its members cross (count > 0)
    double bytes = 0;
    bool touched = false;
    PoolVector<LivePair> live;   // pairs (this link, any group) with flows
    PoolVector<uint32_t> pairs;  // pairs (this link, any group), never removed
    Time latency;
    Time busy_since;
    // statistics
    Time created;
    Time busy;
    uint64_t completed = 0;
    std::string name;
    std::string counter_name;  // "<name> utilisation", built when first traced
  };
  // What moving a flow between groups reads comes first, in one cache line.
  struct alignas(64) Flow {
    uint32_t gen = 1;
    uint32_t group = kNone;
    uint32_t hop_base = 0;   // its hops are hops_[hop_base, hop_base + hop_count)
    uint32_t hop_count = 0;  // the path's length while moving, else 0
    State state = State::kFree;
    bool pending = false;        // moving, waiting for the batched filling to give it a rate
    bool in_sorted = false;      // in its island's Record::capped_sorted
    bool capped_moving = false;  // moving with a finite cap and a path (in Record::capped)
    uint32_t hop_room = 0;       // hops_ slots reserved for this flow slot
    double bytes = 0;
    double rem_join = 0;  // remaining bytes when it joined its group
    double target = 0;    // link group: group vclock at which it is done
    uint64_t seq = 0;
    double cap = kNoRateLimit;
    uint64_t frozen_mark = 0;   // == fill epoch when frozen at its cap
    Time joined;                // capped group: when it joined
    Time finish = Time::max();  // capped group only
    Time started;
    Time arrived;
    std::vector<LinkId> path;
    EventId arrival;
    Callback on_complete;
    std::string trace_name;
    std::vector<std::pair<Time, double>> trace_rates;
  };

  uint32_t lookup(FlowId id) const;
  std::span<Hop> hops_of(const Flow& fl) { return {hops_.data() + fl.hop_base, fl.hop_count}; }
  std::span<const Hop> hops_of(const Flow& fl) const {
    return {hops_.data() + fl.hop_base, fl.hop_count};
  }
  void arrive(uint32_t f);
  void depart(uint32_t f, bool completed);
  void release(uint32_t f);
  // Inline in join_pairs() (its one caller, in flow.cpp): a look-up per hop of every move.
  [[gnu::always_inline]] inline uint32_t pair_of(uint32_t link, uint32_t group);
  [[gnu::noinline]] uint32_t add_pair(uint32_t link, uint32_t group);
  void join_pairs(uint32_t f, uint32_t group);
  void leave_pairs(uint32_t f);
  void leave_group(uint32_t f);
  void enter_group(uint32_t f, uint32_t group);
  void move_flow(uint32_t f, uint32_t group);
  double remaining_now(const Flow& fl) const;
  double vclock_now(const Link& g) const;
  Time member_finish(const Link& g, double target, double epsilon) const;
  double current_rate(const Flow& fl) const;
  void credit(const Flow& fl, double moved);
  void touch(uint32_t g);
  void refresh_groups();
  void set_level(uint32_t g, double level);
  void set_load(uint32_t link, double load);
  // Records a link's load in the trace (out of line: set_load() runs on every rate change).
  [[gnu::cold, gnu::noinline]] void trace_load(uint32_t link);
  void request_settle();
  void settle();
  uint32_t island(uint32_t link);
  void unite(uint32_t a, uint32_t b);
  void mark_dirty(uint32_t link);
  void forget_record(uint32_t link);
  void fill(uint32_t root);
  void freeze_link(uint32_t l, double level);
  uint32_t min_share_link();
  uint32_t start_filling();
  uint32_t resume_point(uint32_t& replay_to) const;
  void restore_filling(uint32_t from, uint32_t to);
  // Empties the least-share search: slots of n links (shares padded to the scan width of 8) and
  // the per-block lower bounds.
  void clear_share_slots(uint32_t n);
  void grow_inverse(uint32_t most);
  void take_snapshot(uint32_t step);
  void note_change(int delta, uint32_t f);
  void freeze_capped(uint32_t f);
  // Into the capped set: placed there if new since the last pass, else moved (out of line: a
  // capped flow's freeze is the hot path of capped islands, and it is mostly there already).
  [[gnu::noinline]] void to_capped(uint32_t f);
  void sort_capped(Record& rec);
  void on_completion_event();
  void arm();
  void notify_settled();
  void trace_rate(Flow& fl, double rate);
  void trace_flow_end(const Flow& fl, bool cancelled);
  static double finish_epsilon(const Flow& fl) { return 1e-12 * fl.bytes + 1e-9; }

  bool member_before(const Member& a, const Member& b) const {
    return a.target < b.target || (a.target == b.target && flows_[a.flow].seq < flows_[b.flow].seq);
  }
  bool capped_before(uint32_t a, uint32_t b) const {
    const Flow& x = flows_[a];
    const Flow& y = flows_[b];
    return x.finish < y.finish || (x.finish == y.finish && x.seq < y.seq);
  }
  std::size_t pair_slot(uint64_t key) const {
    // Fibonacci hashing: the high bits of key x 2^64/phi, as many as the table needs.
    const uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> 32) & (pair_table_.size() - 1);
  }
  // A link group with members in group_heap_, keyed inline.
  struct GroupEntry {
    Time finish;  // its earliest member's
    uint32_t group;
  };
  static bool group_before(const GroupEntry& a, const GroupEntry& b) {
    return a.finish < b.finish || (a.finish == b.finish && a.group < b.group);
  }

  Simulator& sim_;
  // Storage of the links' and pairs' vectors (declared first: destroyed after them).
  FlowPool pool_;
  std::vector<Link> links_;
  std::vector<uint32_t> path_mark_;  // by link: the epoch of the last long path checked over it
  uint32_t path_epoch_ = 0;
  std::vector<Flow> flows_;
  // Every moving flow's hops, contiguous per flow (a flow slot keeps its room when reused), so
  // that a pair entry names its hop directly.
  std::vector<Hop> hops_;
  std::vector<Pair> pairs_;
  // pair id by (link << 32 | group): open addressing, linear probing, never shrinks; key and id
  // side by side, so that a look-up reads one cache line
  struct PairSlot {
    uint64_t key;
    uint32_t id;
  };
  static constexpr uint64_t kEmptyPairKey = ~uint64_t{0};  // link kNone is never issued
  std::vector<PairSlot> pair_table_;
  // by flow: its index in its group's members, or in capped_heap_ (kNone if in neither); apart
  // from the flows so that sifting a heap writes to a small array
  std::vector<uint32_t> heap_pos_;
  std::vector<uint32_t> free_flows_;
  std::vector<uint32_t> capped_heap_;   // flows in kCapGroup by (finish, seq)
  std::vector<GroupEntry> group_heap_;  // link groups with members by (finish, index)
  std::vector<uint32_t> group_pos_;     // by link: its group's index in group_heap_, or kNone
  std::vector<uint32_t> pending_;       // flows waiting for the filling (may hold stale slots)
  // A flow slot as of one flow: good while the slot's seq matches.
  struct PendingRef {
    uint32_t flow;
    uint64_t seq;
  };
  // by link: the flows arrived over it since the last settle, not yet in any group (see
  // arrive()); the filling places each in the group of the first of its links to freeze
  std::vector<std::vector<PendingRef>> link_pending_;
  std::vector<uint32_t> pending_links_;  // links whose link_pending_ is not empty
  // progressive-filling scratch, per link: spare capacity, unfrozen flows, frozen, level; the
  // shares spare / unfrozen of the unfrozen links in a dense array (infinity without unfrozen
  // flows), padded with infinities to a multiple of 8; per block of kScanBlock slots a lower
  // bound of its shares
  std::vector<double> fill_rem_;
  std::vector<uint32_t> fill_cnt_;
  std::vector<uint8_t> fill_frozen_;
  std::vector<double> fill_level_;
  std::vector<double> fill_share_;   // by slot; slots [0, fill_live_) are unfrozen links
  std::vector<uint32_t> fill_link_;  // link by slot
  std::vector<uint32_t> fill_slot_;  // slot by link
  std::vector<double> block_low_;
  uint32_t fill_live_ = 0;
  bool shares_stale_ = false;  // capped freezes since the last search left shares stale
  // Islands: links joined by the paths of the flows that have moved over them (union-find by
  // size with path halving; islands merge, never split). Max-min fairness decomposes over the
  // connected components of links and flows, and every moving flow's links lie in one island,
  // so a filling pass covers only the islands whose flows or capacities changed.
  std::vector<uint32_t> island_parent_;              // by link
  std::vector<uint32_t> island_pos_;                 // by link: index in its island's links
  std::vector<std::vector<uint32_t>> island_links_;  // by root link: the island's links
  std::vector<uint8_t> island_dirty_;                // by root link: needs a filling pass
  std::vector<uint32_t> dirty_islands_;  // roots marked since the last settle (may be stale)
  uint32_t fill_island_ = kNone;         // the island of the pass under way
  struct CappedRef {
    uint32_t flow;
    uint64_t seq;
  };
  // An island's last filling pass, for resuming the next one (see fill()), and the changes
  // since: the link frozen at each step and its level, and before every kSnapshotSteps-th step
  // the spare capacity and unfrozen count of each of the island's links (by island_pos_).
  struct Record {
    std::vector<uint32_t> steps;
    std::vector<double> step_level;
    std::vector<double> snap_rem;
    std::vector<uint32_t> snap_cnt;
    bool snapshots = false;              // the next pass takes snapshots
    bool resumable = false;              // the record describes the state but for the changes since
    uint32_t changes = 0;                // arrivals and departures waiting for the filling
    int change_delta = 0;                // the first of them: +1 arrival, -1 departure
    uint32_t change_group = kNone;       // a departure's group
    std::vector<uint32_t> change_links;  // its links
    uint32_t capped = 0;                 // moving flows with a finite cap (no resuming then)
    bool links_sorted = true;            // the island's links are in index order
    // Those flows by (cap, seq) as of the last pass, and those arrived since (both may hold
    // flows gone since: a reference is good while the slot's seq matches).
    std::vector<CappedRef> capped_sorted;
    std::vector<CappedRef> capped_new;
  };
  std::vector<Record> records_;    // by root link
  std::vector<uint32_t> step_of_;  // by link: its step in its island's last pass, or kNone
  uint32_t fill_from_ = 0;         // the step this pass resumed from (0: a full pass)
  std::vector<double> inverse_;    // 1 / n for n unfrozen flows (index 0 unused)
  std::vector<uint32_t> touched_;  // groups whose earliest finish must be recomputed
  std::vector<uint32_t> done_;
  std::vector<Callback> done_callbacks_;
  uint64_t next_seq_ = 0;
  uint64_t epoch_ = 0;
  std::size_t active_ = 0;
  bool settle_pending_ = false;
  bool completion_pending_ = false;
  Time completion_time_ = Time::max();
  EventId completion_event_;
  EventId settle_event_;
  uint64_t recomputes_ = 0;
  uint64_t fast_updates_ = 0;
  uint64_t resumed_ = 0;
  uint64_t filled_links_ = 0;
  std::function<void()> settled_hook_;
};

}  // namespace ridge::sim
