// Benchmarks of the discrete-event engine (sim/): event throughput on the classic hold model
// beside a bare std::priority_queue doing the same work, and flow arrivals/departures per second
// on a two-level fat-tree-like set of links. Figures and the command that produced them are in
// bench/README.md ("## sim engine").
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <queue>
#include <random>
#include <vector>

#include "sim/flow.hpp"
#include "sim/simulator.hpp"

namespace {

using ridge::sim::FlowNetwork;
using ridge::sim::LinkId;
using ridge::sim::Simulator;
using ridge::sim::Time;

constexpr uint32_t kDelayTableSize = 1 << 16;
constexpr int kEventsPerIteration = 1000;

// Exponential delays with a mean of 1 us, drawn once so both loops pay the same for them.
const std::vector<int64_t>& delay_table() {
  static const std::vector<int64_t> table = [] {
    std::mt19937_64 rng(42);
    std::exponential_distribution<double> exp(1.0 / 1e6);  // mean 1e6 ps
    std::vector<int64_t> t(kDelayTableSize);
    for (auto& d : t) d = static_cast<int64_t>(exp(rng));
    return t;
  }();
  return table;
}

// Hold model (Jones, "An empirical comparison of priority-queue and event-set implementations",
// CACM 1986): every event, when it runs, schedules one new event at now + random delay, so the
// number pending stays N.
struct Hold {
  Simulator* sim;
  const int64_t* delays;
  uint32_t* next;
  void operator()() const {
    sim->schedule_after(Time{delays[(*next)++ & (kDelayTableSize - 1)]}, *this);
  }
};

void BM_EngineHold(benchmark::State& state) {
  const auto pending = static_cast<int64_t>(state.range(0));
  const int64_t* delays = delay_table().data();
  Simulator sim;
  uint32_t next = 0;
  for (int64_t i = 0; i < pending; ++i) {
    sim.schedule_at(Time{delays[next++ & (kDelayTableSize - 1)]}, Hold{&sim, delays, &next});
  }
  for (auto _ : state) {
    for (int k = 0; k < kEventsPerIteration; ++k) sim.step();
  }
  state.SetItemsProcessed(state.iterations() * kEventsPerIteration);
  state.counters["pending"] = static_cast<double>(sim.pending_events());
}

// The same work on a bare binary heap of 16-byte keys: no callable, no cancellation, no slab.
void BM_BareHeapHold(benchmark::State& state) {
  struct Ev {
    int64_t time;
    uint64_t seq;
    bool operator>(const Ev& o) const { return time > o.time || (time == o.time && seq > o.seq); }
  };
  const auto pending = static_cast<int64_t>(state.range(0));
  const int64_t* delays = delay_table().data();
  std::priority_queue<Ev, std::vector<Ev>, std::greater<>> pq;
  uint32_t next = 0;
  uint64_t seq = 0;
  for (int64_t i = 0; i < pending; ++i) pq.push({delays[next++ & (kDelayTableSize - 1)], seq++});
  for (auto _ : state) {
    for (int k = 0; k < kEventsPerIteration; ++k) {
      const Ev e = pq.top();
      pq.pop();
      pq.push({e.time + delays[next++ & (kDelayTableSize - 1)], seq++});
    }
    benchmark::DoNotOptimize(pq.top());
  }
  state.SetItemsProcessed(state.iterations() * kEventsPerIteration);
}

BENCHMARK(BM_EngineHold)->Arg(1'000)->Arg(1'000'000);
BENCHMARK(BM_BareHeapHold)->Arg(1'000)->Arg(1'000'000);

// Flows on a two-level fat-tree-like network: 64 leaf uplinks and 64 leaf downlinks (50 GB/s),
// 16 spine links (200 GB/s), 500 ns latency each. A flow goes up its source leaf, through 0, 1
// or 2 spine links, and down its destination leaf: 2 to 4 links. Sizes are exponential, mean
// 1 MB. Closed loop: each completion starts a new flow, so `concurrent` flows stay active; a
// flow's arrival (after its path latency) and its departure each count as one change.
// range(1) is the per-flow cap in MB/s (0: uncapped, every link saturated, every change runs a
// progressive-filling pass and alters the rate of about half the flows; 250: sources keep
// links below capacity, the common case in models where a flow is capped at what its source
// keeps in flight).
struct FatTreeLoad {
  Simulator sim;
  FlowNetwork net{sim};
  // Per fabric (island): its leaf uplinks, leaf downlinks and spine links.
  struct Fabric {
    std::vector<LinkId> up, down, spine;
  };
  std::vector<Fabric> fabrics;
  std::mt19937_64 rng{7};
  std::exponential_distribution<double> size{1.0 / 1e6};
  double cap;
  uint64_t completed = 0;

  // `islands` separate fabrics of `leaves` up and down links (50 GB/s) and `spines` spine
  // links (200 GB/s) each; no flow crosses two fabrics.
  explicit FatTreeLoad(double cap_bytes_per_s, int islands = 1, int leaves = 64, int spines = 16)
      : cap(cap_bytes_per_s) {
    fabrics.resize(static_cast<std::size_t>(islands));
    for (Fabric& f : fabrics) {
      for (int i = 0; i < leaves; ++i) f.up.push_back(net.add_link("up", 50e9, Time::from_ns(500)));
      for (int i = 0; i < leaves; ++i) {
        f.down.push_back(net.add_link("down", 50e9, Time::from_ns(500)));
      }
      for (int i = 0; i < spines; ++i) {
        f.spine.push_back(net.add_link("spine", 200e9, Time::from_ns(500)));
      }
    }
  }
  // A new flow on fabric `island` (on completion, the next one starts on the same fabric).
  void start(std::size_t island = 0) {
    const Fabric& f = fabrics[island];
    LinkId path[4];
    int n = 0;
    path[n++] = f.up[rng() % f.up.size()];
    const int spines = static_cast<int>(rng() % 3);
    const std::size_t s0 = rng() % f.spine.size();
    for (int k = 0; k < spines; ++k) path[n++] = f.spine[(s0 + k) % f.spine.size()];
    path[n++] = f.down[rng() % f.down.size()];
    net.start_flow(
        std::span<const LinkId>(path, n), 1.0 + size(rng),
        [this, island] {
          ++completed;
          start(island);
        },
        cap);
  }
};

void BM_FlowChurn(benchmark::State& state) {
  const auto concurrent = static_cast<int>(state.range(0));
  const double cap =
      state.range(1) > 0 ? static_cast<double>(state.range(1)) * 1e6 : FlowNetwork::kNoRateLimit;
  FatTreeLoad load(cap);
  for (int i = 0; i < concurrent; ++i) load.start();
  load.sim.run_until(Time::from_us(5));  // past the first arrivals and their recompute
  const uint64_t recomputes0 = load.net.recomputes();
  const uint64_t fast0 = load.net.fast_updates();
  const uint64_t resumed0 = load.net.resumed_fills();
  uint64_t changes = 0;
  const int per_iteration = state.range(1) > 0 ? 1000 : 20;
  for (auto _ : state) {
    const uint64_t target = load.completed + per_iteration;
    while (load.completed < target) load.sim.step();
    changes += 2 * per_iteration;  // each completion is one departure and later one arrival
  }
  state.SetItemsProcessed(static_cast<int64_t>(changes));
  state.counters["active_flows"] = static_cast<double>(load.net.active_flows());
  state.counters["recomputes_per_change"] =
      static_cast<double>(load.net.recomputes() - recomputes0) / static_cast<double>(changes);
  state.counters["fast_path_share"] =
      static_cast<double>(load.net.fast_updates() - fast0) / static_cast<double>(changes);
  state.counters["resumed_share"] =
      static_cast<double>(load.net.resumed_fills() - resumed0) /
      std::max(1.0, static_cast<double>(load.net.recomputes() - recomputes0));
}

BENCHMARK(BM_FlowChurn)
    ->Args({10'000, 250})
    ->Args({100'000, 25})
    ->Args({10'000, 0})
    ->Unit(benchmark::kMicrosecond);

// The same scenario with a fixed amount of work per run, so two binaries time the same stretch of
// the same simulation (BM_FlowChurn picks its iteration count from the time per iteration, so
// each binary measures a different stretch): after the 5 us warm-up, range(2) completions (each
// one departure and one arrival) in one timed iteration.
void BM_FlowChurnFixed(benchmark::State& state) {
  const auto concurrent = static_cast<int>(state.range(0));
  const double cap =
      state.range(1) > 0 ? static_cast<double>(state.range(1)) * 1e6 : FlowNetwork::kNoRateLimit;
  const auto completions = static_cast<uint64_t>(state.range(2));
  uint64_t changes = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto load = std::make_unique<FatTreeLoad>(cap);
    for (int i = 0; i < concurrent; ++i) load->start();
    load->sim.run_until(Time::from_us(5));
    const uint64_t target = load->completed + completions;
    state.ResumeTiming();
    while (load->completed < target) load->sim.step();
    changes += 2 * completions;
    state.PauseTiming();
    load.reset();  // the network's destruction is not part of the timed work
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(changes));
}

BENCHMARK(BM_FlowChurnFixed)
    ->Args({10'000, 0, 20'000})
    ->Args({10'000, 250, 300'000})
    ->Args({100'000, 25, 200'000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// Uncapped churn on separate fabrics (islands) in one network, each a quarter of the fat tree
// above (16 up, 16 down, 4 spine links) with 625 flows, as 16 GPU nodes with no traffic
// between them would be: range(0) fabrics, range(1) completions in one timed iteration. A
// change costs a filling pass over its own fabric only, so changes/s should not depend on how
// many fabrics there are.
void BM_FlowChurnIslands(benchmark::State& state) {
  const auto islands = static_cast<int>(state.range(0));
  const auto completions = static_cast<uint64_t>(state.range(1));
  uint64_t changes = 0, passes = 0, links = 0, resumed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto load = std::make_unique<FatTreeLoad>(FlowNetwork::kNoRateLimit, islands, 16, 4);
    for (int i = 0; i < 625 * islands; ++i) load->start(static_cast<std::size_t>(i % islands));
    load->sim.run_until(Time::from_us(5));
    const uint64_t target = load->completed + completions;
    const uint64_t passes0 = load->net.recomputes(), links0 = load->net.filled_links();
    const uint64_t resumed0 = load->net.resumed_fills();
    state.ResumeTiming();
    while (load->completed < target) load->sim.step();
    state.PauseTiming();
    changes += 2 * completions;
    passes += load->net.recomputes() - passes0;
    links += load->net.filled_links() - links0;
    resumed += load->net.resumed_fills() - resumed0;
    load.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<int64_t>(changes));
  const double pass_count = std::max(1.0, static_cast<double>(passes));
  state.counters["links_per_pass"] = static_cast<double>(links) / pass_count;
  state.counters["recomputes_per_change"] =
      static_cast<double>(passes) / static_cast<double>(std::max<uint64_t>(1, changes));
  state.counters["resumed_share"] = static_cast<double>(resumed) / pass_count;
}

BENCHMARK(BM_FlowChurnIslands)
    ->Args({1, 20'000})
    ->Args({16, 20'000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
