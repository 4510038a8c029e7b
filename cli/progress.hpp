// Progress of a long run on stderr: on a terminal, one bar redrawn in place (done/total, rate,
// ETA) at most ten times a second; otherwise a plain line at every 10% or every 5 s, whichever
// comes first, so that a log stays short. Timing goes to stderr only, never into output files.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>

namespace ridge::cli {

class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  /// `total` points, of which `already` were done before this run (resumed), named `what`; on
  /// stderr, as a bar when it is a terminal, timed by the steady clock.
  Progress(std::size_t total, std::size_t already, std::string what);
  /// The same on `out`, as a bar when `tty`, timed by `now` (a test's fake clock).
  Progress(std::size_t total, std::size_t already, std::string what, bool tty, std::FILE* out,
           std::function<Clock::time_point()> now);
  /// One more point done.
  void tick();
  /// Ends the bar (a final line with the rate).
  void finish();
  /// Whether stderr is a terminal (the bar) or not (plain lines).
  bool terminal() const { return tty_; }

 private:
  std::size_t total_, already_, done_ = 0;
  std::string what_;
  bool tty_ = false, finished_ = false;
  std::FILE* out_;
  std::function<Clock::time_point()> now_;
  Clock::time_point start_, last_draw_;
  int last_decile_ = 0;
  std::string line() const;
};

}  // namespace ridge::cli
