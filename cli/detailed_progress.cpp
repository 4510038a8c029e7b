// Shows the progress of long detailed-mode runs on stderr: after 2 s without an answer, a line
// rewritten in place on a terminal (at most 5 times a second), plain lines every 5 s otherwise
// (logs, CI). Short runs print nothing.
#include "cli/detailed_progress.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <cstdlib>
#include <optional>

namespace ridge::cli {

std::string detailed_progress_line(const workloads::Progress& p, double since_start_s) {
  return fmt::format(
      "ridge: {}: {:.3g} thread blocks simulated ({:.0f}% of the budget {:.0e}), {} op shapes, "
      "{:.0f} s",
      p.what, p.done, 100 * p.done / p.budget, p.budget, p.shapes, since_start_s);
}

void DetailedProgressPrinter::report(const workloads::Progress& p, Clock::time_point now) {
  const double since_start = std::chrono::duration<double>(now - start_).count();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  if (since_start < 2.0 || since_last < (tty_ ? 0.2 : 5.0)) return;
  last_ = now;
  const std::string line = detailed_progress_line(p, since_start);
  if (tty_) {
    std::fprintf(out_, "\r%s\033[K", line.c_str());
    line_shown_ = true;
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

namespace {
std::optional<DetailedProgressPrinter> g_printer;
}  // namespace

void install_progress_reporter() {
  g_printer.emplace(::isatty(STDERR_FILENO) != 0, stderr, DetailedProgressPrinter::Clock::now());
  workloads::set_progress_reporter([](const workloads::Progress& p) {
    g_printer->report(p, DetailedProgressPrinter::Clock::now());
  });
  // The in-place line is cleared when the program ends, before its answer or error is read.
  std::atexit([] {
    if (g_printer && g_printer->line_shown()) std::fprintf(stderr, "\r\033[K");
  });
}

}  // namespace ridge::cli
