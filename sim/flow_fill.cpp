// FlowNetwork's progressive filling over links with counts aggregated by group (see
// sim/flow.hpp for the method and why it is exact).
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define RIDGE_FLOW_AVX2 1
#endif

#include "sim/flow.hpp"

namespace ridge::sim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Whether an island's links (in index order, as during a pass) are one run of consecutive
// indices, so that its per-link state is one contiguous range (one island of all links, say).
bool contiguous(const std::vector<uint32_t>& links) {
  return !links.empty() && links.back() - links.front() + 1 == links.size();
}

#if defined(RIDGE_FLOW_AVX2)
// least() with 4-wide vectors where the CPU has AVX2 (half the instructions of the SSE2 scan).
__attribute__((target("avx2"))) std::pair<double, std::size_t> least_avx2(const double* a,
                                                                          std::size_t n) {
  __m256d m0 = _mm256_loadu_pd(a), m1 = _mm256_loadu_pd(a + 4);
  for (std::size_t i = 8; i < n; i += 8) {
    m0 = _mm256_min_pd(m0, _mm256_loadu_pd(a + i));
    m1 = _mm256_min_pd(m1, _mm256_loadu_pd(a + i + 4));
  }
  m0 = _mm256_min_pd(m0, m1);
  __m128d h = _mm_min_pd(_mm256_castpd256_pd128(m0), _mm256_extractf128_pd(m0, 1));
  h = _mm_min_sd(h, _mm_unpackhi_pd(h, h));
  const double m = _mm_cvtsd_f64(h);
  const __m256d mm = _mm256_set1_pd(m);
  for (std::size_t i = 0;; i += 8) {
    const int mask = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(a + i), mm, _CMP_EQ_OQ)) |
                     _mm256_movemask_pd(_mm256_cmp_pd(_mm256_loadu_pd(a + i + 4), mm, _CMP_EQ_OQ))
                         << 4;
    if (mask != 0)
      return {m, i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(mask)))};
  }
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2") != 0;
  return yes;
}
#endif

// The least of a[0, n) (n a multiple of 8, no NaN) and the first index holding it.
std::pair<double, std::size_t> least(const double* a, std::size_t n) {
#if defined(RIDGE_FLOW_AVX2)
  if (has_avx2()) return least_avx2(a, n);
#endif
#if defined(__SSE2__)
  // Four independent minima hide minpd's latency; then the first lane equal to the minimum.
  __m128d m0 = _mm_loadu_pd(a), m1 = _mm_loadu_pd(a + 2);
  __m128d m2 = _mm_loadu_pd(a + 4), m3 = _mm_loadu_pd(a + 6);
  for (std::size_t i = 8; i < n; i += 8) {
    m0 = _mm_min_pd(m0, _mm_loadu_pd(a + i));
    m1 = _mm_min_pd(m1, _mm_loadu_pd(a + i + 2));
    m2 = _mm_min_pd(m2, _mm_loadu_pd(a + i + 4));
    m3 = _mm_min_pd(m3, _mm_loadu_pd(a + i + 6));
  }
  m0 = _mm_min_pd(_mm_min_pd(m0, m1), _mm_min_pd(m2, m3));
  m0 = _mm_min_sd(m0, _mm_unpackhi_pd(m0, m0));
  const double m = _mm_cvtsd_f64(m0);
  const __m128d mm = _mm_set1_pd(m);
  for (std::size_t i = 0;; i += 8) {
    const int mask = _mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(a + i), mm)) |
                     _mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(a + i + 2), mm)) << 2 |
                     _mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(a + i + 4), mm)) << 4 |
                     _mm_movemask_pd(_mm_cmpeq_pd(_mm_loadu_pd(a + i + 6), mm)) << 6;
    if (mask != 0)
      return {m, i + static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(mask)))};
  }
#else
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (a[i] < a[best]) best = i;
  }
  return {a[best], best};
#endif
}

}  // namespace

// Progressive filling over links (see the header): raise the level of every unfrozen flow
// together; when a link runs out of capacity, the unfrozen flows crossing it freeze at the
// link's fair share; when the level reaches a flow's cap, that flow freezes at its cap (a cap
// equal to the level wins the tie, as in the reference solver). The next link to saturate is
// the one with the least share (spare capacity per unfrozen flow). Every freeze updates the
// spare capacity, count and share of the links it touches in dense per-link arrays (the share
// as spare x 1/count from a table, so no division per update), and the next link is found by a
// linear SIMD scan of the shares: ~130 scans of ~150 shares cost less than keeping a heap of
// shares ordered under ~40 share changes per freeze. The table's product is within 2 ulp of
// the quotient, so the link found has the least share up to 2 ulp; its level is the exact
// quotient. With more than kScanBlock links, the scan goes block by block: each block keeps a
// lower bound of its shares (shares only rise while the level rises: a link loses c flows and
// c x level <= c x share of spare capacity), the block with the least bound is scanned and its
// bound made exact, until no other block's bound is below the least share found.
void FlowNetwork::fill(uint32_t root) {
  ++epoch_;
  fill_island_ = root;
  Record& rec = records_[root];
  if (!rec.links_sorted) {
    // Joined since its last pass (so this pass starts from scratch): its links back in index
    // order, which is the order of their state in memory, for the per-link loops and scans.
    std::vector<uint32_t>& links = island_links_[root];
    std::sort(links.begin(), links.end());
    for (uint32_t i = 0; i < links.size(); ++i) island_pos_[links[i]] = i;
    rec.links_sorted = true;
  }
  uint32_t step = start_filling();
  sort_capped(rec);
  const std::vector<CappedRef>& capped = rec.capped_sorted;
  std::size_t ci = 0;
  double low = 0;  // no link's share is below this
  for (;;) {
    while (ci < capped.size()) {
      const Flow& fl = flows_[capped[ci].flow];
      // (kNone: a new flow not placed yet, so unfrozen.)
      const bool frozen = fl.group == kCapGroup ? fl.frozen_mark == epoch_
                                                : fl.group != kNone && fill_frozen_[fl.group] != 0;
      if (!frozen) break;
      ++ci;
    }
    // Shares only rise, so a cap at or below the least share found so far is reached before
    // any link saturates: no need to search.
    if (ci < capped.size() && flows_[capped[ci].flow].cap <= low) {
      freeze_capped(capped[ci++].flow);
      continue;
    }
    const uint32_t bottleneck = min_share_link();
    const double level = bottleneck == kNone ? kInf
                                             : std::max(0.0, fill_rem_[bottleneck]) /
                                                   static_cast<double>(fill_cnt_[bottleneck]);
    low = level;
    if (ci < capped.size() && flows_[capped[ci].flow].cap <= level) {
      freeze_capped(capped[ci++].flow);
      continue;
    }
    if (bottleneck == kNone) break;
    if (rec.snapshots && step % kSnapshotSteps == 0) take_snapshot(step);
    freeze_link(bottleneck, level);
    // Append, or overwrite the last pass's record (a resumed pass starts inside it).
    if (rec.steps.size() <= step) {
      rec.steps.resize(step);
      rec.steps.push_back(bottleneck);
    } else {
      rec.steps[step] = bottleneck;
    }
    if (rec.step_level.size() <= step) {
      rec.step_level.resize(step);
      rec.step_level.push_back(level);
    } else {
      rec.step_level[step] = level;
    }
    step_of_[bottleneck] = step++;
  }
  // The state after the last freeze is the one a resumed pass needs before step `step`.
  if (rec.snapshots && step % kSnapshotSteps == 0) take_snapshot(step);
  rec.steps.resize(step);
  rec.step_level.resize(step);
  const std::vector<uint32_t>& links = island_links_[root];
  const std::size_t n = links.size();
  rec.resumable = rec.snapshots;
  rec.changes = 0;
  if (fill_from_ == 0) {
    // Snapshots pay when they cost less than the count updates a full pass makes.
    std::size_t updates = 0;
    for (const uint32_t k : rec.steps) updates += links_[k].glinks.size();
    rec.snapshots = rec.capped == 0 && (step / kSnapshotSteps + 1) * n <= updates;
  }
  for (const uint32_t k : links) {
    // A link frozen before the step this pass resumed from keeps its spare capacity and level.
    if (step_of_[k] < fill_from_) continue;
    Link& l = links_[k];
    if (l.flow_count == 0) continue;
    // set_load() of an unchanged load does nothing: skip the call.
    const double load = std::clamp(l.capacity - fill_rem_[k], 0.0, l.capacity);
    if (load != l.load) set_load(k, load);
    if (!fill_frozen_[k] || l.group_flows == 0) continue;
    const double level = fill_level_[k];
    const double diff = std::fabs(level - l.level);
    if (diff > kRateTolerance * std::max(level, l.level) || (l.level == 0) != (level == 0)) {
      set_level(k, level);
    }
  }
}

// Sets up the filling's per-link state: from scratch (returns 0), or, after a single arrival
// or departure since the last pass, from the last pass's snapshot at or before the first step
// that change affects (returns that step; see resume_point()).
uint32_t FlowNetwork::start_filling() {
  Record& rec = records_[fill_island_];
  const std::vector<uint32_t>& links = island_links_[fill_island_];
  const auto n = static_cast<uint32_t>(links.size());
  shares_stale_ = false;
  uint32_t replay_to = 0;
  const uint32_t from = resume_point(replay_to);
  fill_from_ = from;
  if (from > 0 || replay_to > 0) {
    restore_filling(from, replay_to);
    ++resumed_;
    return replay_to;
  }
  rec.steps.clear();
  rec.step_level.clear();
  clear_share_slots(n);
  // One loop: each link's state and, for one with flows, its slot and share (capacity x 1/count).
  for (const uint32_t k : links) {
    Link& l = links_[k];
    const uint32_t c = l.flow_count;
    step_of_[k] = kNone;
    fill_rem_[k] = l.capacity;
    fill_cnt_[k] = c;
    if (c == 0) {
      fill_frozen_[k] = 1;
      fill_slot_[k] = kNone;
      if (l.load != 0) set_load(k, 0.0);
      continue;
    }
    if (c >= inverse_.size()) grow_inverse(c);
    fill_frozen_[k] = 0;
    fill_slot_[k] = fill_live_;
    fill_share_[fill_live_] = l.capacity * inverse_[c];
    fill_link_[fill_live_++] = k;
  }
  return 0;
}

// Where the filling may resume: returns the snapshot step to restore and sets `replay_to`, the
// first step whose freeze the change may alter (the last pass's freezes in between are
// replayed). Both 0 for a full pass. Exact: before `replay_to`, the last pass's choices stand.
// - A departure from group g: before g's step, the departing flow was unfrozen on all its links
//   (g is the first of them to freeze), so removing it only raises those links' shares; every
//   earlier choice (the least share) stands.
// - An arrival lowers its links' shares to spare / (count + 1). An earlier choice stands while
//   each of its links, unfrozen, keeps a share above that step's level; between snapshots a
//   share only rises, so a link whose share at a snapshot exceeds every level up to the next
//   snapshot does so at every step between them. The arrival also changes the filling at the
//   first step of one of its links, where it would freeze with that link's flows.
uint32_t FlowNetwork::resume_point(uint32_t& replay_to) const {
  replay_to = 0;
  const Record& rec = records_[fill_island_];
  if (!rec.resumable || !rec.snapshots || rec.changes != 1 || rec.capped != 0) return 0;
  const std::size_t n = island_links_[fill_island_].size();
  if (rec.snap_cnt.size() < n) return 0;
  auto q = static_cast<uint32_t>(rec.steps.size());
  for (const uint32_t k : rec.change_links) {
    // A link without flows in the last pass or now: its place in the filling changes.
    if (links_[k].flow_count == 0 ||
        rec.snap_cnt[island_pos_[k]] + (rec.change_delta < 0 ? 1 : 0) == 0) {
      return 0;
    }
    if (rec.change_delta > 0 && step_of_[k] != kNone) q = std::min(q, step_of_[k]);
  }
  if (rec.change_delta < 0) {
    if (rec.change_group >= links_.size() || step_of_[rec.change_group] == kNone) return 0;
    q = step_of_[rec.change_group];
  } else {
    for (const uint32_t k : rec.change_links) {
      for (uint32_t j = 0; j * kSnapshotSteps < q; ++j) {
        const uint32_t first = j * kSnapshotSteps;
        const uint32_t last = std::min(q, first + kSnapshotSteps);
        double level = 0;
        for (uint32_t i = first; i < last; ++i) level = std::max(level, rec.step_level[i]);
        const std::size_t at = j * n + island_pos_[k];
        const double share =
            std::max(0.0, rec.snap_rem[at]) / (static_cast<double>(rec.snap_cnt[at]) + 1.0);
        if (!(share > level)) {
          q = first;
          break;
        }
      }
    }
  }
  replay_to = q;
  return q / kSnapshotSteps * kSnapshotSteps;
}

// Restores the per-link state before step `from` of the last pass, with the change applied,
// and replays the last pass's freezes up to step `to`.
void FlowNetwork::clear_share_slots(uint32_t n) {
  const std::size_t padded = (static_cast<std::size_t>(n) + 7) / 8 * 8;
  fill_share_.assign(padded, kInf);
  fill_live_ = 0;
  block_low_.assign((padded + kScanBlock - 1) / kScanBlock, 0.0);
}

void FlowNetwork::restore_filling(uint32_t from, uint32_t to) {
  Record& rec = records_[fill_island_];
  const std::vector<uint32_t>& links = island_links_[fill_island_];
  const auto n = static_cast<uint32_t>(links.size());
  const uint32_t snap = from / kSnapshotSteps;
  // The change's links are unfrozen before `from`: its count belongs in every snapshot kept.
  for (uint32_t j = 0; j <= snap; ++j) {
    for (const uint32_t k : rec.change_links) {
      uint32_t& c = rec.snap_cnt[j * n + island_pos_[k]];
      c = static_cast<uint32_t>(static_cast<int64_t>(c) + rec.change_delta);
    }
  }
  const double* const rem = rec.snap_rem.data() + static_cast<std::size_t>(snap) * n;
  const uint32_t* const cnt = rec.snap_cnt.data() + static_cast<std::size_t>(snap) * n;
  if (contiguous(links)) {
    std::copy_n(rem, n, fill_rem_.begin() + links.front());
    std::copy_n(cnt, n, fill_cnt_.begin() + links.front());
  } else {
    for (uint32_t i = 0; i < n; ++i) {
      fill_rem_[links[i]] = rem[i];
      fill_cnt_[links[i]] = cnt[i];
    }
  }
  for (std::size_t i = from; i < rec.steps.size(); ++i) step_of_[rec.steps[i]] = kNone;
  clear_share_slots(n);
  uint32_t most = 0;
  for (const uint32_t k : links) {
    if (links_[k].flow_count == 0 || step_of_[k] != kNone) {
      fill_frozen_[k] = 1;
      fill_slot_[k] = kNone;
      continue;
    }
    fill_frozen_[k] = 0;
    fill_slot_[k] = fill_live_;
    fill_link_[fill_live_++] = k;
    most = std::max(most, links_[k].flow_count);
  }
  grow_inverse(most);
  for (uint32_t i = 0; i < fill_live_; ++i) {
    const uint32_t k = fill_link_[i];
    fill_share_[i] = fill_cnt_[k] == 0 ? kInf : fill_rem_[k] * inverse_[fill_cnt_[k]];
  }
  for (uint32_t i = from; i < to; ++i) {
    freeze_link(rec.steps[i], rec.step_level[i]);
    step_of_[rec.steps[i]] = i;
  }
}

void FlowNetwork::grow_inverse(uint32_t most) {
  if (inverse_.size() > most) return;
  const std::size_t from = inverse_.size();
  inverse_.resize(most + 1);
  inverse_[0] = kInf;
  for (std::size_t c = std::max<std::size_t>(from, 1); c <= most; ++c) {
    inverse_[c] = 1.0 / static_cast<double>(c);
  }
}

void FlowNetwork::take_snapshot(uint32_t step) {
  Record& rec = records_[fill_island_];
  const std::vector<uint32_t>& links = island_links_[fill_island_];
  const std::size_t n = links.size();
  const std::size_t at = step / kSnapshotSteps * n;
  if (rec.snap_rem.size() < at + n) {
    rec.snap_rem.resize(at + n);
    rec.snap_cnt.resize(at + n);
  }
  if (contiguous(links)) {
    std::copy_n(fill_rem_.begin() + links.front(), n, rec.snap_rem.begin() + at);
    std::copy_n(fill_cnt_.begin() + links.front(), n, rec.snap_cnt.begin() + at);
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    rec.snap_rem[at + i] = fill_rem_[links[i]];
    rec.snap_cnt[at + i] = fill_cnt_[links[i]];
  }
}

// The unfrozen link with the least share, or kNone if every link is frozen or has no unfrozen
// flow (see fill()).
uint32_t FlowNetwork::min_share_link() {
  const std::size_t padded = (fill_live_ + 7) / 8 * 8;
  if (padded == 0) return kNone;
  if (shares_stale_) {
    // Capped freezes since the last search left shares as they were (lower bounds, as shares
    // only rise): bring them up to date once here rather than at each of those freezes.
    for (uint32_t i = 0; i < fill_live_; ++i) {
      const uint32_t k = fill_link_[i];
      fill_share_[i] = fill_cnt_[k] == 0 ? kInf : fill_rem_[k] * inverse_[fill_cnt_[k]];
    }
    shares_stale_ = false;
  }
  const std::size_t blocks = (padded + kScanBlock - 1) / kScanBlock;
  for (;;) {
    std::size_t b = 0;
    double other = kInf;  // least bound of the other blocks
    for (std::size_t i = 1; i < blocks; ++i) {
      if (block_low_[i] < block_low_[b]) {
        other = block_low_[b];
        b = i;
      } else {
        other = std::min(other, block_low_[i]);
      }
    }
    const std::size_t first = b * kScanBlock;
    const auto [share, i] =
        least(fill_share_.data() + first, std::min<std::size_t>(kScanBlock, padded - first));
    block_low_[b] = share;
    if (share <= other) return share == kInf ? kNone : fill_link_[first + i];
  }
}

// Brings an island's capped flows by (cap, seq) up to date: drops those gone since its last
// pass, sorts only those new since then and merges them in, so a pass costs O(the island's
// capped flows) plus a sort of the new ones rather than a sort of all.
void FlowNetwork::sort_capped(Record& rec) {
  const auto before = [this](const CappedRef& a, const CappedRef& b) {
    const Flow& x = flows_[a.flow];
    const Flow& y = flows_[b.flow];
    return x.cap < y.cap || (x.cap == y.cap && x.seq < y.seq);
  };
  std::erase_if(rec.capped_sorted, [this](const CappedRef& c) {
    const Flow& fl = flows_[c.flow];
    return fl.seq != c.seq || !fl.in_sorted;
  });
  const std::size_t old_size = rec.capped_sorted.size();
  for (const CappedRef& c : rec.capped_new) {
    Flow& fl = flows_[c.flow];
    if (fl.seq != c.seq || !fl.capped_moving || fl.in_sorted) continue;
    fl.in_sorted = true;
    rec.capped_sorted.push_back(c);
  }
  rec.capped_new.clear();
  const auto mid = rec.capped_sorted.begin() + static_cast<std::ptrdiff_t>(old_size);
  std::sort(mid, rec.capped_sorted.end(), before);
  std::inplace_merge(rec.capped_sorted.begin(), mid, rec.capped_sorted.end(), before);
}

void FlowNetwork::to_capped(uint32_t f) {
  if (flows_[f].group == kNone) {
    join_pairs(f, kCapGroup);  // new since the last pass: placed here, once
  } else {
    move_flow(f, kCapGroup);
  }
}

void FlowNetwork::freeze_capped(uint32_t f) {
  Flow& fl = flows_[f];
  if (fl.group != kCapGroup) to_capped(f);
  fl.frozen_mark = epoch_;
  shares_stale_ = true;
  for (const Hop& h : hops_of(fl)) {
    const uint32_t k = h.link;
    fill_rem_[k] -= fl.cap;
    --fill_cnt_[k];
  }
  trace_rate(fl, fl.cap);
}

void FlowNetwork::freeze_link(uint32_t li, double level) {
  // The unfrozen flows crossing li that sit in another unfrozen group, or in none yet (new
  // since the last pass), now have li as their bottleneck. There are some iff li has more
  // unfrozen flows than members (members of an unfrozen group are unfrozen). Only the pairs of li
  // with flows are visited, from the back: a pair emptied here is replaced by the last one (already
  // visited), and a pair that gains flows here, (li, li), is appended. Indices, not references:
  // moving a flow may add pairs.
  if (fill_cnt_[li] != links_[li].group_flows) {
    for (std::size_t pi = links_[li].live.size(); pi-- > 0;) {
      const auto [g, pid] = links_[li].live[pi];
      if (g == li) continue;
      if (g == kCapGroup) {
        for (std::size_t i = pairs_[pid].flows.size(); i-- > 0;) {
          const uint32_t f = pairs_[pid].flows[i].flow;
          if (flows_[f].frozen_mark != epoch_) move_flow(f, li);
        }
      } else if (!fill_frozen_[g]) {
        // Their flows and hops requested together before the first move.
        for (const PairEntry& e : pairs_[pid].flows) {
          __builtin_prefetch(&flows_[e.flow]);
          __builtin_prefetch(&hops_[e.hop]);
        }
        while (!pairs_[pid].flows.empty()) move_flow(pairs_[pid].flows.back().flow, li);
      }
    }
    // The flows arrived over li since the last pass and not placed by an earlier freeze (nor
    // gone since): li is the first of their links to saturate, so its group is theirs.
    for (const PendingRef& r : link_pending_[li]) {
      const Flow& fl = flows_[r.flow];
      if (fl.seq == r.seq && fl.pending && fl.group == kNone) join_pairs(r.flow, li);
    }
  }
  fill_frozen_[li] = 1;
  fill_level_[li] = level;
  // Raw pointers: stores through the vectors' elements could otherwise alias their bounds.
  uint32_t* const cnt = fill_cnt_.data();
  double* const rem = fill_rem_.data();
  double* const share = fill_share_.data();
  const uint32_t* const slot = fill_slot_.data();
  const double* const inverse = inverse_.data();
  const PoolVector<GroupLink>& glinks = links_[li].glinks;
  const GroupLink* const end = glinks.data() + glinks.size();
  for (const GroupLink* gl = glinks.data(); gl != end; ++gl) {
    // A negative spare (rounding) gives a negative share: it goes first, at level 0.
    const uint32_t k = gl->link;
    const uint32_t c = cnt[k] - gl->count;
    const double r = rem[k] - static_cast<double>(gl->count) * level;
    cnt[k] = c;
    rem[k] = r;
    share[slot[k]] = c == 0 ? kInf : r * inverse[c];
  }
  // Out of the dense array: the last unfrozen link takes its slot (that block's bound may fall).
  const uint32_t s = fill_slot_[li];
  const uint32_t last = --fill_live_;
  share[s] = share[last];
  share[last] = kInf;
  fill_link_[s] = fill_link_[last];
  fill_slot_[fill_link_[s]] = s;
  fill_slot_[li] = kNone;
  double& low = block_low_[s / kScanBlock];
  low = std::min(low, share[s]);
}

}  // namespace ridge::sim
