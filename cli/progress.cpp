#include "cli/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace ridge::cli {

namespace {
std::string duration_text(double s) {
  if (s < 60) return fmt::format("{:.0f}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  return fmt::format("{}h{:02}m", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
}
}  // namespace

Progress::Progress(std::size_t total, std::size_t already, std::string what)
    : Progress(total, already, std::move(what), isatty(STDERR_FILENO) == 1, stderr, Clock::now) {}

Progress::Progress(std::size_t total, std::size_t already, std::string what, bool tty,
                   std::FILE* out, std::function<Clock::time_point()> now)
    : total_(total),
      already_(already),
      what_(std::move(what)),
      tty_(tty),
      out_(out),
      now_(std::move(now)) {
  start_ = last_draw_ = now_();
}

std::string Progress::line() const {
  const double elapsed = std::chrono::duration<double>(now_() - start_).count();
  const std::size_t left = total_ - already_;
  const double rate = elapsed > 0 ? static_cast<double>(done_) / elapsed : 0;
  const std::size_t all = already_ + done_;
  const double frac = total_ ? static_cast<double>(all) / static_cast<double>(total_) : 1;
  std::string eta = "--";
  if (rate > 0) eta = duration_text(static_cast<double>(left - done_) / rate);
  std::string bar;
  if (tty_) {
    const int width = 30, filled = static_cast<int>(frac * width);
    bar = "[" + std::string(static_cast<std::size_t>(filled), '#') +
          std::string(static_cast<std::size_t>(width - filled), '.') + "] ";
  }
  return fmt::format("{}{}{}/{} {} ({:.0f}%), {:.1f} {}/s, ETA {}", tty_ ? "" : "ridge: ", bar, all,
                     total_, what_, 100 * frac, rate, what_, eta);
}

void Progress::tick() {
  ++done_;
  const auto now = now_();
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100) && already_ + done_ < total_) return;
    last_draw_ = now;
    std::fprintf(out_, "\r%s\x1b[K", line().c_str());
    std::fflush(out_);
    return;
  }
  const int decile = total_ ? static_cast<int>(10 * (already_ + done_) / total_) : 10;
  if (decile > last_decile_ || now - last_draw_ >= std::chrono::seconds(5)) {
    last_decile_ = decile;
    last_draw_ = now;
    std::fprintf(out_, "%s\n", line().c_str());
  }
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (tty_) std::fprintf(out_, "\r%s\x1b[K\n", line().c_str());
}

}  // namespace ridge::cli
