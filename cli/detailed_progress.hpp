// The detailed-mode progress display (cli/detailed_progress.cpp), split from its clock and its
// stream so that a test can drive it with a fake clock: after 2 s without an answer, a line
// rewritten in place on a terminal (at most 5 times a second), plain lines every 5 s otherwise.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "workloads/progress.hpp"

namespace ridge::cli {

/// The text of one progress line, `since_start_s` seconds into the run.
std::string detailed_progress_line(const workloads::Progress& p, double since_start_s);

class DetailedProgressPrinter {
 public:
  using Clock = std::chrono::steady_clock;
  /// Writes to `out`; `tty` picks the in-place line (true) or plain lines (false).
  DetailedProgressPrinter(bool tty, std::FILE* out, Clock::time_point start)
      : tty_(tty), out_(out), start_(start), last_(start) {}
  /// One report of the workloads layer, at time `now`: shows a line when one is due.
  void report(const workloads::Progress& p, Clock::time_point now);
  /// Whether an in-place line is on the terminal (to be cleared at exit).
  bool line_shown() const { return line_shown_; }

 private:
  bool tty_;
  std::FILE* out_;
  Clock::time_point start_, last_;
  bool line_shown_ = false;
};

}  // namespace ridge::cli
