#include "cli/point_runner.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#ifdef RIDGE_WITH_MPI
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/string.hpp>
#endif

namespace ridge::cli {

namespace {

PointOutcome compute_one(const ComputeFn& compute, std::size_t index) {
  PointOutcome o;
  o.index = index;
  try {
    o.payload = compute(index);
    o.ok = true;
  } catch (const std::exception& e) {
    o.payload = e.what();
  } catch (...) {
    o.payload = "unknown exception";
  }
  return o;
}

}  // namespace

PointRunSummary run_points_threads(const std::vector<std::size_t>& todo, const ComputeFn& compute,
                                   const ResultFn& on_result, int threads) {
  PointRunSummary summary;
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads),
                                                   std::max<std::size_t>(1, todo.size())));
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<PointOutcome> done;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      for (std::size_t i; (i = next.fetch_add(1)) < todo.size();) {
        PointOutcome o = compute_one(compute, todo[i]);
        std::lock_guard<std::mutex> lock(mu);
        done.push_back(std::move(o));
        cv.notify_one();
      }
    });
  for (std::size_t received = 0; received < todo.size(); ++received) {
    PointOutcome o;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !done.empty(); });
      o = std::move(done.front());
      done.pop_front();
    }
    if (!o.ok) summary.failed.push_back(o.index);
    try {
      on_result(o);
    } catch (...) {
      // Stop handing out points, let the pool drain, and pass the error on.
      next.store(todo.size());
      for (auto& th : pool) th.join();
      throw;
    }
  }
  for (auto& th : pool) th.join();
  return summary;
}

bool started_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

#ifdef RIDGE_WITH_MPI

bool mpi_built() {
  return true;
}

namespace {
enum Tag : int { kReady = 1, kResult = 2, kWork = 3, kHeartbeat = 4 };
using Clock = std::chrono::steady_clock;
}  // namespace

struct MpiSession::Impl {
  // Funneled: only the main thread calls MPI; points run on helper threads.
  boost::mpi::environment env{boost::mpi::threading::funneled, /*abort_on_exception=*/false};
  boost::mpi::communicator world;
};

MpiSession::MpiSession() : impl_(std::make_unique<Impl>()) {}

MpiSession::~MpiSession() {
  if (lost_) {
    // MPI_Finalize would wait for the lost rank forever, and a rank's own non-zero exit is not
    // always mpirun's: MPI_Abort ends every rank and makes mpirun exit with this code. The
    // caller has written everything by now.
    std::fflush(nullptr);
    impl_->env.abort(3);
  }
}

int MpiSession::rank() const {
  return impl_->world.rank();
}
int MpiSession::size() const {
  return impl_->world.size();
}

bool MpiSession::broadcast(bool value) {
  boost::mpi::broadcast(impl_->world, value, 0);
  return value;
}

PointRunSummary MpiSession::run(const std::vector<std::size_t>& todo, const ComputeFn& compute,
                                const ResultFn& on_result, double rank_timeout_s) {
  auto& world = impl_->world;
  PointRunSummary summary;
  // Four heartbeats per timeout, at most one a second.
  const auto heartbeat = std::chrono::milliseconds(
      static_cast<long long>(std::min(1000.0, rank_timeout_s * 1000 / 4)));
  if (world.rank() != 0) {
    world.send(0, kReady);
    for (;;) {
      long long index = -1;
      world.recv(0, kWork, index);
      if (index < 0) break;
      auto fut = std::async(std::launch::async,
                            [&] { return compute_one(compute, static_cast<std::size_t>(index)); });
      while (fut.wait_for(heartbeat) != std::future_status::ready) world.send(0, kHeartbeat);
      const PointOutcome o = fut.get();
      world.send(0, kResult, std::string(o.ok ? "1" : "0") + o.payload);
    }
    return summary;
  }
  const int workers = world.size() - 1;
  std::size_t next = 0;
  std::map<int, std::size_t> busy;  // worker -> point
  std::map<int, Clock::time_point> heard;
  std::set<int> finished, dead;
  const auto start = Clock::now();
  for (int r = 1; r <= workers; ++r) heard[r] = start;
  auto hand_out = [&](int r) {
    long long index = -1;
    if (next < todo.size()) {
      index = static_cast<long long>(todo[next++]);
      busy[r] = static_cast<std::size_t>(index);
    } else {
      finished.insert(r);
    }
    world.send(r, kWork, index);
  };
  const auto timeout = std::chrono::duration<double>(rank_timeout_s);
  while (static_cast<int>(finished.size() + dead.size()) < workers) {
    if (auto st = world.iprobe(boost::mpi::any_source, boost::mpi::any_tag)) {
      const int r = st->source();
      if (dead.count(r)) {  // late word from a rank given up on: drop it
        if (st->tag() == kResult) {
          std::string s;
          world.recv(r, kResult, s);
        } else {
          world.recv(r, st->tag());
        }
        continue;
      }
      heard[r] = Clock::now();
      if (st->tag() == kReady) {
        world.recv(r, kReady);
        hand_out(r);
      } else if (st->tag() == kHeartbeat) {
        world.recv(r, kHeartbeat);
      } else if (st->tag() == kResult) {
        std::string s;
        world.recv(r, kResult, s);
        PointOutcome o;
        o.index = busy.at(r);
        busy.erase(r);
        o.ok = !s.empty() && s[0] == '1';
        o.payload = s.empty() ? "" : s.substr(1);
        if (!o.ok) summary.failed.push_back(o.index);
        on_result(o);
        hand_out(r);
      }
      continue;
    }
    const auto now = Clock::now();
    for (int r = 1; r <= workers; ++r) {
      if (finished.count(r) || dead.count(r) || now - heard[r] < timeout) continue;
      dead.insert(r);
      ++summary.lost_ranks;
      lost_ = true;
      if (auto it = busy.find(r); it != busy.end()) {
        summary.lost.push_back(it->second);
        busy.erase(it);
      }
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Points never handed out because every worker was lost.
  for (; next < todo.size(); ++next) summary.lost.push_back(todo[next]);
  return summary;
}

#else

bool mpi_built() {
  return false;
}
struct MpiSession::Impl {};
MpiSession::MpiSession() {
  throw std::invalid_argument("this ridge was built without MPI (cmake -DRIDGE_MPI=ON)");
}
MpiSession::~MpiSession() = default;
int MpiSession::rank() const {
  return 0;
}
int MpiSession::size() const {
  return 1;
}
bool MpiSession::broadcast(bool value) {
  return value;
}
PointRunSummary MpiSession::run(const std::vector<std::size_t>&, const ComputeFn&, const ResultFn&,
                                double) {
  return {};
}

#endif

}  // namespace ridge::cli
