// `ridge sweep STUDY.yaml`: the study run at every point of its `sweep:` block
// (workloads/sweep.hpp) on threads or MPI ranks (cli/point_runner.hpp), results ordered by point
// index into CSV, JSON and an SVG plot, resumable through a journal of finished points.
//
// Determinism: every output is a function of the study, its files and the point values only
// (results are ordered by index, numbers are printed in shortest round-trip form, timing goes to
// stderr), so one thread, many threads and many ranks write the same bytes.
// Resume: each finished point is appended to DIR/sweep.points.jsonl ({"key", "index", "results"}),
// flushed line by line; a rerun takes every line whose key (the study's and the point's hash)
// matches a point of the study as it is now, and computes the rest. A torn last line is ignored.
// The CSV, JSON and SVG are written together (OutputSet) only when every point has a result.
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "cli/point_runner.hpp"
#include "cli/progress.hpp"
#include "hw/units.hpp"
#include "workloads/sweep.hpp"

namespace ridge::cli {

namespace {

struct SweepArgs {
  std::string study, out_dir, csv, json_file, svg, journal;
  int threads = 0;
  double rank_timeout_s = 60;
  bool json = false;
};

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

std::string number(double v) {
  return fmt::format("{}", v);
}

// A value for JSON: a number where the text is one, else the text.
nlohmann::json value_json(const workloads::SweepValue& v, bool figure) {
  if (figure) return v.number;
  const hw::ParsedQuantity q = hw::parse_quantity(v.text, hw::Dimension::kCount);
  if (q.error.empty() && number(q.value) == v.text) return q.value;
  return v.text;
}

bool is_figure(const workloads::SweepValue& v) {
  return !v.text.empty() && v.node.scalar != v.text;
}

std::string render_csv(const workloads::Sweep& s, const std::vector<std::vector<double>>& r) {
  std::string out = "index";
  for (const auto& k : s.keys) out += "," + csv_cell(k);
  for (const auto& c : s.columns) out += "," + csv_cell(c);
  out += "\n";
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    out += std::to_string(i);
    for (const auto& v : s.points[i].values) out += "," + csv_cell(v.text);
    for (double x : r[i]) out += "," + number(x);
    out += "\n";
  }
  return out;
}

nlohmann::json render_json(const workloads::Sweep& s, const std::vector<std::vector<double>>& r) {
  nlohmann::json j;
  j["study"] = s.path;
  j["study_hash"] = s.study_hash;
  j["keys"] = s.keys;
  j["columns"] = s.columns;
  j["grid_shape"] = s.grid_shape;
  j["points"] = nlohmann::json::array();
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& v : s.points[i].values) values.push_back(value_json(v, is_figure(v)));
    j["points"].push_back(
        {{"index", i}, {"key", s.points[i].key}, {"values", values}, {"results", r[i]}});
  }
  j["provenance"] = provenance(s.files);
  return j;
}

std::string render_text(const workloads::Sweep& s, const std::vector<std::vector<double>>& r) {
  std::vector<std::string> header = {"#"};
  for (const auto& k : s.keys) header.push_back(k);
  for (const auto& c : s.columns) header.push_back(c);
  Table t(header);
  for (std::size_t i = 0; i < s.points.size(); ++i) {
    std::vector<std::string> row = {std::to_string(i)};
    for (std::size_t k = 0; k < s.keys.size(); ++k)
      row.push_back(workloads::sweep_value_text(s, k, s.points[i].values[k]));
    for (std::size_t c = 0; c < s.columns.size(); ++c) {
      const std::string& col = s.columns[c];
      const double x = r[i][c];
      if (col.ends_with("_s") && !col.ends_with("per_s"))
        row.push_back(fmt_time(x));
      else if (col.ends_with("_bytes"))
        row.push_back(fmt_bytes(x));
      else if (col.ends_with("fits"))
        row.push_back(x != 0 ? "yes" : "NO");
      else if (col.ends_with("per_s"))
        row.push_back(fmt::format("{:.0f}", x));
      else if (col == "mfu")
        row.push_back(fmt::format("{:.1f}%", 100 * x));
      else
        row.push_back(fmt::format("{:.4g}", x));
    }
    t.row(row);
  }
  return fmt::format("sweep of {} ({} points, study {})\n", s.path, s.points.size(),
                     s.study_hash.substr(0, 12)) +
         t.str();
}

// The journal's finished points that belong to this sweep, by index.
std::map<std::size_t, std::vector<double>> read_journal(const std::string& path,
                                                        const workloads::Sweep& s) {
  std::map<std::size_t, std::vector<double>> done;
  std::ifstream in(path, std::ios::binary);
  if (!in) return done;
  std::map<std::string, std::size_t> by_key;
  for (std::size_t i = 0; i < s.points.size(); ++i) by_key[s.points[i].key] = i;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("key") || !j["key"].is_string() ||
        !j.contains("results") || !j["results"].is_array())
      continue;  // a torn line from an interrupted run, or not ours
    auto it = by_key.find(j["key"].get<std::string>());
    if (it == by_key.end() || j["results"].size() != s.columns.size()) continue;
    std::vector<double> r;
    for (const auto& x : j["results"])
      if (x.is_number()) r.push_back(x.get<double>());
    if (r.size() == s.columns.size()) done[it->second] = std::move(r);
  }
  return done;
}

std::string journal_line(const workloads::Sweep& s, std::size_t i, const std::vector<double>& r) {
  return nlohmann::json{{"key", s.points[i].key}, {"index", i}, {"results", r}}.dump() + "\n";
}

long long env_index(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long long i = std::strtoll(v, &end, 10);
  return *end == 0 ? i : -1;
}

int sweep_command(const SweepArgs& a) {
  const bool under_mpi = started_by_mpirun();
  if (under_mpi && !mpi_built())
    throw std::invalid_argument(
        "started by mpirun, but this ridge was built without MPI (cmake -DRIDGE_MPI=ON)");
  std::optional<MpiSession> mpi;
  if (under_mpi) mpi.emplace();
  const bool root = !mpi || mpi->rank() == 0;

  SweepArgs o = a;
  if (!o.out_dir.empty()) {
    const std::filesystem::path d(o.out_dir);
    if (o.csv.empty()) o.csv = (d / "sweep.csv").string();
    if (o.json_file.empty()) o.json_file = (d / "sweep.json").string();
    if (o.svg.empty()) o.svg = (d / "sweep.svg").string();
    if (o.journal.empty()) o.journal = (d / "sweep.points.jsonl").string();
  }
  std::optional<workloads::Sweep> loaded;
  try {
    for (const std::string* p : {&o.csv, &o.json_file, &o.svg, &o.journal})
      if (!p->empty() && std::filesystem::exists(*p)) check_output_target(*p);
    loaded.emplace(workloads::load_sweep(o.study, RIDGE_VERSION));
  } catch (...) {
    if (root) throw;  // every rank read the same files: rank 0 reports for all
    return 2;
  }
  const workloads::Sweep& s = *loaded;
  const std::size_t n = s.points.size();
  std::vector<std::vector<double>> results(n);
  std::vector<char> have(n, 0);
  std::FILE* journal = nullptr;
  bool ready = true;
  std::vector<std::size_t> todo;
  if (root) {
    try {
      if (!o.out_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(o.out_dir, ec);
        if (ec || !std::filesystem::is_directory(o.out_dir))
          throw OutputError(fmt::format("--out {}: not a directory that can be made ({})",
                                        o.out_dir, ec ? ec.message() : "a file is in the way"));
      }
      if (!o.journal.empty()) {
        for (auto& [i, r] : read_journal(o.journal, s)) {
          results[i] = std::move(r);
          have[i] = 1;
        }
        // Append, after a newline if the last run was cut mid-line.
        bool needs_newline = false;
        if (std::ifstream in(o.journal, std::ios::binary | std::ios::ate); in && in.tellg() > 0) {
          in.seekg(-1, std::ios::end);
          needs_newline = in.get() != '\n';
        }
        journal = std::fopen(o.journal.c_str(), "ab");
        if (!journal) throw OutputError(fmt::format("{}: cannot open for appending", o.journal));
        if (needs_newline) std::fputc('\n', journal);
      }
    } catch (...) {
      if (mpi) mpi->broadcast(false);
      throw;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (!have[i]) todo.push_back(i);
  }
  if (mpi) ready = mpi->broadcast(ready);
  if (!ready) return 2;

  // Test hooks (tests/cli/test_sweep.cpp): a point that throws, and a worker rank that dies.
  const long long fail_at = env_index("RIDGE_SWEEP_TEST_FAIL_AT");
  const long long die_at = mpi && !root ? env_index("RIDGE_SWEEP_TEST_DIE_AT") : -1;
  const auto compute = [&s, fail_at, die_at](std::size_t i) {
    if (static_cast<long long>(i) == die_at) std::raise(SIGKILL);
    if (static_cast<long long>(i) == fail_at)
      throw std::runtime_error("RIDGE_SWEEP_TEST_FAIL_AT: a point that throws");
    return nlohmann::json(workloads::evaluate_point(s, i)).dump();
  };
  std::map<std::size_t, std::string> errors;
  std::optional<Progress> progress;
  if (root) {
    progress.emplace(n, n - todo.size(), "points");
    std::fprintf(stderr, "ridge: sweep of %zu points: %zu to compute, %zu from %s\n", n,
                 todo.size(), n - todo.size(), o.journal.empty() ? "-" : o.journal.c_str());
  }
  const auto on_result = [&](const PointOutcome& p) {
    if (p.ok) {
      const nlohmann::json j = nlohmann::json::parse(p.payload, nullptr, false);
      std::vector<double> r;
      if (j.is_array())
        for (const auto& x : j)
          if (x.is_number()) r.push_back(x.get<double>());
      if (r.size() == s.columns.size()) {
        results[p.index] = std::move(r);
        have[p.index] = 1;
        if (journal) {
          const std::string line = journal_line(s, p.index, results[p.index]);
          if (std::fwrite(line.data(), 1, line.size(), journal) != line.size() ||
              std::fflush(journal) != 0)
            throw OutputError(fmt::format("{}: write failed", o.journal));
        }
      } else {
        errors[p.index] = "a result that is not a number (NaN or infinity)";
      }
    } else {
      errors[p.index] = p.payload;
    }
    progress->tick();
  };
  PointRunSummary sum;
  if (mpi && mpi->size() > 1)
    sum = mpi->run(todo, compute, on_result, o.rank_timeout_s);
  else if (root)
    sum = run_points_threads(todo, compute, on_result, o.threads);
  if (!root) return 0;
  progress->finish();
  if (journal) std::fclose(journal);

  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < n; ++i)
    if (!have[i]) missing.push_back(i);
  if (!missing.empty()) {
    for (std::size_t i : missing) {
      std::string values;
      for (std::size_t k = 0; k < s.keys.size(); ++k)
        values += fmt::format("{}{}={}", k ? " " : "", s.keys[k], s.points[i].values[k].text);
      auto e = errors.find(i);
      std::cerr << fmt::format(
          "ridge: point {} ({}): {}\n", i, values,
          e != errors.end() ? "failed: " + e->second : "lost with its MPI rank (no result)");
    }
    std::cerr << fmt::format(
        "ridge: {} of {} points have no result ({} failed, {} lost with {} MPI rank(s)); "
        "{} finished points are kept in {}; rerun the same command to compute the rest. No CSV, "
        "JSON or SVG written.\n",
        missing.size(), n, errors.size(), missing.size() - errors.size(), sum.lost_ranks,
        n - missing.size(), o.journal.empty() ? "(no journal: use --out DIR)" : o.journal);
    return 3;
  }
  const nlohmann::json j = render_json(s, results);
  OutputSet outputs;
  if (!o.csv.empty()) outputs.add(o.csv, render_csv(s, results));
  if (!o.json_file.empty()) outputs.add(o.json_file, j.dump(2) + "\n");
  std::string svg;
  if (!o.svg.empty() && !(svg = workloads::sweep_svg(s, results)).empty()) outputs.add(o.svg, svg);
  if (!o.journal.empty()) {
    // The journal compacted to this sweep's points, in index order.
    std::string text;
    for (std::size_t i = 0; i < n; ++i) text += journal_line(s, i, results[i]);
    outputs.add(o.journal, text);
  }
  outputs.commit();
  emit(o.json, render_text(s, results), j);
  return 0;
}

}  // namespace

void describe_sweep(std::string& text, nlohmann::json& j) {
  Table t({"key", "unit", "sets", "meaning"});
  for (const auto& k : workloads::sweep_keys()) {
    t.row({k.key, k.unit, k.applies, k.meaning});
    j.push_back({{"key", k.key}, {"unit", k.unit}, {"applies", k.applies}, {"meaning", k.meaning}});
  }
  text =
      "sweep: (a top-level block of a study file; docs/sweeps.md)\n"
      "  grid: {KEY: VALUES, ...}   cartesian product, the first key varying slowest; VALUES is\n"
      "        [v, ...], {values: [v, ...]}, one value, or {from: A, to: B, steps: N, scale:\n"
      "        linear|log} (N >= 1; whole numbers for workload and parallel keys)\n"
      "  points: [{KEY: VALUE, ...}, ...]   a list of points, each setting the same keys\n"
      "Figures take a value with its unit (4.8 TB/s, 60 MiB, 1.98 GHz); NAME* takes a factor on\n"
      "the study's own figure (0.01 to 100). Keys:\n" +
      t.str();
}

void register_sweep(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "sweep", "run a study over a grid or list of hardware figures and workload parameters");
  auto a = std::make_shared<SweepArgs>();
  cmd->add_option("study", a->study, "study file with a sweep: block (docs/sweeps.md)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-j,--threads", a->threads, "threads (default: one per hardware thread)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--out", a->out_dir,
                  "directory for sweep.csv, sweep.json, sweep.svg and the resume journal "
                  "sweep.points.jsonl");
  cmd->add_option("--csv", a->csv, "write the results as CSV here");
  cmd->add_option("--json-file", a->json_file, "write the results as JSON here");
  cmd->add_option("--svg", a->svg, "write the plot here (1 key: lines; 2-key grid: heatmap)");
  cmd->add_option("--journal", a->journal,
                  "resume journal (default with --out: DIR/sweep.points.jsonl)");
  cmd->add_option("--rank-timeout", a->rank_timeout_s,
                  "MPI: seconds of silence after which a worker rank is declared lost")
      ->check(finite_in(0.1, 86400.0));
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, a, as_json] {
    action = [=] {
      SweepArgs o = *a;
      o.json = as_json->count() > 0;
      return sweep_command(o);
    };
  });
}

}  // namespace ridge::cli
