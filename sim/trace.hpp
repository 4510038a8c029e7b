// An optional recorder of what happened in a run, written as Chrome Trace Event JSON.
//
// Captures: named slices on named tracks of named processes (models call slice()), counters
// (resources' units in use, links' utilisation), and the flows of a FlowNetwork with their rate
// over time. Output is the Trace Event Format ("JSON Object Format": Google, "Trace Event Format",
// docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU), which
// ui.perfetto.dev and chrome://tracing open: integer pid per process and tid per track, named by
// ph:"M" process_name/thread_name events; ph:"X" slices with ts/dur in microseconds printed with
// exactly three decimals (nanosecond precision, rounded half up from picoseconds); ph:"C"
// counters.
// Slices on one track must nest strictly in that format. A model may record overlapping slices
// on one track (two transfers from the same source); the writer then spreads them over extra
// tracks named "track #2", "track #3", ..., placing each slice on the lowest-numbered track where
// it nests, so what is written always nests.
// Determinism: ids come from first-use order, slices are sorted by (start, end descending,
// record order), numbers have fixed formats; identical runs give byte-identical output.
// Ignores: flow arrows between slices, instant and async events, the binary protobuf format.
// Cost: nothing is recorded unless a Tracer is attached (Simulator::set_tracer); then one record
// per call, and writing is O(S log S + S * L) for S slices and L extra tracks per track.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/time.hpp"

namespace ridge::sim {

/// Records slices and counters during a run and writes them as Chrome Trace Event JSON.
class Tracer {
 public:
  /// An empty trace; its metadata starts with "generator" and "time_resolution".
  Tracer();

  /// Records slice `name` over [start, end] on `track` of `process`; `args_json` is empty or the
  /// text of one JSON object (written verbatim, so it must be valid and deterministic).
  void slice(std::string_view process, std::string_view track, std::string_view name, Time start,
             Time end, std::string_view args_json = {});
  /// Records that counter `name` of `process` takes `value` from time `t` on.
  void counter(std::string_view process, std::string_view name, Time t, double value);
  /// Adds a string entry to the output's "metadata" object (a later call with the key replaces).
  void set_metadata(std::string_view key, std::string_view value);

  /// Slices recorded so far.
  std::size_t slice_count() const { return slices_.size(); }
  /// Counter samples recorded so far.
  std::size_t counter_count() const { return counters_.size(); }

  /// The whole trace as a JSON document.
  std::string to_json() const;
  /// Writes to_json() to `out`.
  void write_json(std::ostream& out) const;

  /// Escapes `s` as the inside of a JSON string (no surrounding quotes).
  static std::string json_escape(std::string_view s);
  /// Formats a double for JSON deterministically (shortest round-trip form; non-finite as null).
  static std::string json_number(double v);
  /// Formats `t` as microseconds with exactly three decimals (rounded to the nanosecond).
  static std::string format_us(Time t);

 private:
  struct Process {
    std::string name;
    std::vector<std::string> tracks;                         // in first-use order
    std::map<std::string, uint32_t, std::less<>> track_ids;  // name -> index in tracks
    std::vector<std::string> counters;
    std::map<std::string, uint32_t, std::less<>> counter_ids;
  };
  struct Slice {
    uint32_t process;
    uint32_t track;
    Time start;
    Time end;
    std::string name;
    std::string args;
  };
  struct CounterSample {
    uint32_t process;
    uint32_t counter;
    Time t;
    double value;
  };
  uint32_t process_id(std::string_view name);

  std::vector<Process> processes_;
  std::map<std::string, uint32_t, std::less<>> process_ids_;
  std::vector<Slice> slices_;
  std::vector<CounterSample> counters_;
  std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace ridge::sim
