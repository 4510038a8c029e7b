// Unit tests of the Tracer: nesting, track splitting, number formats, JSON structure.
#include <catch2/catch.hpp>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>
#include <vector>

#include "sim/flow.hpp"
#include "sim/resource.hpp"
#include "sim/trace.hpp"

using ridge::sim::FlowNetwork;
using ridge::sim::LinkId;
using ridge::sim::Resource;
using ridge::sim::Simulator;
using ridge::sim::Time;
using ridge::sim::Tracer;

namespace {

// Checks the structure Perfetto needs and returns thread names by (pid, tid).
std::map<std::pair<int, int>, std::string> check_structure(const nlohmann::json& doc) {
  REQUIRE(doc.is_object());
  REQUIRE(doc.at("traceEvents").is_array());
  CHECK(doc.at("displayTimeUnit") == "ns");
  CHECK(doc.at("metadata").is_object());
  std::set<int> named_pids;
  std::map<std::pair<int, int>, std::string> threads;
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> slices;
  for (const auto& ev : doc.at("traceEvents")) {
    const std::string ph = ev.at("ph");
    REQUIRE(ev.at("pid").is_number_integer());
    if (ph == "M") {
      if (ev.at("name") == "process_name") named_pids.insert(ev.at("pid").get<int>());
      if (ev.at("name") == "thread_name") {
        threads[{ev.at("pid"), ev.at("tid")}] = ev.at("args").at("name");
      }
    } else if (ph == "X") {
      REQUIRE(ev.at("tid").is_number_integer());
      REQUIRE(ev.at("ts").is_number());
      REQUIRE(ev.at("dur").is_number());
      REQUIRE(ev.at("dur").get<double>() >= 0);
      slices[{ev.at("pid"), ev.at("tid")}].emplace_back(ev.at("ts"), ev.at("dur"));
    } else {
      REQUIRE(ph == "C");
      REQUIRE(ev.at("args").is_object());
    }
  }
  for (auto& [key, list] : slices) {
    CHECK(named_pids.count(key.first) == 1);
    CHECK(threads.count(key) == 1);
    // Strict nesting per (pid, tid): sorted by (start, longer first), a stack of open ends.
    std::sort(list.begin(), list.end(), [](auto a, auto b) {
      return a.first < b.first || (a.first == b.first && a.second > b.second);
    });
    std::vector<double> open;
    for (const auto& [ts, dur] : list) {
      const double end = ts + dur;
      while (!open.empty() && open.back() <= ts + 1e-9) open.pop_back();
      REQUIRE((open.empty() || end <= open.back() + 1e-9));
      open.push_back(end);
    }
  }
  return threads;
}

}  // namespace

TEST_CASE("Overlapping slices on one track are split onto extra tracks", "[unit][trace]") {
  Tracer t;
  t.slice("proc", "track", "outer", Time::from_ns(0), Time::from_ns(100));
  t.slice("proc", "track", "inner", Time::from_ns(10), Time::from_ns(20));    // nests in outer
  t.slice("proc", "track", "cross", Time::from_ns(50), Time::from_ns(150));   // overlaps outer
  t.slice("proc", "track", "after", Time::from_ns(100), Time::from_ns(120));  // fits after outer
  t.slice("proc", "other", "x", Time::from_ns(0), Time::from_ns(1));
  const auto doc = nlohmann::json::parse(t.to_json());
  const auto threads = check_structure(doc);
  std::map<std::string, std::string> track_of;  // slice name -> thread name
  for (const auto& ev : doc.at("traceEvents")) {
    if (ev.at("ph") == "X") track_of[ev.at("name")] = threads.at({ev.at("pid"), ev.at("tid")});
  }
  CHECK(track_of.at("outer") == "track");
  CHECK(track_of.at("inner") == "track");
  CHECK(track_of.at("after") == "track");
  CHECK(track_of.at("cross") == "track #2");
  CHECK(track_of.at("x") == "other");
}

TEST_CASE("Times are microseconds with exactly three decimals", "[unit][trace]") {
  CHECK(Tracer::format_us(Time{1'234'567}) == "1.235");  // 1234.567 ns rounds to 1235 ns
  CHECK(Tracer::format_us(Time{499}) == "0.000");
  CHECK(Tracer::format_us(Time{500}) == "0.001");
  CHECK(Tracer::format_us(Time::from_seconds(2)) == "2000000.000");
  CHECK(Tracer::format_us(Time{-1'500}) == "-0.001");  // -1.5 ns rounds half up to -1 ns
  CHECK(Tracer::json_number(0.5) == "0.5");
  CHECK(Tracer::json_number(-0.0) == "0");
  CHECK(Tracer::json_escape("a\"b\\c\n") == "a\\\"b\\\\c\\n");
  Tracer t;
  t.slice("p", "t", "s", Time{1'234'567}, Time{2'000'000}, R"({"k":1})");
  const std::string json = t.to_json();
  CHECK(json.find(R"("ts":1.235,"dur":0.765)") != std::string::npos);
  CHECK(nlohmann::json::parse(json).at("traceEvents").size() == 5);  // 2 process + 2 thread M, 1 X
}

TEST_CASE("A traced run of resources and flows is well-formed JSON", "[unit][trace]") {
  Simulator sim;
  Tracer tracer;
  tracer.set_metadata("study", "unit \"test\"");
  sim.set_tracer(&tracer);
  Resource r(sim, "pool", 2);
  FlowNetwork net(sim);
  const LinkId l = net.add_link("link0", 1e9, Time::from_ns(10));
  for (int i = 0; i < 5; ++i) {
    r.acquire(1, [&] { sim.schedule_after(Time::from_ns(100), [&] { r.release(1); }); });
    net.start_flow(
        {l}, 1e3 * (i + 1), [] {}, 1e9, "src");  // same track name: must split
  }
  sim.schedule_at(Time::from_ns(50), [&] {
    tracer.slice("model", "stage", "work", Time::from_ns(0), sim.now(), R"({"n":3})");
  });
  sim.run();
  const std::string json = tracer.to_json();
  const auto doc = nlohmann::json::parse(json);
  check_structure(doc);
  CHECK(doc.at("metadata").at("study") == "unit \"test\"");
  int x = 0, c = 0, link_counters = 0;
  for (const auto& ev : doc.at("traceEvents")) {
    x += ev.at("ph") == "X";
    c += ev.at("ph") == "C";
    // The link's load, as a share of its capacity, under "<link name> utilisation".
    link_counters += ev.at("ph") == "C" && ev.at("name") == "link0 utilisation";
  }
  CHECK(link_counters > 0);
  // 5 flow slices; the pool is busy without a gap from 0 to 300 ns (waves of 2, 2, 1 jobs of
  // 100 ns), so one busy slice; one model slice.
  CHECK(x == 5 + 1 + 1);
  CHECK(c > 0);
  // Detaching the tracer records nothing more.
  sim.set_tracer(nullptr);
  const std::size_t before = tracer.slice_count();
  net.start_flow({l}, 1e3, [] {});
  sim.run();
  CHECK(tracer.slice_count() == before);
}
