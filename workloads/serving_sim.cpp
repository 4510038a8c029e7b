#include "workloads/serving_sim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

namespace ridge::workloads {

KvBudget kv_budget(const TransformerConfig& m, const hw::GpuSpec& gpu, const SchedulerSpec& s,
                   int tp) {
  KvBudget k;
  // Norm weights are replicated on every rank: < 0.01% of the parameters, ignored.
  k.weights_bytes = 2.0 * double(m.parameter_count()) / tp;
  // A forward over T tokens keeps a layer's input, residual and QKV (bf16) and the MLP's gate_up
  // output and activation (bf16) live at its peak: T (6 d + 6 ffn) bytes; plus fp32 logits of the
  // sampled rows. The same estimate vLLM's profiling run measures, not a measurement of it.
  const double T = double(s.max_batched_tokens);
  // With tp the FFN activations are split; the first rank holds the gathered logits.
  k.activation_bytes =
      T * (6.0 * m.d_model + 6.0 * double(m.ffn) / tp) + 4.0 * s.max_num_seqs * m.vocab;
  k.bytes_per_block = 2.0 /*K,V*/ * m.layers * double(rank_heads(m, tp).kv) * double(m.head_dim) *
                      2.0 /*bf16*/ * double(s.block_size);
  k.kv_bytes =
      s.gpu_memory_utilization * gpu.memory.hbm_size - k.weights_bytes - k.activation_bytes;
  k.blocks = s.num_blocks > 0
                 ? s.num_blocks
                 : std::max<long long>(0, static_cast<long long>(k.kv_bytes / k.bytes_per_block));
  if (s.num_blocks > 0) k.kv_bytes = double(k.blocks) * k.bytes_per_block;
  return k;
}

namespace {

struct Seq {
  Request r;
  long long cached = 0;      // tokens whose K/V are in the cache
  long long prefill_to = 0;  // cache length at which the (re)prefill ends
  long long generated = 0;
  long long blocks = 0;
  double first_token_s = -1, last_token_s = -1;
  bool scheduled_once = false;
  int preemptions = 0;
  bool swapped = false;
  long long shared = 0;  // blocks of a cached prefix it reads (owned by the prefix cache)
};

// A prefix's full KV blocks kept for reuse (vLLM's automatic prefix caching, by prefix id).
struct Prefix {
  long long blocks = 0;
  int refs = 0;  // running sequences reading it
  double last_use_s = 0;
  bool resident = false;
};

using Key = std::tuple<int, double, std::int64_t>;

class Engine {
 public:
  Engine(RequestSource& src, IterationCostModel& cost, const TransformerConfig& m,
         const hw::GpuSpec& gpu, const ServeOptions& o)
      : src_(src), cost_(cost), o_(o), S_(o.scheduler) {
    r_.series = TimeSeries(o.series_points);
    r_.kv = kv_budget(m, gpu, S_, cost.engine().tp);
    total_blocks_ = free_blocks_ = r_.kv.blocks;
    pcie_ = gpu.interconnect.pcie_bandwidth;
    next_ = src_.next();
    if (next_) r_.first_arrival_s = next_->arrival_s;
    if (S_.prefix_caching && S_.preemption == Preemption::kSwap)
      throw std::invalid_argument("prefix caching with swap preemption is not modelled");
  }

  ServeResult run() {
    if (total_blocks_ <= 0)
      throw std::invalid_argument(
          fmt::format("no KV cache blocks: {:.1f} GB for weights and activations leave nothing of "
                      "gpu_memory_utilization x HBM",
                      (r_.kv.weights_bytes + r_.kv.activation_bytes) / 1e9));
    for (;;) {
      pull(t_);
      if (waiting_.empty() && running_.empty()) {
        if (!next_) break;
        t_ = next_->arrival_s;  // idle until the next arrival: nobody in the system meanwhile
        continue;
      }
      if (S_.policy == SchedulerPolicy::kStatic)
        static_iteration();
      else
        iteration();
    }
    r_.makespan_s = t_;
    // Every block is free or held by the prefix cache once all requests are done.
    if (free_blocks_ + resident_blocks_ != total_blocks_)
      throw std::logic_error(fmt::format("serving: KV blocks leaked ({} free + {} cached of {})",
                                         free_blocks_, resident_blocks_, total_blocks_));
    return std::move(r_);
  }

 private:
  RequestSource& src_;
  IterationCostModel& cost_;
  const ServeOptions& o_;
  const SchedulerSpec& S_;
  ServeResult r_;
  std::optional<Request> next_;
  std::map<Key, Seq> waiting_;
  std::vector<Seq> running_;
  long long total_blocks_ = 0, free_blocks_ = 0;
  std::map<long long, Prefix> prefixes_;  // ordered: eviction ties break the same everywhere
  long long resident_blocks_ = 0;
  double pcie_ = 0;
  double t_ = 0;
  // The validation loop's cache rows (EngineCost::row_move_s / row_shift_s set): request ids in
  // row order, each row's first cache column, and the common write column.
  std::vector<std::int64_t> rows_;
  std::map<std::int64_t, long long> row_start_;
  long long col_ = 0;
  // Static batching: the batch's padded prompt and longest output, and the iteration within it.
  long long static_prompt_ = 0, static_steps_ = 0, static_step_ = 0;

  Key key(const Seq& s) const { return {S_.priority ? s.r.priority : 0, s.r.arrival_s, s.r.id}; }
  long long blocks_for(long long tokens) const {
    return (tokens + S_.block_size - 1) / S_.block_size;
  }

  // Makes `need` blocks free if possible, evicting cached prefixes no one reads (least recently
  // used first) before anything is preempted.
  bool reserve(long long need) {
    while (need > free_blocks_) {
      Prefix* victim = nullptr;
      for (auto& [id, p] : prefixes_)
        if (p.resident && p.refs == 0 && (!victim || p.last_use_s < victim->last_use_s))
          victim = &p;
      if (!victim) return false;
      victim->resident = false;
      free_blocks_ += victim->blocks;
      resident_blocks_ -= victim->blocks;
    }
    return true;
  }

  // Full blocks of `s`'s prefix that can be shared (at least one prompt token is left to compute).
  long long prefix_blocks(const Seq& s) const {
    if (!S_.prefix_caching || s.r.prefix_id < 0) return 0;
    return std::min(s.r.prefix_tokens, s.r.prompt_tokens - 1) / S_.block_size;
  }

  // A new or recomputed sequence whose prefix is cached starts after it.
  void attach_prefix(Seq& s) {
    const long long bp = prefix_blocks(s);
    if (bp == 0 || s.cached != 0) return;
    auto it = prefixes_.find(s.r.prefix_id);
    if (it == prefixes_.end() || !it->second.resident) return;
    const long long use = std::min(bp, it->second.blocks);
    s.shared = use;
    s.cached = use * S_.block_size;
    ++it->second.refs;
    it->second.last_use_s = t_;
  }

  // After a prefill chunk: once the prefix is computed, its blocks go to the cache (or, if
  // another sequence cached it meanwhile, this sequence's copy is freed and the cached one read).
  void publish_prefix(Seq& s) {
    const long long bp = prefix_blocks(s);
    if (bp == 0 || s.shared > 0 || s.cached < bp * S_.block_size) return;
    Prefix& p = prefixes_[s.r.prefix_id];
    if (p.resident && p.blocks >= bp) {
      free_blocks_ += bp;
    } else {
      if (p.resident) {  // a shorter copy: replaced
        free_blocks_ += p.blocks;
        resident_blocks_ -= p.blocks;
      }
      p.blocks = bp;
      p.resident = true;
      resident_blocks_ += bp;
    }
    s.blocks -= bp;
    s.shared = bp;
    ++p.refs;
    p.last_use_s = t_;
  }

  void release_prefix(Seq& s) {
    if (s.shared == 0) return;
    Prefix& p = prefixes_[s.r.prefix_id];
    --p.refs;
    p.last_use_s = t_;
    s.shared = 0;
  }

  void pull(double upto) {
    while (next_ && next_->arrival_s <= upto) {
      Seq s;
      s.r = *next_;
      s.prefill_to = s.r.prompt_tokens;
      if (s.r.first_token_s >= 0) {  // prefilled elsewhere: its KV cache and first token arrive
        s.cached = s.r.prompt_tokens;
        s.generated = 1;
        s.first_token_s = s.last_token_s = s.r.first_token_s;
      }
      if (blocks_for(s.r.prompt_tokens + s.r.output_tokens) > total_blocks_)
        throw std::invalid_argument(fmt::format(
            "request {} ({} prompt + {} output tokens) needs more KV blocks than the {} of {} "
            "tokens that fit",
            s.r.id, s.r.prompt_tokens, s.r.output_tokens, total_blocks_, S_.block_size));
      r_.prompt_tokens += s.r.prompt_tokens;
      waiting_.emplace(key(s), s);
      next_ = src_.next();
    }
  }

  void finish(Seq& s, double end_s) {
    const double arrival = s.r.origin_arrival_s >= 0 ? s.r.origin_arrival_s : s.r.arrival_s;
    RequestRecord rec{s.r.id, arrival,           s.first_token_s,   s.last_token_s,
                      end_s,  s.r.prompt_tokens, s.r.output_tokens, s.preemptions};
    const double ttft = s.first_token_s - arrival, e2e = end_s - arrival;
    r_.ttft.add(ttft);
    r_.e2e.add(e2e);
    double tpot = 0;
    if (s.r.output_tokens > 1) {
      tpot = (s.last_token_s - s.first_token_s) / double(s.r.output_tokens - 1);
      r_.tpot.add(tpot);
    }
    const auto& slo = o_.slo;
    if ((slo.ttft_s <= 0 || ttft <= slo.ttft_s) && (slo.tpot_s <= 0 || tpot <= slo.tpot_s) &&
        (slo.e2e_s <= 0 || e2e <= slo.e2e_s))
      ++r_.slo_met;
    ++r_.requests;
    r_.output_tokens += s.r.output_tokens;
    if (o_.record_requests) r_.records.push_back(rec);
  }

  void record_token(Seq& s, double t1) {
    ++s.generated;
    if (s.first_token_s < 0) s.first_token_s = t1;
    s.last_token_s = t1;
  }

  // Advances time over an iteration of `dt`, accounting arrivals that land inside it.
  void advance(double dt) {
    const double t1 = t_ + dt;
    r_.in_system_integral += double(waiting_.size() + running_.size()) * dt;
    while (next_ && next_->arrival_s <= t1) {
      r_.in_system_integral += t1 - next_->arrival_s;
      pull(next_->arrival_s);
    }
    r_.busy_s += dt;
    ++r_.iterations;
    t_ = t1;
  }

  // Waits without an iteration (nothing can be scheduled) until `t1`.
  void wait_until(double t1) {
    r_.in_system_integral += double(waiting_.size() + running_.size()) * (t1 - t_);
    while (next_ && next_->arrival_s <= t1) {
      r_.in_system_integral += t1 - next_->arrival_s;
      pull(next_->arrival_s);
    }
    t_ = t1;
  }

  void sample(long long batch, long long tokens) {
    const double used =
        total_blocks_ ? double(total_blocks_ - free_blocks_) / double(total_blocks_) : 0;
    r_.max_kv_used = std::max(r_.max_kv_used, used);
    r_.max_batch = std::max(r_.max_batch, batch);
    r_.series.add({t_, used, static_cast<int>(batch), static_cast<int>(waiting_.size()), tokens});
  }

  // Frees `s`'s blocks and sends it back to the waiting queue (recompute) or to host memory.
  double preempt(Seq s) {
    double copy_s = 0;
    ++s.preemptions;
    ++r_.preemptions;
    free_blocks_ += s.blocks;
    release_prefix(s);
    if (S_.preemption == Preemption::kSwap && pcie_ > 0) {
      copy_s = double(s.blocks) * r_.kv.bytes_per_block / pcie_;
      s.swapped = true;  // keeps its cache (on the host) and its block count
    } else {
      s.blocks = 0;
      s.cached = 0;
      s.prefill_to = s.r.prompt_tokens + s.generated;  // recompute prompt + tokens so far
    }
    waiting_.emplace(key(s), s);
    return copy_s;
  }

  void iteration() {
    struct Item {
      std::size_t seq;
      long long tokens;
    };
    std::vector<Item> items;
    long long budget = S_.max_batched_tokens;
    double copy_s = 0;
    bool preempted = false;
    const bool prefill_first = S_.policy == SchedulerPolicy::kPrefillFirst;
    const bool chunked = S_.policy == SchedulerPolicy::kChunked;
    std::vector<Seq> next_running;  // scheduled this iteration, in order, then the unscheduled
    int admitted = 0;               // prompts admitted from the waiting queue this iteration
    // Admission (returns whether one was admitted); `alone`: nothing else in the iteration.
    const auto admit = [&]() {
      if (preempted) return false;
      bool any = false;
      while (!waiting_.empty() && long(running_.size() + next_running.size()) < S_.max_num_seqs &&
             budget > 0) {
        auto it = waiting_.begin();
        Seq s = it->second;
        if (s.swapped) {
          if (!reserve(blocks_for(s.cached + 1))) break;
          free_blocks_ -= s.blocks;
          copy_s += double(s.blocks) * r_.kv.bytes_per_block / pcie_;
          s.swapped = false;
        }
        attach_prefix(s);
        const long long remaining = s.prefill_to - s.cached;
        long long chunk = remaining;
        if (remaining > budget) {
          if (chunked)
            chunk = budget;
          else if (admitted > 0) {
            release_prefix(s);
            break;  // a whole prompt must fit what is left of the budget...
          }
          // ...unless it is the iteration's first prompt: vLLM without chunked prefill requires
          // max_num_batched_tokens >= max_model_len, so one prompt always fits; here a longer
          // prompt runs as the iteration's only prefill (beside the decodes).
        }
        const long long need =
            blocks_for(s.cached + std::max<long long>(chunk, 1)) - s.blocks - s.shared;
        if (!reserve(need)) {
          release_prefix(s);  // stays waiting; it attaches again when admitted
          s.cached = 0;
          break;
        }
        free_blocks_ -= need;
        s.blocks += need;
        if (!s.scheduled_once) {
          s.scheduled_once = true;
          r_.queue.add(t_ - s.r.arrival_s);
        }
        waiting_.erase(it);
        budget -= std::max<long long>(chunk, 1);
        next_running.push_back(s);
        items.push_back({next_running.size() - 1, std::max<long long>(chunk, 1)});
        ++admitted;
        any = true;
      }
      return any;
    };
    bool prefill_only = false;
    if (prefill_first) prefill_only = admit();
    std::vector<bool> done(running_.size(), false);
    if (!prefill_only) {
      // Running sequences first, in order; a block shortage preempts the worst-ordered
      // unscheduled sequence (possibly the one asking).
      for (std::size_t i = 0; i < running_.size(); ++i) {
        if (done[i]) continue;
        Seq& s = running_[i];
        const long long want = s.cached < s.prefill_to ? std::min(s.prefill_to - s.cached, budget)
                                                       : (budget > 0 ? 1 : 0);
        if (want == 0) continue;
        long long need = blocks_for(s.cached + want) - s.blocks - s.shared;
        bool self_preempted = false;
        while (!reserve(need)) {
          std::size_t victim = i;
          for (std::size_t j = i + 1; j < running_.size(); ++j)
            if (!done[j] && key(running_[j]) > key(running_[victim])) victim = j;
          done[victim] = true;
          copy_s += preempt(running_[victim]);
          preempted = true;
          if (victim == i) {
            self_preempted = true;
            break;
          }
        }
        if (self_preempted) continue;
        free_blocks_ -= need;
        s.blocks += need;
        budget -= want;
        done[i] = true;
        next_running.push_back(s);
        items.push_back({next_running.size() - 1, want});
      }
      // Unscheduled but not preempted (budget exhausted) stay running.
      for (std::size_t i = 0; i < running_.size(); ++i)
        if (!done[i]) next_running.push_back(running_[i]);
      running_.clear();
      if (!prefill_first) admit();
    } else {
      for (auto& s : running_) next_running.push_back(s);
      running_.clear();
    }
    running_.swap(next_running);
    if (items.empty()) {
      // Nothing scheduled: after a preemption the next pass admits again; otherwise nothing can
      // change before the next arrival, or ever.
      if (preempted) return;
      if (!next_)
        throw std::invalid_argument("the scheduler cannot make progress: KV cache too small");
      wait_until(next_->arrival_s);
      return;
    }
    BatchShape b;
    long long tokens = 0;
    for (const auto& it : items) {
      const Seq& s = running_[it.seq];
      tokens += it.tokens;
      if (s.cached >= s.prefill_to) {
        ++b.decodes;
        b.decode_context_sum += s.cached;
        b.decode_context_max = std::max(b.decode_context_max, s.cached);
      } else {
        b.prefills.push_back({it.tokens, s.cached, s.cached + it.tokens >= s.prefill_to});
      }
    }
    cost_.at_time(t_);
    const IterationParts parts = cost_.time(b);
    const double dt = parts.total_s + copy_s;
    if (o_.record_requests)
      r_.iteration_records.push_back({t_, dt, cost_.engine().hf_eager ? parts.host_s : 0.0,
                                      static_cast<int>(b.prefills.size()), b.decodes,
                                      b.decode_context_max, tokens});
    advance(dt);
    const bool rows = cost_.engine().row_move_s > 0 || cost_.engine().row_shift_s > 0;
    if (rows && b.decodes > 0) ++col_;
    for (const auto& it : items) {
      Seq& s = running_[it.seq];
      const bool decode = s.cached >= s.prefill_to;
      s.cached += it.tokens;
      if (!decode) publish_prefix(s);
      if (decode || s.cached >= s.prefill_to) record_token(s, t_);
      if (rows && !decode && s.cached >= s.prefill_to) {
        // A prefilled sequence takes the next row; its prompt ends at the write column (an empty
        // cache starts the column at the prompt's length).
        if (rows_.empty()) col_ = s.r.prompt_tokens;
        rows_.push_back(s.r.id);
        row_start_[s.r.id] = std::max<long long>(0, col_ - s.r.prompt_tokens);
      }
    }
    sample(static_cast<long long>(items.size()), tokens);
    std::vector<Seq> keep;
    keep.reserve(running_.size());
    std::set<std::int64_t> finished;
    for (auto& s : running_) {
      if (s.generated >= s.r.output_tokens) {
        free_blocks_ += s.blocks;
        release_prefix(s);
        finish(s, t_);
        finished.insert(s.r.id);
      } else {
        keep.push_back(std::move(s));
      }
    }
    running_.swap(keep);
    if (rows && !finished.empty()) housekeeping(finished);
  }

  // The loop's housekeeping after an iteration (validate/e2e/serve_llama.py): finished rows are
  // freed from the last one back, the last row's sequence moving into each freed row that is not
  // the last; then, if the oldest running sequence no longer starts at column 0, every row shifts
  // left. The host time it takes delays the next iteration.
  void housekeeping(const std::set<std::int64_t>& finished) {
    int moves = 0;
    for (std::size_t i = rows_.size(); i-- > 0;) {
      if (!finished.count(rows_[i])) continue;
      row_start_.erase(rows_[i]);
      if (i + 1 != rows_.size()) {
        rows_[i] = rows_.back();
        ++moves;
      }
      rows_.pop_back();
    }
    bool shift = false;
    if (!rows_.empty()) {
      long long sh = col_;
      for (const auto& [id, st] : row_start_) sh = std::min(sh, st);
      if (sh > 0) {
        for (auto& [id, st] : row_start_) st -= sh;
        col_ -= sh;
        shift = true;
      }
    }
    const double hk = cost_.housekeeping_s(moves, shift);
    if (hk > 0) advance(hk);
  }

  void static_iteration() {
    if (running_.empty()) {
      // Form a batch from the waiting requests, reserving prompt + output for the longest.
      long long pmax = 0, omax = 0;
      while (!waiting_.empty() && long(running_.size()) < S_.max_num_seqs) {
        const Seq& s = waiting_.begin()->second;
        const long long p = std::max(pmax, s.r.prompt_tokens);
        const long long out = std::max(omax, s.r.output_tokens);
        const long long n = static_cast<long long>(running_.size()) + 1;
        if (n * blocks_for(p + out) > total_blocks_ && !running_.empty()) break;
        pmax = p, omax = out;
        running_.push_back(s);
        r_.queue.add(t_ - s.r.arrival_s);
        waiting_.erase(waiting_.begin());
      }
      const long long n = static_cast<long long>(running_.size());
      free_blocks_ = total_blocks_ - n * blocks_for(pmax + omax);
      static_prompt_ = pmax, static_steps_ = omax, static_step_ = 0;
    }
    const long long n = static_cast<long long>(running_.size());
    BatchShape b;
    if (static_step_ == 0) {
      for (long long i = 0; i < n; ++i) b.prefills.push_back({static_prompt_, 0, true});
    } else {
      b.decodes = n;  // finished rows stay in the padded batch
      b.decode_context_sum = n * (static_prompt_ + static_step_ - 1);
      b.decode_context_max = static_prompt_ + static_step_ - 1;
    }
    cost_.at_time(t_);
    const IterationParts parts = cost_.time(b);
    if (o_.record_requests)
      r_.iteration_records.push_back(
          {t_, parts.total_s, cost_.engine().hf_eager ? parts.host_s : 0.0,
           static_cast<int>(b.prefills.size()), b.decodes, b.decode_context_max,
           static_step_ == 0 ? n * static_prompt_ : n});
    advance(parts.total_s);
    ++static_step_;
    for (auto& s : running_)
      if (s.generated < s.r.output_tokens) record_token(s, t_);
    sample(n, static_step_ == 1 ? n * static_prompt_ : n);
    if (static_step_ >= static_steps_) {
      // generate() returns the whole batch at once.
      for (auto& s : running_) finish(s, t_);
      running_.clear();
      free_blocks_ = total_blocks_;
    }
  }
};

}  // namespace

ServeResult simulate_serving(RequestSource& source, IterationCostModel& cost,
                             const TransformerConfig& m, const hw::GpuSpec& gpu,
                             const ServeOptions& o) {
  Engine e(source, cost, m, gpu, o);
  return e.run();
}

}  // namespace ridge::workloads
