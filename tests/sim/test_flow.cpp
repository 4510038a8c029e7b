// Analytic tests of FlowNetwork: every expected time is derived by hand in the comment above it.
// Units: GB = 1e9 bytes, GB/s = 1e9 bytes/s; 1 s = 1e12 ps.
#include <catch2/catch.hpp>

#include <vector>

#include "sim/flow.hpp"

using ridge::sim::FlowId;
using ridge::sim::FlowNetwork;
using ridge::sim::LinkId;
using ridge::sim::Simulator;
using ridge::sim::Time;

namespace {
constexpr double kGB = 1e9;
constexpr double kMB = 1e6;
constexpr int64_t kPsPerS = 1'000'000'000'000;
}  // namespace

TEST_CASE("Two flows on one link each get half", "[analytic][flow]") {
  // 10 GB/s shared by two 1 GB flows: 5 GB/s each, both finish at 1/5 s = 0.2 s.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 10 * kGB, Time{});
  Time ta{}, tb{};
  const FlowId a = net.start_flow({l}, 1 * kGB, [&] { ta = sim.now(); });
  net.start_flow({l}, 1 * kGB, [&] { tb = sim.now(); });
  sim.run_until(Time::from_ns(1));
  CHECK(net.flow_rate(a) == Approx(5 * kGB));
  CHECK(net.link_load(l) == Approx(10 * kGB));
  sim.run();
  CHECK(ta.ps == kPsPerS / 5);
  CHECK(tb.ps == kPsPerS / 5);
  const auto st = net.link_stats(l);
  CHECK(st.bytes == Approx(2 * kGB));
  CHECK(st.busy.ps == kPsPerS / 5);
  CHECK(st.mean_rate == Approx(10 * kGB));
  CHECK(st.flows_completed == 2);
}

TEST_CASE("A flow over two links is limited by the slower", "[analytic][flow]") {
  // 1 GB over links of 10 and 4 GB/s: 4 GB/s, so 1/4 s.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId fast = net.add_link("fast", 10 * kGB, Time{});
  const LinkId slow = net.add_link("slow", 4 * kGB, Time{});
  Time t{};
  net.start_flow({fast, slow}, 1 * kGB, [&] { t = sim.now(); });
  sim.run();
  CHECK(t.ps == kPsPerS / 4);
  CHECK(net.link_stats(fast).bytes == Approx(1 * kGB));
  CHECK(net.link_stats(fast).utilisation == Approx(0.4));  // 4 of 10 GB/s over the whole run
}

TEST_CASE("Staggered arrivals and departures", "[analytic][flow]") {
  // Link 10 GB/s. A: 200 MB at t=0; B: 50 MB at t=10 ms.
  // 0..10 ms: A alone at 10 GB/s moves 100 MB; 100 MB left.
  // From 10 ms both get 5 GB/s: B needs 50 MB / 5 GB/s = 10 ms, so B ends at 20 ms; by then A
  // moved 50 MB more, 50 MB left, alone again at 10 GB/s: 5 ms, so A ends at 25 ms.
  // Check: 250 MB / 10 GB/s = 25 ms, the link never idles.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 10 * kGB, Time{});
  Time ta{}, tb{};
  net.start_flow({l}, 200 * kMB, [&] { ta = sim.now(); });
  sim.schedule_at(Time::from_ms(10),
                  [&] { net.start_flow({l}, 50 * kMB, [&] { tb = sim.now(); }); });
  sim.run();
  CHECK(tb == Time::from_ms(20));
  CHECK(ta == Time::from_ms(25));

  // The brief's variant: A 100 MB at 0, B 50 MB at 10 ms. A alone moves exactly 100 MB by
  // 10 ms, so A ends at 10 ms as B arrives; B is then alone: 50 MB / 10 GB/s = 5 ms, ends 15 ms.
  Simulator sim2;
  FlowNetwork net2(sim2);
  const LinkId l2 = net2.add_link("l", 10 * kGB, Time{});
  net2.start_flow({l2}, 100 * kMB, [&] { ta = sim2.now(); });
  sim2.schedule_at(Time::from_ms(10),
                   [&] { net2.start_flow({l2}, 50 * kMB, [&] { tb = sim2.now(); }); });
  sim2.run();
  CHECK(ta == Time::from_ms(10));
  CHECK(tb == Time::from_ms(15));
}

TEST_CASE("A capped flow gets its cap and the other gets the rest", "[analytic][flow]") {
  // Link 10 GB/s. A: 1 GB capped at 2 GB/s; B: 8 GB uncapped. Max-min with the cap: A = 2,
  // B = 8 GB/s. A ends at 1/2 = 0.5 s; B has moved 4 GB by then, then has 10 GB/s for the other
  // 4 GB: 0.4 s, so B ends at 0.9 s.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 10 * kGB, Time{});
  Time ta{}, tb{};
  const FlowId a = net.start_flow(
      {l}, 1 * kGB, [&] { ta = sim.now(); }, 2 * kGB);
  const FlowId b = net.start_flow({l}, 8 * kGB, [&] { tb = sim.now(); });
  sim.run_until(Time::from_us(1));
  CHECK(net.flow_rate(a) == Approx(2 * kGB));
  CHECK(net.flow_rate(b) == Approx(8 * kGB));
  sim.run();
  CHECK(ta.ps == kPsPerS / 2);
  CHECK(tb.ps == kPsPerS * 9 / 10);
}

TEST_CASE("Max-min fair shares across two links", "[analytic][flow]") {
  // L1 = 1 GB/s carries a and b; L2 = 2 GB/s carries b and c. Fair shares: L1 0.5, L2 1.0, so
  // L1 is the first bottleneck: a = b = 0.5 GB/s; c takes what b leaves on L2: 1.5 GB/s
  // (Bertsekas & Gallager's progressive-filling example shape).
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l1 = net.add_link("L1", 1 * kGB, Time{});
  const LinkId l2 = net.add_link("L2", 2 * kGB, Time{});
  const FlowId a = net.start_flow({l1}, 1 * kGB, [] {});
  const FlowId b = net.start_flow({l1, l2}, 1 * kGB, [] {});
  const FlowId c = net.start_flow({l2}, 1 * kGB, [] {});
  sim.run_until(Time::from_ns(1));
  CHECK(net.flow_rate(a) == Approx(0.5 * kGB));
  CHECK(net.flow_rate(b) == Approx(0.5 * kGB));
  CHECK(net.flow_rate(c) == Approx(1.5 * kGB));
  CHECK(net.link_load(l2) == Approx(2 * kGB));
}

TEST_CASE("Max-min fairness is not monotone in capacity", "[analytic][flow]") {
  // Why the monotonicity property test uses single-bottleneck networks. a crosses L1 and L2,
  // b only L2; L2 = 10 GB/s; b carries 9 GB, a 100 GB.
  // L1 = 1 GB/s: a is held to 1 by L1, b gets 9 GB/s: b ends at 9/9 = 1 s.
  // L1 = 10 GB/s: L2 is the bottleneck, 5 GB/s each: b ends at 9/5 = 1.8 s, later.
  for (const auto& [l1_cap, want] :
       std::vector<std::pair<double, int64_t>>{{1 * kGB, kPsPerS}, {10 * kGB, kPsPerS * 18 / 10}}) {
    Simulator sim;
    FlowNetwork net(sim);
    const LinkId l1 = net.add_link("L1", l1_cap, Time{});
    const LinkId l2 = net.add_link("L2", 10 * kGB, Time{});
    Time tb{};
    net.start_flow({l1, l2}, 100 * kGB, [] {});
    net.start_flow({l2}, 9 * kGB, [&] { tb = sim.now(); });
    sim.run();
    CHECK(tb.ps == want);
  }
}

TEST_CASE("Link latency is paid before the data moves", "[analytic][flow]") {
  // A crosses l1 (1 us) and l2 (2 us): 1 MB at 10 GB/s takes 100 us after 3 us of latency, so
  // A ends at 103 us. B (10 KB over l1 only) arrives at 1 us and needs 10e3 / 10e9 s = 1 us,
  // so B ends at 2 us, before A arrives and with the link to itself.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l1 = net.add_link("l1", 10 * kGB, Time::from_us(1));
  const LinkId l2 = net.add_link("l2", 10 * kGB, Time::from_us(2));
  Time ta{}, tb{};
  const FlowId a = net.start_flow({l1, l2}, 1 * kMB, [&] { ta = sim.now(); });
  net.start_flow({l1}, 10e3, [&] { tb = sim.now(); });
  sim.run_until(Time::from_us(2.5));
  CHECK(net.flow_rate(a) == 0.0);  // still in its latency
  CHECK(net.is_active(a));
  sim.run();
  CHECK(tb == Time::from_us(2));
  CHECK(ta == Time::from_us(103));
}

TEST_CASE("Cancelling a flow frees its share", "[analytic][flow]") {
  // Link 10 GB/s, A and B 1 GB each from t=0 at 5 GB/s. B is cancelled at 0.1 s, when A has
  // moved 0.5 GB; A's other 0.5 GB at 10 GB/s take 0.05 s, so A ends at 0.15 s. B's callback
  // never runs. The link carried 0.5 GB for B and 1 GB for A.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 10 * kGB, Time{});
  Time ta{};
  bool b_done = false;
  net.start_flow({l}, 1 * kGB, [&] { ta = sim.now(); });
  const FlowId b = net.start_flow({l}, 1 * kGB, [&] { b_done = true; });
  sim.schedule_at(Time::from_ms(100), [&] {
    CHECK(net.flow_remaining_bytes(b) == Approx(0.5 * kGB));
    CHECK(net.cancel_flow(b));
    CHECK_FALSE(net.cancel_flow(b));
  });
  sim.run();
  CHECK_FALSE(b_done);
  CHECK(ta.ps == kPsPerS * 15 / 100);
  CHECK(net.link_stats(l).bytes == Approx(1.5 * kGB));
  CHECK(net.active_flows() == 0);
}

TEST_CASE("Completion times are whole picoseconds rounded up", "[analytic][flow]") {
  // 1 byte at 3 GB/s takes 333.33.. ps: it completes at 334 ps, never earlier.
  // Two flows ending at the same picosecond both complete, in start order.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 3 * kGB, Time{});
  const LinkId m = net.add_link("m", 1 * kGB, Time{});
  Time t{};
  std::vector<int> order;
  net.start_flow({l}, 1.0, [&] { t = sim.now(); });
  net.start_flow({m}, 1e3, [&] { order.push_back(1); });  // 1 KB each at 0.5 GB/s: 2 us
  net.start_flow({m}, 1e3, [&] { order.push_back(2); });
  sim.run();
  CHECK(t.ps == 334);
  CHECK(order == std::vector<int>{1, 2});
  CHECK(sim.now() == Time::from_us(2));
}

TEST_CASE("Empty paths and zero-byte flows", "[analytic][flow]") {
  // No links: a capped flow moves at its cap (1 MB at 1 GB/s = 1 ms); an uncapped one and a
  // zero-byte one complete at once (after latency, here none).
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 1 * kGB, Time::from_ns(5));
  Time t1{Time::max()}, t2{Time::max()}, t3{Time::max()};
  net.start_flow(
      std::span<const LinkId>{}, 1 * kMB, [&] { t1 = sim.now(); }, 1 * kGB);
  net.start_flow(std::span<const LinkId>{}, 1 * kMB, [&] { t2 = sim.now(); });
  net.start_flow({l}, 0.0, [&] { t3 = sim.now(); });
  sim.run();
  CHECK(t1 == Time::from_ms(1));
  CHECK(t2 == Time{});
  CHECK(t3 == Time::from_ns(5));
}

TEST_CASE("Raising a link's capacity mid-flow re-shares it", "[analytic][flow]") {
  // 1 GB on a 1 GB/s link; at 0.5 s (0.5 GB left) the link becomes 5 GB/s: 0.1 s more, 0.6 s.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 1 * kGB, Time{});
  Time t{};
  net.start_flow({l}, 1 * kGB, [&] { t = sim.now(); });
  sim.schedule_at(Time::from_ms(500), [&] { net.set_link_capacity(l, 5 * kGB); });
  sim.run();
  CHECK(t == Time::from_ms(600));
}

TEST_CASE("Invalid flows and links are refused", "[unit][flow]") {
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 1 * kGB, Time{});
  CHECK_THROWS(net.add_link("bad", -1, Time{}));
  CHECK_THROWS(net.start_flow({l, l}, 1, [] {}));
  CHECK_THROWS(net.start_flow({LinkId{7}}, 1, [] {}));
  CHECK_THROWS(net.start_flow({l}, -1, [] {}));
  CHECK_FALSE(net.cancel_flow(FlowId{}));
}

TEST_CASE("A flow's bottleneck moves when another flow leaves", "[analytic][flow]") {
  // L1 = 2 GB/s carries a and c; L2 = 3 GB/s carries a and b. Shares: L1 2/2 = 1, L2 3/2 = 1.5,
  // so L1 saturates first: a = c = 1 GB/s, b takes the rest of L2: 2 GB/s.
  // c (1 GB) ends at 1 s. Then L1 offers a 2 but L2 only 1.5 each: a's bottleneck moves to L2,
  // a = b = 1.5 GB/s. b (3.5 GB) moved 2 GB by 1 s; 1.5 GB more at 1.5 GB/s: ends at 2 s.
  // a (4 GB) moved 1 GB by 1 s and 1.5 GB by 2 s; alone, min(2, 3) = 2 GB/s for the last
  // 1.5 GB: 0.75 s, so a ends at 2.75 s.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l1 = net.add_link("L1", 2 * kGB, Time{});
  const LinkId l2 = net.add_link("L2", 3 * kGB, Time{});
  Time ta{}, tb{}, tc{};
  const FlowId a = net.start_flow({l1, l2}, 4 * kGB, [&] { ta = sim.now(); });
  const FlowId b = net.start_flow({l2}, 3.5 * kGB, [&] { tb = sim.now(); });
  net.start_flow({l1}, 1 * kGB, [&] { tc = sim.now(); });
  sim.run_until(Time::from_ms(500));
  CHECK(net.flow_rate(a) == Approx(1 * kGB));
  CHECK(net.flow_rate(b) == Approx(2 * kGB));
  sim.run_until(Time::from_ms(1500));
  CHECK(net.flow_rate(a) == Approx(1.5 * kGB));
  CHECK(net.flow_rate(b) == Approx(1.5 * kGB));
  CHECK(net.flow_remaining_bytes(a) == Approx(2.25 * kGB));
  CHECK(net.flow_finish_time(b) == Time::from_ms(2000));
  sim.run();
  CHECK(tc == Time::from_ms(1000));
  CHECK(tb == Time::from_ms(2000));
  CHECK(ta == Time::from_ms(2750));
  // Each link carried every byte of the flows crossing it.
  CHECK(net.link_stats(l1).bytes == Approx(5 * kGB));
  CHECK(net.link_stats(l2).bytes == Approx(7.5 * kGB));
  CHECK(net.link_stats(l1).flows_completed == 2);
}

TEST_CASE("Simultaneous arrivals, a departure and zero-byte flows at one instant",
          "[analytic][flow]") {
  // Link 10 GB/s. A (100 MB) alone from 0 ends at 10 ms, the instant B (50 MB), C (50 MB) and
  // a zero-byte D start. D completes at 10 ms; B and C share 5 GB/s each: 10 ms, so both end at
  // 20 ms, in start order. One batched pass places B, C and D.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 10 * kGB, Time{});
  std::vector<std::pair<char, Time>> done;
  net.start_flow({l}, 100 * kMB, [&] { done.emplace_back('A', sim.now()); });
  sim.schedule_at(Time::from_ms(10), [&] {
    net.start_flow({l}, 50 * kMB, [&] { done.emplace_back('B', sim.now()); });
    net.start_flow({l}, 50 * kMB, [&] { done.emplace_back('C', sim.now()); });
    net.start_flow({l}, 0.0, [&] { done.emplace_back('D', sim.now()); });
  });
  sim.run();
  const std::vector<std::pair<char, Time>> want{{'A', Time::from_ms(10)},
                                                {'D', Time::from_ms(10)},
                                                {'B', Time::from_ms(20)},
                                                {'C', Time::from_ms(20)}};
  CHECK(done == want);
  CHECK(net.link_stats(l).bytes == Approx(200 * kMB));
}

TEST_CASE("A flow cancelled before its first filling places no other flow", "[analytic][flow]") {
  // Links x (1 GB/s) and y (10 GB/s). C (1 GB) crosses x; A crosses x and y and is cancelled at
  // the instant it starts; B (1 GB), started next over y alone, takes A's flow slot. Max-min: C
  // alone on x gets 1 GB/s and ends at 1 s; B alone on y gets 10 GB/s and ends at 0.1 s. (A new
  // flow waits, listed on its links, for the filling to place it in the group of the first of
  // them to saturate: A's listing on x must not place B, which does not cross x, in x's group at
  // x's freeze; that would give B x's level, 1 GB/s, and end it at 1 s.)
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId x = net.add_link("x", 1 * kGB, Time{});
  const LinkId y = net.add_link("y", 10 * kGB, Time{});
  Time tb{}, tc{};
  const FlowId c = net.start_flow({x}, 1 * kGB, [&] { tc = sim.now(); });
  const FlowId a = net.start_flow({x, y}, 1 * kGB, [] {});
  CHECK(net.cancel_flow(a));
  const FlowId b = net.start_flow({y}, 1 * kGB, [&] { tb = sim.now(); });
  CHECK(static_cast<uint32_t>(b.value) == static_cast<uint32_t>(a.value));  // the same slot
  sim.run_until(Time::from_ns(1));
  CHECK(net.flow_rate(c) == Approx(1 * kGB));
  CHECK(net.flow_rate(b) == Approx(10 * kGB));
  sim.run();
  CHECK(tb.ps == kPsPerS / 10);
  CHECK(tc.ps == kPsPerS);
}

TEST_CASE("A capped flow joins a link's group when the link's share falls below its cap",
          "[analytic][flow]") {
  // Link 6 GB/s. A (3 GB) capped at 2 GB/s, alone: 2 GB/s. At 0.5 s (A has 2 GB left) B and C
  // arrive uncapped: the fair share 6/3 = 2 GB/s equals A's cap, so all get 2 GB/s. At 1 s
  // (A 1 GB left) D arrives: share 1.5 < 2, so A is held by the link: 1.5 GB/s each. D is
  // 1.5 GB; B and C are 10 GB. A ends at 1 + 1/1.5 = 1.6667 s (1,666,666,666,667 ps rounded up).
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId l = net.add_link("l", 6 * kGB, Time{});
  Time ta{};
  const FlowId a = net.start_flow(
      {l}, 3 * kGB, [&] { ta = sim.now(); }, 2 * kGB);
  sim.schedule_at(Time::from_ms(500), [&] {
    net.start_flow({l}, 10 * kGB, [] {});
    net.start_flow({l}, 10 * kGB, [] {});
  });
  sim.schedule_at(Time::from_ms(1000), [&] { net.start_flow({l}, 1.5 * kGB, [] {}); });
  sim.run_until(Time::from_ms(750));
  CHECK(net.flow_rate(a) == Approx(2 * kGB));
  sim.run_until(Time::from_ms(1200));
  CHECK(net.flow_rate(a) == Approx(1.5 * kGB));
  sim.run();
  CHECK(ta.ps == 1'666'666'666'667);
}

TEST_CASE("A change is re-shared on its own island only", "[analytic][flow]") {
  // Links a (10 GB/s) and b, c (20 GB/s each) carry no common flow: two islands, {a} and {b, c}.
  // Uncapped flows always go through a filling pass, which covers the island of the change:
  // 1 link for a flow on a, 2 for a flow on b-c. A flow over a and b joins the islands, and
  // every later pass covers all 3 links.
  // Rates: x on a alone 10 GB/s; y on b-c alone 20 GB/s. When z joins a-b: a has x, z (share
  // 5), b has y, z (share 10): a saturates first, x = z = 5 GB/s; y takes b's rest, 15 GB/s.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId a = net.add_link("a", 10 * kGB);
  const LinkId b = net.add_link("b", 20 * kGB);
  const LinkId c = net.add_link("c", 20 * kGB);
  uint64_t passes = net.recomputes();
  uint64_t links = net.filled_links();
  const auto pass_covered = [&] {
    sim.run_until(sim.now() + Time::from_ns(1));
    REQUIRE(net.recomputes() == passes + 1);
    const uint64_t covered = net.filled_links() - links;
    passes = net.recomputes();
    links = net.filled_links();
    return covered;
  };
  const FlowId x = net.start_flow({a}, 1 * kGB, [] {});
  CHECK(pass_covered() == 1);
  const FlowId y = net.start_flow({b, c}, 1 * kGB, [] {});
  CHECK(pass_covered() == 2);
  CHECK(net.flow_rate(x) == Approx(10 * kGB));
  CHECK(net.flow_rate(y) == Approx(20 * kGB));
  // A second flow on a halves x and leaves y (and b, c) alone.
  const FlowId x2 = net.start_flow({a}, 1 * kGB, [] {});
  CHECK(pass_covered() == 1);
  CHECK(net.flow_rate(x) == Approx(5 * kGB));
  CHECK(net.flow_rate(y) == Approx(20 * kGB));
  REQUIRE(net.cancel_flow(x2));
  CHECK(pass_covered() == 1);
  const FlowId z = net.start_flow({a, b}, 1 * kGB, [] {});
  CHECK(pass_covered() == 3);
  CHECK(net.flow_rate(x) == Approx(5 * kGB));
  CHECK(net.flow_rate(z) == Approx(5 * kGB));
  CHECK(net.flow_rate(y) == Approx(15 * kGB));
  // z gone, the islands stay joined (they never split): the pass covers all 3 links.
  REQUIRE(net.cancel_flow(z));
  CHECK(pass_covered() == 3);
  CHECK(net.flow_rate(x) == Approx(10 * kGB));
  CHECK(net.flow_rate(y) == Approx(20 * kGB));
}

TEST_CASE("A flow slot reused on another island leaves the first island's caps in order",
          "[analytic][flow]") {
  // Islands {a} and {b}, 10 GB/s each. On a at t = 0: u (uncapped, 1e3 bytes), then p (cap
  // 1 GB/s), x (cap 3), y (cap 5), filled together (u's arrival leaves a pass pending): p = 1,
  // x = 3, and u, y share the 6 GB/s left: 3 each (y's cap 5 does not bind). u is done after
  // 1e3 / 3e9 s = 333,333.3 ps, rounded up to 333,334 ps; then p = 1, x = 3, y = 5 (its cap):
  // a carries 9 GB/s, below capacity. At 1 us p is cancelled (a not saturated: no pass), and
  // w (cap 4) starts on b in p's flow slot, then v (uncapped): b gives w 4 and v 6. At 2 us z
  // (uncapped) starts on a: x = 3 (its cap), and y, z share the 7 GB/s left, 3.5 each. Had a's
  // pass kept p's place in a's list of capped flows, sorted by cap, that place would now read w
  // (cap 4) ahead of x (cap 3), and x would be frozen with y and z at 10/3 GB/s, over its cap.
  Simulator sim;
  FlowNetwork net(sim);
  const LinkId a = net.add_link("a", 10 * kGB);
  const LinkId b = net.add_link("b", 10 * kGB);
  Time tu{};
  net.start_flow({a}, 1e3, [&] { tu = sim.now(); });
  const FlowId p = net.start_flow(
      {a}, 1 * kGB, [] {}, 1 * kGB);
  const FlowId x = net.start_flow(
      {a}, 1 * kGB, [] {}, 3 * kGB);
  const FlowId y = net.start_flow(
      {a}, 1 * kGB, [] {}, 5 * kGB);
  sim.run_until(Time::from_ns(1));
  CHECK(net.flow_rate(p) == Approx(1 * kGB));
  CHECK(net.flow_rate(y) == Approx(3 * kGB));
  sim.run_until(Time::from_us(1));
  CHECK(tu.ps == 333'334);
  CHECK(net.flow_rate(y) == Approx(5 * kGB));
  REQUIRE(net.cancel_flow(p));
  const FlowId w = net.start_flow(
      {b}, 1 * kGB, [] {}, 4 * kGB);
  REQUIRE(static_cast<uint32_t>(w.value) == static_cast<uint32_t>(p.value));  // p's slot
  const FlowId v = net.start_flow({b}, 1 * kGB, [] {});
  sim.run_until(Time::from_us(2));
  CHECK(net.flow_rate(w) == Approx(4 * kGB));
  CHECK(net.flow_rate(v) == Approx(6 * kGB));
  const FlowId z = net.start_flow({a}, 1 * kGB, [] {});
  sim.run_until(Time::from_us(2) + Time::from_ns(1));
  CHECK(net.flow_rate(x) == Approx(3 * kGB));
  CHECK(net.flow_rate(y) == Approx(3.5 * kGB));
  CHECK(net.flow_rate(z) == Approx(3.5 * kGB));
  CHECK(net.flow_rate(w) == Approx(4 * kGB));
}

TEST_CASE("a path may not cross a link twice (short and long paths)", "[unit]") {
  Simulator sim;
  FlowNetwork net(sim);
  std::vector<LinkId> links;
  for (int i = 0; i < 50; ++i) links.push_back(net.add_link("l" + std::to_string(i), 1e9));
  // Short path (pairwise check) and long path (marks) with a repeat.
  CHECK_THROWS_AS(net.start_flow({links[0], links[1], links[0]}, 1e6, [] {}),
                  std::invalid_argument);
  std::vector<LinkId> long_path(links.begin(), links.begin() + 40);
  long_path.push_back(links[17]);
  CHECK_THROWS_AS(net.start_flow(std::span<const LinkId>(long_path), 1e6, [] {}),
                  std::invalid_argument);
  // The same long path without the repeat, twice (a stale mark must not look like a repeat):
  // 40 links of 1 GB/s, 1e6 bytes each, sharing every link: 2 ms for both.
  long_path.pop_back();
  int done = 0;
  net.start_flow(std::span<const LinkId>(long_path), 1e6, [&] { ++done; });
  net.start_flow(std::span<const LinkId>(long_path), 1e6, [&] { ++done; });
  sim.run();
  CHECK(done == 2);
  CHECK(sim.now() == Time::from_ms(2));
}
