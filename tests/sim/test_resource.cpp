// Tests of Resource (FIFO counted units with utilisation) and Join.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/resource.hpp"

using ridge::sim::Join;
using ridge::sim::Resource;
using ridge::sim::Simulator;
using ridge::sim::Time;

TEST_CASE("FIFO resource: n jobs of duration d on c units finish at ceil(n/c)*d",
          "[analytic][resource]") {
  // All n jobs arrive at t=0 wanting one unit for d. c run at once, so they go in waves of c;
  // the last wave ends at ceil(n/c)*d. Busy unit-time is n*d, so utilisation over the run is
  // n*d / (c * ceil(n/c)*d) = n / (c*ceil(n/c)).
  for (const auto& [n, c] : std::vector<std::pair<int, int>>{{10, 3}, {9, 3}, {1, 4}, {17, 1}}) {
    Simulator sim;
    Resource r(sim, "units", c);
    const Time d = Time::from_ns(250);
    int done = 0;
    Time last{};
    for (int i = 0; i < n; ++i) {
      r.acquire(1, [&] {
        sim.schedule_after(d, [&] {
          r.release(1);
          ++done;
          last = sim.now();
        });
      });
    }
    sim.run();
    const int waves = (n + c - 1) / c;
    CHECK(done == n);
    CHECK(last == d * waves);
    const auto st = r.stats();
    CHECK(st.utilisation == Approx(static_cast<double>(n) / (c * waves)));
    CHECK(st.unit_seconds == Approx(n * d.seconds()));
    CHECK(st.busy == d * waves);
    CHECK(st.grants == static_cast<uint64_t>(n));
    // Wave k (0-based) waits k*d: total wait is d*c*sum(k) over full waves plus the last one.
    Time wait{};
    for (int i = 0; i < n; ++i) wait += d * (i / c);
    CHECK(st.total_wait == wait);
  }
}

TEST_CASE("Resource grants strictly in FIFO order with head-of-line blocking", "[unit][resource]") {
  Simulator sim;
  Resource r(sim, "r", 4);
  std::vector<int> order;
  r.acquire(3, [&] { order.push_back(0); });  // granted at once: 1 unit left
  r.acquire(2, [&] { order.push_back(1); });  // waits
  r.acquire(1, [&] { order.push_back(2); });  // fits, but must wait behind the 2
  CHECK(order == std::vector<int>{0});
  CHECK(r.waiting() == 2);
  r.release(3);  // 4 free: grants 2 then 1
  CHECK(order == std::vector<int>{0, 1, 2});
  CHECK(r.in_use() == 3);
  CHECK_THROWS(r.acquire(5, [] {}));
  CHECK_THROWS(r.release(4));
  // A grant that releases at once does not recurse into itself.
  r.release(3);
  int chain = 0;
  for (int i = 0; i < 1000; ++i) {
    r.acquire(4, [&] {
      ++chain;
      r.release(4);
    });
  }
  CHECK(chain == 1000);
}

TEST_CASE("Join fires its callback exactly once, on the last arrival", "[unit][join]") {
  int fired = 0;
  Join j(3, [&] { ++fired; });
  j.arrive();
  j.add(1);
  j.arrive(2);
  CHECK(fired == 0);
  CHECK(j.remaining() == 1);
  j.arrive();
  CHECK(fired == 1);
  CHECK(j.done());
  CHECK_THROWS(j.arrive());
  int zero = 0;
  Join k(0, [&] { ++zero; });
  CHECK(zero == 1);
}
