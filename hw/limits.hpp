// Ridge's input limits, stated once: every bound a loader or builder checks is a constant here, and
// `ridge describe limits` prints this table. The limits keep a run bounded in memory and time
// (a hostile or careless input is refused with a clear error, never a crash or an hour of work)
// and keep sizes inside what the arithmetic can represent (products of sizes checked before use).
//
// Also here: the one way an input file is read (a regular file, at most kMaxInputFileBytes, its
// identity remembered so that no output of the same run may replace it) and the JSON nesting
// pre-scan that keeps a recursive parser off a deep stack.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ridge::hw {

/// Largest input file read (configs, cases, records, traces): 64 MiB. The largest file shipped
/// (validate/data) is under 0.5 MB.
inline constexpr std::uint64_t kMaxInputFileBytes = 64ULL << 20;
/// Deepest nesting of arrays and objects in a JSON input (records hold 3 levels; cases 4).
inline constexpr int kMaxJsonDepth = 128;
/// Most nodes a YAML file may expand to, aliases expanded (a billion-laughs bomb is refused).
/// The largest shipped config has under 2,000.
inline constexpr long long kMaxYamlNodes = 200000;
/// Deepest nesting of a YAML file.
inline constexpr int kMaxYamlDepth = 128;
/// A what-if factor's range: beyond it the "what if" describes no machine (0.01x to 100x).
inline constexpr double kMinWhatIfFactor = 0.01;
inline constexpr double kMaxWhatIfFactor = 100.0;
/// Bytes one op reads plus writes (2^50 B = 1 PiB, ~7,000x the HBM of any shipped GPU): bounds
/// every product of an op's sizes (a GEMM's m x n x batch output, its tiles and grid).
inline constexpr double kMaxOpBytes = 1125899906842624.0;  // 2^50
/// FLOPs of one op (1e21: an hour at 280 PFLOP/s; larger work exceeds the picosecond clock's
/// range of ~106 days on slow precisions).
inline constexpr double kMaxOpFlops = 1e21;
/// Transformer layers (the largest published dense models have ~130).
inline constexpr long long kMaxLayers = 1024;
/// Gradient-accumulation micro-batches of one training step.
inline constexpr long long kMaxGradAccum = 512;
/// Denoising steps of one diffusion run (DDPM's 1000 is the longest schedule in common use).
inline constexpr long long kMaxDiffusionSteps = 1000;
/// Ops of one workload's graph, counted as it is built (the shipped studies: GPT-3 175B training
/// step 6,846; Wan 2.1 at 50 steps 40,756; building one op costs ~10 us, executing it more).
inline constexpr long long kMaxGraphOps = 500000;
/// Detailed mode: most thread blocks simulated as events for one op (ridge kernel, predict) or one
/// workload execution (each distinct shape once); ~3 us each here, so the budget is ~30 s.
inline constexpr double kMaxDetailedBlocks = 1e7;

/// Ridge's own memory for the largest structures of one run, estimated before they are built (a
/// disaggregated serving run holds every request several times: 10^8 requests were ~30 GB). The
/// machines Ridge runs on have 8 GiB and more; a graph at the graph_ops limit holds ~0.5 GB.
inline constexpr double kMaxRunMemoryBytes = 4.0 * (1ULL << 30);
/// Throws std::invalid_argument "WHAT: would hold ~X GB of Ridge's memory, over the run budget..."
/// when `bytes` is over kMaxRunMemoryBytes.
void require_run_memory(double bytes, const std::string& what);

/// One limit, for `ridge describe limits`.
struct Limit {
  std::string_view name;
  std::string value;  ///< as text, with its unit
  std::string_view applies_to;
  std::string_view meaning;
};
/// Every limit, generated from the constants above.
std::vector<Limit> limits_table();

/// Reads an input file whole: it must be a regular file (not a FIFO, device or directory) of at
/// most kMaxInputFileBytes. Remembers its identity (see is_input_file). Throws
/// std::invalid_argument "PATH: message" otherwise.
std::string read_input_file(const std::string& path);

/// True when `path` names (after following links) a file this run has read as input, compared by
/// device and inode. False if it does not exist.
bool is_input_file(const std::string& path);

/// Remembers `path` as an input of this run (for files opened by other means, e.g. checked by
/// CLI11 before reading).
void note_input_file(const std::string& path);

/// Checks that JSON `text` nests arrays and objects at most kMaxJsonDepth deep, without parsing
/// it (strings skipped). Returns an empty string, or a message with the byte offset where the
/// limit is passed.
std::string json_depth_error(std::string_view text);

}  // namespace ridge::hw
