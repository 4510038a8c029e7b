// FlowNetwork's progressive filling over links with counts aggregated by group (see
// sim/flow.hpp for the method and why it is exact).
#include <algorithm>
#include <cmath>

#include "sim/flow.hpp"

namespace ridge::sim {

namespace {

// Whether (share, link) a comes before b; computed without branches, as the heap's
// comparisons of near-equal shares are hard to predict.
template <typename Entry>
bool share_less(const Entry& a, const Entry& b) {
  return (a.share < b.share) | ((a.share == b.share) & (a.link < b.link));
}

// Restores the min-heap order of (share, link) after the root's share rose.
template <typename Entry>
void sift_down_shares(std::vector<Entry>& h) {
  const Entry x = h[0];
  const std::size_t n = h.size();
  std::size_t i = 0;
  for (;;) {
    std::size_t c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n) c += static_cast<std::size_t>(share_less(h[c + 1], h[c]));
    if (!share_less(h[c], x)) break;
    h[i] = h[c];
    i = c;
  }
  h[i] = x;
}

}  // namespace

// Progressive filling over links (see the header): raise the level of every unfrozen flow
// together; when a link runs out of capacity, the unfrozen flows crossing it freeze at the
// link's fair share; when the level reaches a flow's cap, that flow freezes at its cap (a cap
// equal to the level wins the tie, as in the reference solver). The next link to saturate is
// the one with the least spare capacity per unfrozen flow. A link's share never falls while
// the level rises (it loses c flows and c x level <= c x share of spare capacity), so a lazy
// min-heap of shares suffices: an entry found stale at the top is pushed again with the share
// as it is now, and no share is recomputed until its link reaches the top.
void FlowNetwork::fill() {
  ++epoch_;
  const std::size_t n = links_.size();
  fill_rem_.resize(n);
  fill_cnt_.resize(n);
  fill_frozen_.resize(n);
  fill_level_.resize(n);
  share_heap_.clear();
  for (uint32_t k = 0; k < n; ++k) {
    Link& l = links_[k];
    if (l.flow_count == 0) {
      fill_frozen_[k] = 1;
      if (l.load != 0) set_load(k, 0.0);
      continue;
    }
    fill_rem_[k] = l.capacity;
    fill_cnt_[k] = l.flow_count;
    fill_frozen_[k] = 0;
    share_heap_.push_back(ShareEntry{l.capacity / l.flow_count, k});
  }
  const auto share_after = [](const ShareEntry& a, const ShareEntry& b) {
    return share_less(b, a);
  };
  std::make_heap(share_heap_.begin(), share_heap_.end(), share_after);
  sort_capped();
  std::size_t ci = 0;
  for (;;) {
    while (ci < capped_flows_.size()) {
      const Flow& fl = flows_[capped_flows_[ci]];
      const bool frozen =
          fl.group == kCapGroup ? fl.frozen_mark == epoch_ : fill_frozen_[fl.group] != 0;
      if (!frozen) break;
      ++ci;
    }
    // Keys in the heap never exceed their links' shares (shares only rise), so a cap at or
    // below the top key is reached before any link saturates: no need to refresh the heap.
    if (ci < capped_flows_.size() &&
        (share_heap_.empty() || flows_[capped_flows_[ci]].cap <= share_heap_.front().share)) {
      freeze_capped(capped_flows_[ci++]);
      continue;
    }
    uint32_t bottleneck = kNone;
    double level = kNoRateLimit;
    while (!share_heap_.empty()) {
      ShareEntry& top = share_heap_.front();
      const uint32_t k = top.link;
      if (fill_frozen_[k] || fill_cnt_[k] == 0) {
        std::pop_heap(share_heap_.begin(), share_heap_.end(), share_after);
        share_heap_.pop_back();
        continue;
      }
      const double share = std::max(0.0, fill_rem_[k]) / fill_cnt_[k];
      if (share == top.share) {
        bottleneck = k;
        level = share;
        break;
      }
      top.share = share;  // stale: sift the top down with its share as it is now
      sift_down_shares(share_heap_);
    }
    if (ci < capped_flows_.size() && flows_[capped_flows_[ci]].cap <= level) {
      freeze_capped(capped_flows_[ci++]);
      continue;
    }
    if (bottleneck == kNone) break;
    freeze_link(bottleneck, level);
  }
  for (uint32_t k = 0; k < n; ++k) {
    Link& l = links_[k];
    if (l.flow_count == 0) continue;
    set_load(k, std::clamp(l.capacity - fill_rem_[k], 0.0, l.capacity));
    if (!fill_frozen_[k] || l.self_pair == kNone || pairs_[l.self_pair].flows.empty()) continue;
    const double level = fill_level_[k];
    const double diff = std::fabs(level - l.level);
    if (diff > kRateTolerance * std::max(level, l.level) || (l.level == 0) != (level == 0)) {
      set_level(k, level);
    }
  }
}

// Brings capped_flows_ (capped flows by (cap, seq)) up to date: drops those gone since the last
// pass, sorts only those new since then and merges them in, so a pass costs O(capped flows)
// plus a sort of the new ones rather than a sort of all.
void FlowNetwork::sort_capped() {
  const auto before = [this](uint32_t a, uint32_t b) {
    const Flow& x = flows_[a];
    const Flow& y = flows_[b];
    return x.cap < y.cap || (x.cap == y.cap && x.seq < y.seq);
  };
  std::erase_if(capped_flows_, [this](uint32_t f) { return !flows_[f].in_sorted; });
  const std::size_t old_size = capped_flows_.size();
  for (const uint32_t f : capped_live_) {
    if (flows_[f].in_sorted) continue;
    flows_[f].in_sorted = true;
    capped_flows_.push_back(f);
  }
  const auto mid = capped_flows_.begin() + static_cast<std::ptrdiff_t>(old_size);
  std::sort(mid, capped_flows_.end(), before);
  std::inplace_merge(capped_flows_.begin(), mid, capped_flows_.end(), before);
}

void FlowNetwork::freeze_capped(uint32_t f) {
  Flow& fl = flows_[f];
  if (fl.group != kCapGroup) move_flow(f, kCapGroup);
  fl.frozen_mark = epoch_;
  for (const Hop& h : fl.hops) {
    fill_rem_[h.link] -= fl.cap;
    --fill_cnt_[h.link];
  }
  trace_rate(fl, fl.cap);
}

void FlowNetwork::freeze_link(uint32_t li, double level) {
  // The unfrozen flows crossing li that sit in another unfrozen group now have li as their
  // bottleneck. There are some iff li has more unfrozen flows than members (members of an
  // unfrozen group are unfrozen). Only the pairs of li with flows are visited, from the back:
  // a pair emptied here is replaced by the last one (already visited), and a pair that gains
  // flows here, (li, li), is appended. Indices, not references: moving a flow may add pairs.
  const uint32_t self = links_[li].self_pair;
  if (fill_cnt_[li] != (self == kNone ? 0 : pairs_[self].flows.size())) {
    for (std::size_t pi = links_[li].live.size(); pi-- > 0;) {
      const auto [g, pid] = links_[li].live[pi];
      if (g == li) continue;
      if (g == kCapGroup) {
        for (std::size_t i = pairs_[pid].flows.size(); i-- > 0;) {
          const uint32_t f = pairs_[pid].flows[i].flow;
          if (flows_[f].frozen_mark != epoch_) move_flow(f, li);
        }
      } else if (!fill_frozen_[g]) {
        while (!pairs_[pid].flows.empty()) move_flow(pairs_[pid].flows.back().flow, li);
      }
    }
  }
  fill_frozen_[li] = 1;
  fill_level_[li] = level;
  // Raw pointers: stores through the vectors' elements could otherwise alias their bounds.
  uint32_t* const cnt = fill_cnt_.data();
  double* const rem = fill_rem_.data();
  for (const GroupLink& gl : links_[li].glinks) {
    cnt[gl.link] -= gl.count;
    rem[gl.link] -= static_cast<double>(gl.count) * level;
  }
}

}  // namespace ridge::sim
