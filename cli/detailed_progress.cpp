// Shows the progress of long detailed-mode runs on stderr: after 2 s without an answer, a line
// rewritten in place on a terminal (at most 5 times a second), plain lines every 5 s otherwise
// (logs, CI). Short runs print nothing.
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "workloads/progress.hpp"

namespace ridge::cli {

namespace {
bool g_line_shown = false;  // an in-place line is on the terminal
}  // namespace

void install_progress_reporter() {
  using Clock = std::chrono::steady_clock;
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const auto start = Clock::now();
  auto last = start;
  workloads::set_progress_reporter([=](const workloads::Progress& p) mutable {
    const auto now = Clock::now();
    const double since_start = std::chrono::duration<double>(now - start).count();
    const double since_last = std::chrono::duration<double>(now - last).count();
    if (since_start < 2.0 || since_last < (tty ? 0.2 : 5.0)) return;
    last = now;
    const std::string line = fmt::format(
        "ridge: {}: {:.3g} thread blocks simulated ({:.0f}% of the budget {:.0e}), {} "
        "op shapes, {:.0f} s",
        p.what, p.done, 100 * p.done / p.budget, p.budget, p.shapes, since_start);
    if (tty) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      g_line_shown = true;
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  });
  // The in-place line is cleared when the program ends, before its answer or error is read.
  std::atexit([] {
    if (g_line_shown) std::fprintf(stderr, "\r\033[K");
  });
}

}  // namespace ridge::cli
