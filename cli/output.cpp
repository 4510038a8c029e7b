#include "cli/output.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "hw/limits.hpp"
#include "hw/units.hpp"

#ifndef RIDGE_VERSION
#define RIDGE_VERSION "0.0.0"
#endif

namespace ridge::cli {

std::string Table::str() const {
  std::vector<size_t> width(header_.size(), 0);
  auto measure = [&](const std::vector<std::string>& r) {
    for (size_t i = 0; i < r.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], r[i].size());
  };
  measure(header_);
  for (const auto& r : rows_) measure(r);
  // Right-align cells that are plain numbers (digits, sign, point, exponent, percent).
  auto numeric = [](const std::string& s) {
    if (s.empty() ||
        !(std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '-' || s[0] == '+'))
      return false;
    return s.find_first_not_of("0123456789.-+eE%x") == std::string::npos;
  };
  std::string out;
  auto emit = [&](const std::vector<std::string>& r, bool head) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      const std::string cell = i < r.size() ? r[i] : "";
      const bool right = !head && numeric(cell) && i > 0;
      line += right ? fmt::format("{:>{}}", cell, width[i]) : fmt::format("{:<{}}", cell, width[i]);
      if (i + 1 < width.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  emit(header_, true);
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  out += std::string(total >= 2 ? total - 2 : 0, '-') + "\n";
  for (const auto& r : rows_) emit(r, false);
  return out;
}

nlohmann::json provenance(const std::vector<std::pair<std::string, std::string>>& files) {
  nlohmann::json j;
  j["tool"] = "ridge";
  j["version"] = RIDGE_VERSION;
  j["configs"] = nlohmann::json::array();
  for (const auto& [path, sha] : files) j["configs"].push_back({{"path", path}, {"sha256", sha}});
  return j;
}

std::string provenance_text(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string out;
  for (const auto& [path, sha] : files)
    out += fmt::format("config: {} (sha256 {})\n", path, sha.substr(0, 16));
  return out;
}

void check_output_target(const std::string& path) {
  if (path.empty()) throw OutputError("an output path is empty");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    const char* what = S_ISDIR(st.st_mode)                          ? "a directory"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device node"
                       : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                       : !S_ISREG(st.st_mode)                       ? "not a regular file"
                                                                    : nullptr;
    if (what)
      throw OutputError(fmt::format(
          "{}: refusing to write an output there: it is {} (Ridge replaces only regular files)",
          path, what));
    if (hw::is_input_file(path))
      throw OutputError(
          fmt::format("{}: refusing to write an output there: it is an input of this run", path));
  }
}

OutputSet::~OutputSet() {
  remove_temps();
}

void OutputSet::remove_temps() {
  for (auto& s : staged_) {
    if (!s.temp.empty()) ::unlink(s.temp.c_str());
    s.temp.clear();
  }
}

void OutputSet::add(const std::string& path, std::string content) {
  check_output_target(path);
  for (const auto& s : staged_)
    if (s.path == path)
      throw OutputError(fmt::format("{}: named for two outputs of the same run", path));
  staged_.push_back({path, std::move(content), {}});
}

namespace {

// Creates a new file beside `path`, exclusively (never an existing file or a link), and writes
// `content` to disk. Returns its name.
std::string write_temp(const std::string& path, const std::string& content) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  static unsigned counter = 0;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string temp =
        (dir / fmt::format(".{}.ridge-{}-{}", target.filename().string(), ::getpid(), counter++))
            .string();
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) {
      if (errno == EEXIST) continue;
      throw OutputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    }
    std::size_t done = 0;
    int err = 0;
    while (done < content.size()) {
      const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
        break;
      }
      done += static_cast<std::size_t>(n);
    }
    if (err == 0 && ::fsync(fd) != 0) err = errno;
    if (::close(fd) != 0 && err == 0) err = errno;
    if (err != 0) {
      ::unlink(temp.c_str());
      throw OutputError(fmt::format("{}: write failed: {}", path, std::strerror(err)));
    }
    return temp;
  }
  throw OutputError(fmt::format("{}: cannot create a temporary file beside it", path));
}

}  // namespace

void OutputSet::commit(const std::function<void(const std::vector<std::string>&)>& check) {
  try {
    std::vector<std::string> temps;
    for (auto& s : staged_) {
      check_output_target(s.path);  // again: the run may have taken a while
      s.temp = write_temp(s.path, s.content);
      temps.push_back(s.temp);
    }
    if (check) check(temps);
    for (auto& s : staged_) {
      if (::rename(s.temp.c_str(), s.path.c_str()) != 0)
        throw OutputError(fmt::format("{}: cannot replace: {}", s.path, std::strerror(errno)));
      s.temp.clear();
    }
  } catch (...) {
    remove_temps();
    throw;
  }
  staged_.clear();
}

void write_file_atomically(const std::string& path, const std::string& content) {
  OutputSet out;
  out.add(path, content);
  out.commit();
}

std::string fmt_rate(double v) {
  return hw::format_quantity(v, hw::Dimension::kFlopRate);
}
std::string fmt_bw(double v) {
  return hw::format_quantity(v, hw::Dimension::kBandwidth);
}
std::string fmt_time(double v) {
  return hw::format_quantity(v, hw::Dimension::kTime);
}
std::string fmt_bytes(double v) {
  if (v >= 1e9) return fmt::format("{:.2f} GB", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f} MB", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.2f} kB", v / 1e3);
  return fmt::format("{:.0f} B", v);
}

}  // namespace ridge::cli
