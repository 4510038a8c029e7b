#include "hw/limits.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

namespace ridge::hw {

namespace {

std::mutex& inputs_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::pair<dev_t, ino_t>>& inputs() {
  static std::vector<std::pair<dev_t, ino_t>> v;
  return v;
}

void remember(const struct stat& st) {
  std::lock_guard<std::mutex> lock(inputs_mutex());
  for (const auto& [d, i] : inputs())
    if (d == st.st_dev && i == st.st_ino) return;
  inputs().emplace_back(st.st_dev, st.st_ino);
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{} MiB", bytes >> 20);
}

}  // namespace

std::vector<Limit> limits_table() {
  return {
      {"input_file_size", mib(kMaxInputFileBytes), "every input file",
       "largest file read; only regular files are read (no FIFO, device or directory)"},
      {"json_depth", fmt::format("{}", kMaxJsonDepth), "records, cases and e2e JSON",
       "deepest nesting of arrays and objects, checked before parsing"},
      {"yaml_nodes", fmt::format("{}", kMaxYamlNodes), "every YAML file",
       "nodes after expanding aliases (refuses alias bombs)"},
      {"yaml_depth", fmt::format("{}", kMaxYamlDepth), "every YAML file",
       "deepest nesting of maps and lists"},
      {"what_if_factor", fmt::format("{} .. {}", kMinWhatIfFactor, kMaxWhatIfFactor),
       "--what-if, study what_if", "range of a what-if factor"},
      {"op_bytes", "2^50 B (1 PiB)", "every op (kernel, roofline, predict, workloads)",
       "bytes one op reads and writes: bounds every product of its sizes"},
      {"op_flops", fmt::format("{:.0e}", kMaxOpFlops), "every op", "FLOPs of one op"},
      {"layers", fmt::format("{}", kMaxLayers), "model files", "transformer and encoder layers"},
      {"grad_accum", fmt::format("{}", kMaxGradAccum), "train workloads",
       "micro-batches accumulated in one step"},
      {"steps", fmt::format("{}", kMaxDiffusionSteps), "diffusion workloads", "denoising steps"},
      {"graph_ops", fmt::format("{}", kMaxGraphOps), "every workload",
       "ops of one workload's graph, counted as it is built"},
      {"detailed_blocks", fmt::format("{:.0e}", kMaxDetailedBlocks), "--mode detailed",
       "thread blocks simulated as events per op (kernel, predict) or per workload execution "
       "(distinct shapes once); beyond it, an error that offers fast mode"},
      {"run_memory", "4 GiB", "serving runs",
       "Ridge's own memory for a run's largest structures (requests held, per-request records), "
       "estimated before they are built"},
  };
}

void require_run_memory(double bytes, const std::string& what) {
  if (bytes > kMaxRunMemoryBytes)
    throw std::invalid_argument(fmt::format(
        "{}: would hold ~{:.1f} GB in Ridge's memory, over the run budget of 4 GiB (see `ridge "
        "describe limits`)",
        what, bytes / 1e9));
}

std::string read_input_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO with no writer must not hang; it is refused below anyway.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw std::invalid_argument(
        fmt::format("{}: cannot read file: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw std::invalid_argument(
        fmt::format("{}: not a regular file (a device, FIFO or directory is not read)", path));
  }
  if (static_cast<std::uint64_t>(st.st_size) > kMaxInputFileBytes) {
    ::close(fd);
    throw std::invalid_argument(fmt::format("{}: {} bytes is over the input limit of {}", path,
                                            st.st_size, mib(kMaxInputFileBytes)));
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  remember(st);
  return text;
}

bool is_input_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  std::lock_guard<std::mutex> lock(inputs_mutex());
  for (const auto& [d, i] : inputs())
    if (d == st.st_dev && i == st.st_ino) return true;
  return false;
}

void note_input_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) remember(st);
}

std::string json_depth_error(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        return fmt::format("byte {}: JSON nested more than {} levels deep (the limit)", i,
                           kMaxJsonDepth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return {};
}

}  // namespace ridge::hw
