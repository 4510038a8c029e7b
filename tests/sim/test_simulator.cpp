// Tests of the event queue: total order (time, priority, insertion), cancellation, run control.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "sim/simulator.hpp"

using ridge::sim::EventId;
using ridge::sim::Priority;
using ridge::sim::Simulator;
using ridge::sim::Time;

TEST_CASE("Same-time events run by priority, then insertion order", "[analytic][simulator]") {
  // Scheduled in the order 0..5 at t = 10 ps with priorities N, F, L, N, F, E.
  // Expected: by priority kFirst(1, 4), kEarly(5), kNormal(0, 3), kLast(2); equal priorities keep
  // insertion order.
  Simulator sim;
  std::vector<int> order;
  const std::array<Priority, 6> prio = {Priority::kNormal, Priority::kFirst, Priority::kLast,
                                        Priority::kNormal, Priority::kFirst, Priority::kEarly};
  for (int i = 0; i < 6; ++i) {
    sim.schedule_at(
        Time{10}, [&order, i] { order.push_back(i); }, prio[i]);
  }
  sim.schedule_at(
      Time{5}, [&order] { order.push_back(-1); }, Priority::kLast);  // earlier time
  sim.run();
  CHECK(order == std::vector<int>{-1, 1, 4, 5, 0, 3, 2});
  CHECK(sim.now() == Time{10});
  CHECK(sim.events_executed() == 7);
}

TEST_CASE("Event order matches a reference priority queue on random input", "[unit][simulator]") {
  // Random times (few distinct, to force ties), random priorities, events that schedule more
  // events while running (possibly at now with a higher priority), and random cancellations.
  // The reference is a live std::priority_queue of (time, priority, sequence): every executed
  // event must be the reference's smallest key that was not cancelled.
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 20; ++round) {
    Simulator sim;
    using Key = std::tuple<int64_t, int, uint64_t>;  // time, priority, sequence
    std::priority_queue<Key, std::vector<Key>, std::greater<>> ref;
    std::set<uint64_t> cancelled;
    std::vector<EventId> ids;  // indexed by sequence
    uint64_t executed = 0;
    uint64_t mismatches = 0;
    std::uniform_int_distribution<int> prio_d(0, 4);
    const std::array<Priority, 5> prios = {Priority::kFirst, Priority::kEarly, Priority::kNormal,
                                           Priority::kLate, Priority::kLast};
    auto pop_ref = [&]() -> uint64_t {
      while (!ref.empty() && cancelled.count(std::get<2>(ref.top()))) ref.pop();
      if (ref.empty()) return UINT64_MAX;
      const uint64_t s = std::get<2>(ref.top());
      ref.pop();
      return s;
    };
    std::function<void(int64_t)> add = [&](int64_t t) {
      const int p = prio_d(rng);
      const uint64_t s = ids.size();
      ref.emplace(t, static_cast<int>(prios[p]), s);
      ids.push_back(sim.schedule_at(
          Time{t},
          [&, s] {
            ++executed;
            if (pop_ref() != s) ++mismatches;
            if (rng() % 3 == 0) add(sim.now().ps + static_cast<int64_t>(rng() % 5));
            if (rng() % 7 == 0) {
              const std::size_t k = rng() % ids.size();
              if (sim.cancel(ids[k])) cancelled.insert(k);
            }
          },
          prios[p]));
    };
    for (int i = 0; i < 300; ++i) add(static_cast<int64_t>(rng() % 50));
    for (int i = 0; i < 30; ++i) {
      const std::size_t k = rng() % ids.size();
      if (sim.cancel(ids[k])) cancelled.insert(k);
    }
    sim.run();
    CHECK(mismatches == 0);
    CHECK(pop_ref() == UINT64_MAX);  // nothing the reference expected was left unrun
    CHECK(executed + cancelled.size() == ids.size());
    CHECK(sim.events_executed() == executed);
    CHECK(sim.pending_events() == 0);
  }
}

TEST_CASE("Cancel removes a pending event only once", "[unit][simulator]") {
  Simulator sim;
  int ran = 0;
  const EventId a = sim.schedule_at(Time{10}, [&] { ++ran; });
  const EventId b = sim.schedule_at(Time{20}, [&] { ++ran; });
  EventId self;
  bool self_cancel = true;
  self = sim.schedule_at(Time{30}, [&] { self_cancel = sim.cancel(self); });
  CHECK(sim.is_pending(a));
  CHECK(sim.cancel(a));
  CHECK_FALSE(sim.cancel(a));
  CHECK_FALSE(sim.is_pending(a));
  CHECK_FALSE(sim.cancel(EventId{}));
  sim.run();
  CHECK(ran == 1);
  CHECK_FALSE(self_cancel);    // a running event is no longer pending
  CHECK_FALSE(sim.cancel(b));  // already ran
  CHECK(sim.events_executed() == 2);
}

TEST_CASE("Mass cancellation compacts the queue and keeps order", "[unit][simulator]") {
  Simulator sim;
  std::vector<EventId> ids;
  std::vector<int64_t> times;
  for (int i = 0; i < 5000; ++i) {
    ids.push_back(sim.schedule_at(Time{(i * 7919) % 5000},
                                  [&times, &sim] { times.push_back(sim.now().ps); }));
  }
  for (int i = 0; i < 5000; ++i) {
    if (i % 10 != 0) CHECK(sim.cancel(ids[i]));
  }
  CHECK(sim.pending_events() == 500);
  sim.run();
  REQUIRE(times.size() == 500);
  CHECK(std::is_sorted(times.begin(), times.end()));
}

TEST_CASE("run_until runs events up to the limit and advances the clock", "[unit][simulator]") {
  Simulator sim;
  std::vector<int64_t> seen;
  for (int64_t t : {10, 20, 30}) sim.schedule_at(Time{t}, [&seen, t] { seen.push_back(t); });
  sim.run_until(Time{20});
  CHECK(seen == std::vector<int64_t>{10, 20});  // an event exactly at the limit runs
  CHECK(sim.now() == Time{20});
  sim.run_until(Time{25});
  CHECK(sim.now() == Time{25});
  CHECK(sim.next_event_time() == Time{30});
  sim.run();
  CHECK(seen == std::vector<int64_t>{10, 20, 30});
  CHECK(sim.now() == Time{30});
  CHECK(sim.next_event_time() == Time::max());
}

TEST_CASE("stop() and the stop predicate end a run that can resume", "[unit][simulator]") {
  Simulator sim;
  int ran = 0;
  for (int t = 1; t <= 10; ++t) {
    sim.schedule_at(Time{t}, [&] {
      ++ran;
      if (ran == 3) sim.stop();
    });
  }
  sim.run();
  CHECK(ran == 3);
  CHECK(sim.stopped());
  CHECK(sim.now() == Time{3});
  sim.set_stop_predicate([&] { return ran >= 7; });
  sim.run_until(Time{100});
  CHECK(ran == 7);
  CHECK(sim.now() == Time{7});  // a stopped run_until does not advance to its limit
  sim.set_stop_predicate(nullptr);
  sim.run();
  CHECK(ran == 10);
  CHECK_FALSE(sim.stopped());
}

TEST_CASE("Scheduling in the past is refused; step() runs one event", "[unit][simulator]") {
  Simulator sim;
  sim.schedule_at(Time{100}, [] {});
  CHECK(sim.step());
  CHECK(sim.now() == Time{100});
  CHECK_THROWS_AS(sim.schedule_at(Time{99}, [] {}), std::invalid_argument);
  CHECK_FALSE(sim.step());
  bool ran = false;
  sim.schedule_after(Time{5}, [&] { ran = true; });
  sim.run();
  CHECK(ran);
  CHECK(sim.now() == Time{105});
}

TEST_CASE("Large captures fall back to the heap and are destroyed", "[unit][simulator]") {
  Simulator sim;
  auto shared = std::make_shared<int>(0);
  std::array<int64_t, 32> big{};  // 256 bytes: too large for the inline buffer
  big[31] = 7;
  sim.schedule_at(Time{1}, [big, shared] { *shared += static_cast<int>(big[31]); });
  const EventId c = sim.schedule_at(Time{2}, [big, shared] { *shared += 100; });
  CHECK(shared.use_count() == 3);
  sim.cancel(c);
  CHECK(shared.use_count() == 2);  // a cancelled event's callable is destroyed at once
  sim.run();
  CHECK(*shared == 7);
  CHECK(shared.use_count() == 1);
}

// 100k pending events span several slab chunks (the sixth, 2 MiB, is the first asked for huge
// pages) and enough buckets that slots are prefetched and large buckets are spread rather than
// sorted; order must still be (time, insertion), and a cancelled event in any chunk must
// neither run nor read as pending.
TEST_CASE("A large queue across slab chunks keeps order and cancellation", "[unit][simulator]") {
  constexpr int kEvents = 100'000;
  Simulator sim;
  std::mt19937_64 rng(11);
  std::vector<EventId> ids;
  std::vector<int64_t> when(kEvents);
  std::vector<int> ran;
  for (int i = 0; i < kEvents; ++i) {
    when[i] = static_cast<int64_t>(rng() % 20'000);  // many equal times: insertion order decides
    ids.push_back(sim.schedule_at(Time{when[i]}, [&ran, i] { ran.push_back(i); }));
  }
  int cancelled = 0;
  for (int i = 0; i < kEvents; i += 7) {
    CHECK(sim.cancel(ids[i]));
    CHECK_FALSE(sim.is_pending(ids[i]));
    ++cancelled;
  }
  CHECK(sim.is_pending(ids[kEvents - 1]));
  CHECK(sim.pending_events() == static_cast<uint64_t>(kEvents - cancelled));
  sim.run();
  REQUIRE(ran.size() == static_cast<std::size_t>(kEvents - cancelled));
  bool ordered = true;
  for (std::size_t k = 1; k < ran.size(); ++k) {
    const int a = ran[k - 1], b = ran[k];
    if (std::tie(when[a], a) >= std::tie(when[b], b)) ordered = false;
  }
  CHECK(ordered);
  CHECK(std::none_of(ran.begin(), ran.end(), [](int i) { return i % 7 == 0; }));
  CHECK_FALSE(sim.is_pending(ids[kEvents - 1]));
}

namespace {

// A reference for the engine's total order: the set of pending (time, priority, sequence) keys.
// Every event, when it runs, must be the smallest pending key; cancel() removes a key.
struct OrderChecker {
  using Key = std::tuple<int64_t, int, uint64_t>;
  Simulator& sim;
  std::set<Key> pending;
  std::vector<EventId> ids;  // by sequence
  std::vector<Key> keys;     // by sequence
  uint64_t mismatches = 0;
  uint64_t ran = 0;
  std::function<void(uint64_t)> on_run = [](uint64_t) {};

  explicit OrderChecker(Simulator& s) : sim(s) {}
  uint64_t add(int64_t t, Priority p) {
    const uint64_t seq = ids.size();
    keys.emplace_back(t, static_cast<int>(p), seq);
    pending.insert(keys.back());
    ids.push_back(sim.schedule_at(
        Time{t},
        [this, seq] {
          ++ran;
          if (pending.empty() || std::get<2>(*pending.begin()) != seq) ++mismatches;
          pending.erase(keys[seq]);
          if (sim.now().ps != std::get<0>(keys[seq])) ++mismatches;
          on_run(seq);
        },
        p));
    return seq;
  }
  bool cancel(uint64_t seq) {
    const bool done = sim.cancel(ids[seq]);
    if (done != (pending.count(keys[seq]) == 1)) ++mismatches;
    pending.erase(keys[seq]);
    return done;
  }
  Time expected_next() const {
    return pending.empty() ? Time::max() : Time{std::get<0>(*pending.begin())};
  }
};

constexpr std::array<Priority, 5> kPriorities = {
    Priority::kFirst, Priority::kEarly, Priority::kNormal, Priority::kLate, Priority::kLast};

}  // namespace

TEST_CASE("Order holds over wide time ranges with run_until, look-ahead and cancellation",
          "[unit][simulator]") {
  // Delays from picoseconds to 2^40 ps (so events sit at every level of the radix queue and in
  // the sorted window), events scheduled at now() by running events, from outside between
  // run_until() calls (possibly before a time next_event_time() looked ahead to), and
  // cancellations, including of the earliest pending event. Every executed event must be the
  // reference's smallest key; next_event_time() must equal the reference's smallest time.
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    Simulator sim;
    OrderChecker ref(sim);
    auto delay = [&]() -> int64_t {
      switch (rng() % 6) {
        case 0:
          return 0;
        case 1:
          return static_cast<int64_t>(rng() % 4);
        case 2:
          return static_cast<int64_t>(rng() % 300);
        case 3:
          return static_cast<int64_t>(rng() % 70'000);
        case 4:
          return static_cast<int64_t>(rng() % 20'000'000);
        default: {
          const int bits = static_cast<int>(rng() % 41);
          return static_cast<int64_t>(rng() % (uint64_t{1} << bits));
        }
      }
    };
    auto prio = [&] { return kPriorities[rng() % kPriorities.size()]; };
    ref.on_run = [&](uint64_t) {
      if (rng() % 8 < 5) ref.add(sim.now().ps + delay(), prio());
      if (rng() % 16 == 0) ref.add(sim.now().ps + delay(), prio());
      if (rng() % 10 == 0) ref.cancel(rng() % ref.ids.size());
    };
    for (int i = 0; i < 2000; ++i) ref.add(delay(), prio());
    uint64_t next_time_errors = 0;
    for (int round = 0; round < 400 && !ref.pending.empty(); ++round) {
      const int64_t limit = sim.now().ps + delay();
      sim.run_until(Time{limit});
      CHECK(sim.now() == Time{limit});
      if (sim.next_event_time() != ref.expected_next()) ++next_time_errors;
      if (rng() % 3 == 0 && !ref.pending.empty()) {
        ref.cancel(std::get<2>(*ref.pending.begin()));  // the earliest pending event
      }
      if (rng() % 2 == 0) {
        if (sim.next_event_time() != ref.expected_next()) ++next_time_errors;
      }
      for (int k = static_cast<int>(rng() % 5); k > 0; --k) ref.add(sim.now().ps + delay(), prio());
      CHECK(sim.pending_events() == ref.pending.size());
    }
    sim.run();
    CHECK(ref.mismatches == 0);
    CHECK(next_time_errors == 0);
    CHECK(ref.pending.empty());
    CHECK(sim.pending_events() == 0);
    CHECK(sim.events_executed() == ref.ran);
  }
}

TEST_CASE("Events scheduled at now run by priority among those already due", "[unit][simulator]") {
  // At t = 50: A (kNormal) and B (kLate) are due. A, when run, schedules C at now with kFirst
  // and D at now with kLate. Order by (time, priority, sequence): A; then C (kFirst); then B
  // and D (both kLate, B scheduled first); an event at 51 last.
  Simulator sim;
  std::vector<char> order;
  sim.schedule_at(Time{51}, [&] { order.push_back('E'); });
  sim.schedule_at(Time{50}, [&] {
    order.push_back('A');
    sim.schedule_at(
        Time{50}, [&] { order.push_back('C'); }, Priority::kFirst);
    sim.schedule_after(
        Time{0}, [&] { order.push_back('D'); }, Priority::kLate);
  });
  sim.schedule_at(
      Time{50}, [&] { order.push_back('B'); }, Priority::kLate);
  sim.run();
  CHECK(order == std::vector<char>{'A', 'C', 'B', 'D', 'E'});
}

TEST_CASE("Cancelling the earliest event exposes the next one", "[unit][simulator]") {
  Simulator sim;
  int ran = 0;
  const EventId a = sim.schedule_at(Time{100}, [&] { ran += 1; });
  sim.schedule_at(
      Time{100}, [&] { ran += 10; }, Priority::kLate);
  sim.schedule_at(Time{300}, [&] { ran += 100; });
  CHECK(sim.next_event_time() == Time{100});
  CHECK(sim.cancel(a));
  CHECK(sim.next_event_time() == Time{100});  // the kLate one at the same time
  CHECK(sim.step());
  CHECK(ran == 10);
  CHECK(sim.next_event_time() == Time{300});
  sim.run();
  CHECK(ran == 110);
}

TEST_CASE("Times near the int64 limit keep their order", "[unit][simulator]") {
  // Jumps of ~2^62 ps and events at Time::max() (the largest time) put events in the top level
  // of the radix queue; they must still run in (time, priority, insertion) order.
  Simulator sim;
  std::vector<int> order;
  const int64_t max = Time::max().ps;
  sim.schedule_at(Time::max(), [&] { order.push_back(5); });
  sim.schedule_at(
      Time::max(), [&] { order.push_back(4); }, Priority::kFirst);
  sim.schedule_at(Time{max - 1}, [&] { order.push_back(3); });
  sim.schedule_at(Time{int64_t{1} << 62}, [&] {
    order.push_back(1);
    sim.schedule_after(Time{max - (int64_t{1} << 62) - 2}, [&] { order.push_back(2); });
  });
  sim.schedule_at(Time{0}, [&] { order.push_back(0); });
  sim.run_until(Time{(int64_t{1} << 62) + 5});
  CHECK(order == std::vector<int>{0, 1});
  CHECK(sim.next_event_time() == Time{max - 2});
  sim.run();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(sim.now() == Time::max());
  CHECK(sim.pending_events() == 0);
}

TEST_CASE("Events scheduled before a looked-ahead time still run first", "[unit][simulator]") {
  // next_event_time() with a cancelled event pending has to look past it, to t = 1000, while
  // now() is 20; events then scheduled between 20 and 1000 must run before the one at 1000,
  // in (time, priority, insertion) order, also when they schedule more such events.
  Simulator sim;
  std::vector<int> order;
  sim.schedule_at(Time{1000}, [&] { order.push_back(9); });
  const EventId gone = sim.schedule_at(Time{500}, [&] { order.push_back(-1); });
  sim.run_until(Time{20});
  CHECK(sim.cancel(gone));
  CHECK(sim.next_event_time() == Time{1000});
  CHECK(sim.now() == Time{20});
  sim.schedule_at(Time{30}, [&] { order.push_back(2); });
  sim.schedule_at(
      Time{30}, [&] { order.push_back(1); }, Priority::kFirst);
  sim.schedule_at(Time{20}, [&] {
    order.push_back(0);
    sim.schedule_at(Time{999}, [&] { order.push_back(4); });
    sim.schedule_at(Time{1000}, [&] { order.push_back(10); });
  });
  sim.schedule_at(Time{40}, [&] { order.push_back(3); });
  CHECK(sim.next_event_time() == Time{20});
  sim.run();
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 9, 10});
}

TEST_CASE("Many events scheduled into a short span keep their order", "[unit][simulator]") {
  // The first event emptied from a sparse bucket opens a window of 65536 ps; 5000 events then
  // scheduled at random times inside it (more than the window takes by insertion) and at its
  // current time must still run in (time, priority, insertion) order.
  Simulator sim;
  OrderChecker ref(sim);
  std::mt19937_64 rng(99);
  ref.add(70'000, Priority::kNormal);
  ref.add(70'001, Priority::kNormal);
  ref.add(140'000, Priority::kNormal);
  CHECK(sim.step());
  for (int i = 0; i < 5000; ++i) {
    const int64_t t = 70'000 + static_cast<int64_t>(rng() % 60'000);
    ref.add(rng() % 10 == 0 ? 70'000 : t, kPriorities[rng() % kPriorities.size()]);
  }
  for (int i = 0; i < 100; ++i) ref.cancel(rng() % ref.ids.size());
  sim.run();
  CHECK(ref.mismatches == 0);
  CHECK(ref.pending.empty());
  CHECK(sim.events_executed() == ref.ran);
}

TEST_CASE("Events scheduled at a looked-ahead time are ordered by priority", "[unit][simulator]") {
  // next_event_time() looks past a cancelled event to A at 1000, which is then alone at the
  // front; events scheduled afterwards at exactly 1000 must still run by priority around it:
  // C (kFirst), A (kNormal, scheduled first), E (kNormal), D (kLast).
  Simulator sim;
  std::vector<char> order;
  sim.schedule_at(Time{1000}, [&] { order.push_back('A'); });
  const EventId gone = sim.schedule_at(Time{500}, [&] { order.push_back('-'); });
  CHECK(sim.cancel(gone));
  CHECK(sim.next_event_time() == Time{1000});
  sim.run_until(Time{999});
  CHECK(order.empty());
  sim.schedule_at(
      Time{1000}, [&] { order.push_back('D'); }, Priority::kLast);
  sim.schedule_at(
      Time{1000}, [&] { order.push_back('C'); }, Priority::kFirst);
  sim.schedule_at(Time{1000}, [&] { order.push_back('E'); });
  sim.run();
  CHECK(order == std::vector<char>{'C', 'A', 'E', 'D'});
}
