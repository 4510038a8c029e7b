// `ridge calibrate RECORDS... --gpu NAME --out FILE` and `ridge compare RECORDS... --gpu NAME`.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "hw/limits.hpp"
#include "hw/model_params.hpp"
#include "models/calibration.hpp"
#include "models/op_framework_ident.hpp"
#include "models/records.hpp"
#include "workloads/e2e_compare.hpp"

namespace ridge::cli {

namespace {

// Reads every file; records whose id starts with one of `exclude` are left out (listed in
// validate/OUTLIERS.md with the reason, e.g. a reference kernel that is not what the op models).
std::vector<models::Record> read_all(
    const std::vector<std::string>& files, const std::vector<std::string>& exclude,
    std::vector<std::pair<std::string, std::string>>& provenance_files) {
  std::vector<models::Record> out;
  for (const auto& f : files) {
    models::RecordFile rf = models::read_records(f);
    provenance_files.emplace_back(f, rf.sha256);
    for (auto& r : rf.records) {
      const bool skip = std::any_of(exclude.begin(), exclude.end(),
                                    [&](const std::string& p) { return r.id.rfind(p, 0) == 0; });
      if (!skip) out.push_back(std::move(r));
    }
  }
  return out;
}

models::Mode parse_mode(const std::string& m) {
  return m == "detailed" ? models::Mode::kDetailed : models::Mode::kFast;
}

std::string pct(double v) {
  return fmt::format("{:.1f}%", 100 * v);
}

std::string fmt_param(const std::string& name, double v) {
  if (!std::isfinite(v)) return "inf";
  const hw::ModelParamDecl* d = hw::find_model_param(name);
  if (d && d->dim == hw::Dimension::kTime) return fmt::format("{:.3g} ns", v * 1e9);
  if (d && d->dim == hw::Dimension::kBytes) return fmt::format("{:.0f} B", v);
  return fmt::format("{:.3g}", v);
}

// `ridge calibrate --splits`: fit on each split's training side, predict its held-out side, and
// the identifiability of the fit on the hashed split. Markdown tables, or JSON.
int run_splits(const hw::GpuSpec& gpu, const std::vector<models::Record>& records,
               models::Mode mode, double top_fraction, const std::vector<std::string>& fixed,
               bool markdown, bool as_json, const std::string& command,
               const std::vector<std::pair<std::string, std::string>>& files) {
  struct Pooled {
    std::string name;
    int fits = 0, train = 0;
    std::vector<models::ComparisonRow> rows;
  };
  auto run = [&](const models::Split& s, Pooled& into) {
    const auto res = models::calibrate(gpu, records, mode, s, fixed);
    const hw::GpuSpec g = models::apply_calibration(gpu, res);
    const auto c = models::compare_held_out(g, records, mode, s);
    ++into.fits;
    into.train += res.train_records;
    into.rows.insert(into.rows.end(), c.rows.begin(), c.rows.end());
    return res;
  };
  const auto splits = models::extrapolation_splits(records, top_fraction);
  std::vector<Pooled> pooled(4);
  pooled[0].name = "interpolation: hashed third (models/records.hpp is_held_out)";
  pooled[1].name = splits.front().name;
  pooled[2].name = "leave one op class out (pooled over the classes)";
  pooled[3].name = "leave one precision out (pooled over the dtypes)";
  const models::CalibrationResult base = run(models::Split{}, pooled[0]);
  run(splits.front(), pooled[1]);
  for (size_t i = 1; i < splits.size(); ++i)
    run(splits[i], pooled[splits[i].name.rfind("class:", 0) == 0 ? 2 : 3]);

  auto stats = [](const std::vector<models::ComparisonRow>& rows, const std::string& cls) {
    std::vector<double> v;
    for (const auto& r : rows)
      if (cls.empty() || r.op_class == cls) v.push_back(std::fabs(r.error));
    models::ClassStats st;
    st.cases = static_cast<int>(v.size());
    st.median_abs = models::percentile(v, 50);
    st.p90_abs = models::percentile(v, 90);
    st.max_abs = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    return st;
  };
  std::set<std::string> classes;
  for (const auto& p : pooled)
    for (const auto& r : p.rows) classes.insert(r.op_class);

  std::string text;
  nlohmann::json j;
  j["splits"] = nlohmann::json::array();
  text +=
      "| split | fits | cases predicted | median abs error | p90 abs error | max abs error "
      "|\n|---|---:|---:|---:|---:|---:|\n";
  for (const auto& p : pooled) {
    const auto st = stats(p.rows, "");
    text += fmt::format("| {} | {} | {} | {} | {} | {} |\n", p.name, p.fits, st.cases,
                        pct(st.median_abs), pct(st.p90_abs), pct(st.max_abs));
    nlohmann::json cls = nlohmann::json::array();
    for (const auto& c : classes) {
      const auto cs = stats(p.rows, c);
      if (cs.cases == 0) continue;
      cls.push_back({{"class", c},
                     {"cases", cs.cases},
                     {"median_abs_error", cs.median_abs},
                     {"p90_abs_error", cs.p90_abs},
                     {"max_abs_error", cs.max_abs}});
    }
    j["splits"].push_back({{"split", p.name},
                           {"fits", p.fits},
                           {"cases", st.cases},
                           {"median_abs_error", st.median_abs},
                           {"p90_abs_error", st.p90_abs},
                           {"max_abs_error", st.max_abs},
                           {"classes", cls}});
  }
  text +=
      "\nPer op class, median / p90 of the absolute error of the held-out cases (n: cases):\n\n"
      "| op class | interpolation | largest | class left out | precision left out |\n"
      "|---|---:|---:|---:|---:|\n";
  for (const auto& c : classes) {
    text += "| " + c;
    for (const auto& p : pooled) {
      const auto cs = stats(p.rows, c);
      text += cs.cases == 0
                  ? " | -"
                  : fmt::format(" | {} / {} (n {})", pct(cs.median_abs), pct(cs.p90_abs), cs.cases);
    }
    text += " |\n";
  }
  text += fmt::format(
      "\nIdentifiability of the fit on the hashed split's training side ({} records; rms log "
      "error {:.4f}):\n\n"
      "| parameter | value | 95% interval | records pinning it | by class | verdict |\n"
      "|---|---:|---|---:|---|---|\n",
      base.train_records, base.train_rms_after);
  j["identifiability"] = nlohmann::json::array();
  for (const auto& p : base.params) {
    if (p.method != "least squares") continue;
    const std::string ci =
        std::isfinite(p.ci_hi)
            ? fmt::format("{} .. {}", fmt_param(p.name, p.ci_lo), fmt_param(p.name, p.ci_hi))
            : "undetermined";
    text += fmt::format("| {} | {} | {} | {} | {} | {}{} |\n", p.name, fmt_param(p.name, p.value),
                        ci, p.pinning, p.pinned_by.empty() ? "-" : p.pinned_by, p.verdict,
                        p.at_bound ? " (at its range's edge)" : "");
    j["identifiability"].push_back(
        {{"name", p.name},
         {"value", p.value},
         {"ci_lo", p.ci_lo},
         {"ci_hi", std::isfinite(p.ci_hi) ? nlohmann::json(p.ci_hi) : nlohmann::json(nullptr)},
         {"sd_log", std::isfinite(p.sd_log) ? nlohmann::json(p.sd_log) : nlohmann::json(nullptr)},
         {"pinning_records", p.pinning},
         {"pinned_by", p.pinned_by},
         {"at_bound", p.at_bound},
         {"verdict", p.verdict}});
  }
  for (const auto& name : base.not_fitted) {
    text += fmt::format("| {} | {} (kept) | - | 0 | - | no record moves it: not fitted |\n", name,
                        fmt_param(name, gpu.param(name)));
  }
  for (const auto& name : fixed) {
    text += fmt::format("| {} | {} (fixed) | - | - | - | fixed by --fix |\n", name,
                        fmt_param(name, gpu.param(name)));
  }
  text += "\nMade by `" + command + "`.\n";
  j["command"] = command;
  j["provenance"] = provenance(files);
  if (!markdown && !as_json) text += "\n" + provenance_text(files);
  emit(as_json, text, j);
  return 0;
}

}  // namespace

void register_calibrate(CLI::App& app, Action& action) {
  auto* cmd =
      app.add_subcommand("calibrate", "fit the model's free parameters to measurement records");
  struct Args {
    std::vector<std::string> files;
    std::string gpu = "h200";
    std::string out;
    std::string mode = "fast";
    std::vector<std::string> exclude;
    std::vector<std::string> e2e;
    std::string attention;
    std::vector<std::string> fix;
    std::vector<std::string> fw_refit;
    double top_fraction = 0.25;
  };
  auto a = std::make_shared<Args>();
  auto* splits = cmd->add_flag("--splits")
                     ->description(
                         "instead of writing an overlay: fit on each split's training side and "
                         "report the errors on "
                         "its held-out side (hashed third, largest cases of each sweep, each op "
                         "class and each "
                         "precision left out in turn), and each fitted parameter's 95% interval "
                         "and the records that "
                         "pin it");
  cmd->add_option("--top-fraction", a->top_fraction,
                  "--splits: fraction of each sweep (by FLOPs, or bytes) held out as the largest")
      ->check(finite_in(0.05, 0.95))
      ->capture_default_str();
  cmd->add_option(
      "--fix", a->fix,
      "keep this parameter at the GPU config's value instead of fitting it (repeatable)");
  auto* markdown =
      cmd->add_flag("--markdown")->description("--splits: print the tables as Markdown");
  auto* framework =
      cmd->add_flag("--framework-ops")
          ->description(
              "instead of writing an overlay: the framework-op model's parameters "
              "(models/op_framework_params.hpp), each with its 95% interval on these records and "
              "the records that pin it (docs/framework-ops.md); Markdown, or JSON with --json");
  cmd->add_option("records", a->files, "measurement record files (ridge.records/1 JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--gpu", a->gpu, "GPU config to start from")->capture_default_str();
  cmd->add_option(
         "--e2e", a->e2e,
         "end-to-end records (validate/e2e; repeatable, one file per run): host-bound eager steps "
         "give host_python_scale")
      ->check(CLI::ExistingFile);
  cmd->add_option(
         "--attention", a->attention,
         "GPU-bound PyTorch SDPA timings (gpu_bound.json of validate/e2e/attention_sdpa.py): "
         "fit the flash-attention efficiencies")
      ->check(CLI::ExistingFile);
  cmd->add_option("--exclude", a->exclude,
                  "leave out records whose id starts with this (repeatable)");
  cmd->add_option("--out", a->out, "calibrated overlay to write (YAML; required without --splits)");
  cmd->add_option("--mode", a->mode, "model granularity used for the fit")
      ->check(CLI::IsMember({"fast", "detailed"}))
      ->capture_default_str();
  auto* as_json = add_json_flag(cmd);
  cmd->add_option("--refit", a->fw_refit,
                  "--framework-ops: re-fit these framework-op parameters (repeatable) and print "
                  "their values before and after");
  cmd->callback([&action, a, as_json, splits, markdown, framework] {
    action = [=] {
      // --fix NAME or NAME=VALUE (in the parameter's base unit: seconds, bytes, fraction).
      std::vector<std::string> fixed;
      std::vector<std::pair<std::string, double>> fixed_values;
      for (const auto& f : a->fix) {
        const auto eq = f.find('=');
        const std::string name = f.substr(0, eq);
        const hw::ModelParamDecl* d = hw::find_model_param(name);
        if (!d)
          throw std::invalid_argument("--fix: '" + name +
                                      "' is not a model parameter (ridge describe params)");
        fixed.push_back(name);
        if (eq == std::string::npos) continue;
        const std::string text = f.substr(eq + 1);
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used != text.size() || text.empty() || !(v >= d->lo && v <= d->hi))
          throw std::invalid_argument(
              fmt::format("--fix {}: expected a number in [{}, {}] (base units), got '{}'", name,
                          d->lo, d->hi, text));
        fixed_values.emplace_back(name, v);
      }
      if (!a->fw_refit.empty() && framework->count() == 0)
        throw std::invalid_argument("calibrate: --refit needs --framework-ops");
      if (framework->count() > 0) {
        std::vector<std::pair<std::string, std::string>> fw_files;
        const auto fw_records = read_all(a->files, a->exclude, fw_files);
        const hw::GpuSpec fw_gpu = hw::load_gpu_spec(hw::resolve_gpu_config(a->gpu));
        if (!a->fw_refit.empty()) {
          const models::FwParams p0;
          const auto p1 = models::framework_refit(fw_gpu, fw_records, p0, a->fw_refit);
          for (const auto& d : models::framework_param_table())
            if (std::find(a->fw_refit.begin(), a->fw_refit.end(), d.name) != a->fw_refit.end())
              std::cout << fmt::format("{} {:.6g} -> {:.6g}\n", d.name, p0.*(d.member),
                                       p1.*(d.member));
          for (const auto* p : {&p0, &p1}) {
            const auto r = models::framework_residuals(fw_gpu, fw_records, *p).r;
            double ss = 0;
            for (double x : r) ss += x * x;
            std::cout << fmt::format("rms ln(pred/meas) over {} residuals: {:.4f}\n", r.size(),
                                     std::sqrt(ss / static_cast<double>(r.size())));
          }
          return 0;
        }
        const auto fw = models::framework_identifiability(fw_gpu, fw_records);
        if (as_json->count() > 0)
          std::cout << models::framework_ident_json(fw).dump(1) << "\n";
        else
          std::cout << models::framework_ident_markdown(fw);
        return 0;
      }
      if (splits->count() == 0 && a->out.empty())
        throw std::invalid_argument("calibrate: --out is required (or --splits)");
      std::vector<std::pair<std::string, std::string>> files;
      const auto records = read_all(a->files, a->exclude, files);
      const std::string base_path = hw::resolve_gpu_config(a->gpu);
      hw::GpuSpec gpu = hw::load_gpu_spec(base_path);
      const hw::GpuSpec declared = gpu;
      for (const auto& [name, v] : fixed_values) gpu.model[name] = v;
      if (splits->count() > 0) {
        std::string command = "ridge calibrate";
        for (const auto& f : a->files) command += " " + f;
        for (const auto& e : a->exclude) command += " --exclude " + e;
        for (const auto& f : a->fix) command += " --fix " + f;
        command += " --gpu " + a->gpu + " --splits";
        if (a->top_fraction != 0.25) command += fmt::format(" --top-fraction {}", a->top_fraction);
        if (markdown->count() > 0) command += " --markdown";
        return run_splits(gpu, records, parse_mode(a->mode), a->top_fraction, fixed,
                          markdown->count() > 0, as_json->count() > 0, command, files);
      }
      check_output_target(a->out);  // before the fit: not a device, not an input of this run
      auto res = models::calibrate(gpu, records, parse_mode(a->mode), {}, fixed);
      for (const auto& [name, v] : fixed_values) {
        models::FittedParam p;
        p.name = name;
        p.before = declared.param(name);
        p.value = v;
        p.method = "fixed by --fix";
        p.sources =
            "the command line (not identifiable from the records: validate/README.md, "
            "identifiability table)";
        res.params.push_back(p);
      }
      std::sort(res.params.begin(), res.params.end(),
                [](const auto& x, const auto& y) { return x.name < y.name; });
      if (res.train_records == 0)
        throw std::invalid_argument("calibrate: no predictable records in the training split");
      if (!a->attention.empty()) {
        // Flash-attention efficiencies, after the main fit and without touching it: each factor
        // is scaled by the median predicted/measured ratio of its pass's training-split cases
        // (forward alone for the forward factor, forward+backward for the backward one) until it
        // settles. The file holds GPU-bound cases only (attention_sdpa.py splits off the ones whose
        // per-call time the host can set).
        models::RecordFile rf = models::read_records(a->attention);
        files.emplace_back(a->attention, rf.sha256);
        hw::GpuSpec g = models::apply_calibration(gpu, res);
        for (const std::string pass : {"fwd", "fwd_bwd"}) {
          const std::string name =
              std::string("attention_") + (pass == "fwd" ? "fwd" : "bwd") + "_efficiency";
          std::vector<models::Record> use;
          for (const auto& r : rf.records)
            if (r.op == "attention" && r.spec && r.spec->s("pass") == pass &&
                !models::is_held_out(r.id))
              use.push_back(r);
          if (use.empty()) continue;
          models::FittedParam fp;
          fp.name = name;
          fp.before = g.param(name);
          std::vector<double> ratio;
          for (int it = 0; it < 8; ++it) {
            ratio.clear();
            for (const auto& row : models::compare(g, use, parse_mode(a->mode), false).rows)
              ratio.push_back(row.predicted_s / row.measured_s);
            g.model[name] = std::clamp(g.param(name) * models::percentile(ratio, 50), 0.2, 1.5);
          }
          fp.value = g.param(name);
          fp.method = "direct measurement";
          fp.records = static_cast<int>(use.size());
          double ss = 0;
          for (double x : ratio) ss += std::log(x) * std::log(x);
          fp.residual = std::sqrt(ss / static_cast<double>(ratio.size()));
          fp.sources = a->attention + " (" + pass + " cases)";
          res.params.push_back(fp);
        }
      }
      if (!a->e2e.empty()) {
        // Host-bound eager steps of the training split: the ratio of the measured step to the host
        // time Ridge predicts for it at host_python_scale 1 (the per-op costs measured in tight
        // loops) is the in-model Python factor; its median over the cases is host_python_scale.
        // Several runs (leases) pool their cases: the host's speed differs between them. In runs
        // with CPU probes a case is measured over its steps at nominal host speed, and one with
        // fewer than 3 such steps (host_slowed) is left out.
        hw::GpuSpec fitted = models::apply_calibration(gpu, res);
        fitted.model["host_python_scale"] = 1.0;
        std::vector<double> implied;
        std::string sources;
        workloads::E2eCache cache;
        for (const auto& path : a->e2e) {
          const std::string text = hw::read_input_file(path);
          if (const std::string deep = hw::json_depth_error(text); !deep.empty())
            throw std::invalid_argument("--e2e: " + path + ": " + deep);
          const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
          if (doc.is_discarded()) throw std::invalid_argument(path + ": not JSON");
          files.emplace_back(path, hw::sha256_hex(text));
          sources += (sources.empty() ? "" : ", ") + path;
          std::vector<workloads::E2eRow> rows;
          try {
            rows = workloads::compare_e2e(doc, fitted, &cache);
          } catch (const std::exception& e) {
            throw std::invalid_argument("--e2e: " + path + ": " + e.what());
          }
          for (const auto& row : rows) {
            if (row.bound == "host" && row.dispatches > 0 && row.host_busy_s > 0 &&
                !row.host_slowed && !models::is_held_out(row.id))
              implied.push_back(row.measured_s / row.host_busy_s);
          }
        }
        if (!implied.empty()) {
          models::FittedParam p;
          p.name = "host_python_scale";
          p.before = gpu.param(p.name);
          // Least squares in log space, as the other fitted figures: the geometric mean. The
          // cases fall in two groups (the Llama steps' implied factor ~1.07-1.14 and the DiT
          // family's ~0.93-1.03 over the interleaved runs); the median would sit on whichever
          // group has more training cases.
          double log_sum = 0;
          for (double x : implied) log_sum += std::log(x);
          p.value = std::exp(log_sum / static_cast<double>(implied.size()));
          p.method = "direct measurement";
          p.records = static_cast<int>(implied.size());
          p.residual =
              implied.size() > 1
                  ? (models::percentile(implied, 90) - models::percentile(implied, 10)) / p.value
                  : 0.0;
          p.sources = sources +
                      " (host-bound eager steps at nominal host speed: measured / predicted host "
                      "time)";
          res.params.push_back(p);
        }
      }
      const std::filesystem::path out_dir = std::filesystem::absolute(a->out).parent_path();
      const std::string rel_base =
          std::filesystem::relative(std::filesystem::absolute(base_path), out_dir).string();
      const std::string stem = std::filesystem::path(base_path).stem().string();
      std::string command = "ridge calibrate";
      for (const auto& f : a->files) command += " " + f;
      for (const auto& e : a->exclude) command += " --exclude " + e;
      for (const auto& f : a->fix) command += " --fix " + f;
      if (!a->attention.empty()) command += " --attention " + a->attention;
      for (const auto& e : a->e2e) command += " --e2e " + e;
      command += " --gpu " + a->gpu + " --out " + a->out;
      const std::string yaml =
          models::calibrated_overlay_yaml(rel_base, stem + "-calibrated", res, command);
      // The overlay must load before it replaces anything: checked as the temporary beside the
      // target (its base path is relative to that directory), which a failure removes.
      OutputSet out;
      out.add(a->out, yaml);
      out.commit([](const std::vector<std::string>& temps) { (void)hw::load_gpu_spec(temps[0]); });
      Table t({"parameter", "before", "fitted", "method", "records", "residual"});
      nlohmann::json params = nlohmann::json::array();
      for (const auto& p : res.params) {
        t.row({p.name, fmt::format("{:.4g}", p.before), fmt::format("{:.4g}", p.value), p.method,
               fmt::format("{}", p.records), fmt::format("{:.4f}", p.residual)});
        params.push_back({{"name", p.name},
                          {"before", p.before},
                          {"value", p.value},
                          {"method", p.method},
                          {"records", p.records},
                          {"residual", p.residual},
                          {"sources", p.sources}});
      }
      const std::string text = fmt::format(
          "calibrated {} on {} training records ({} held out): rms log error {:.4f} -> {:.4f} in "
          "{} iterations\n{}\nwrote {}\n{}",
          gpu.name, res.train_records, res.held_out_records, res.train_rms_before,
          res.train_rms_after, res.iterations, t.str(), a->out, provenance_text(files));
      emit(as_json->count() > 0, text,
           {{"gpu", gpu.name},
            {"out", a->out},
            {"train_records", res.train_records},
            {"held_out_records", res.held_out_records},
            {"train_rms_before", res.train_rms_before},
            {"train_rms_after", res.train_rms_after},
            {"params", params},
            {"provenance", provenance(files)}});
      return 0;
    };
  });
}

void register_compare(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("compare", "predicted vs measured, per case and per op class");
  struct Args {
    std::vector<std::string> files;
    std::string gpu = "h200";
    std::string mode = "fast";
    std::string csv;
    int worst = 10;
    std::vector<std::string> exclude;
    CollectiveCompareArgs coll;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("--system", a->coll.system,
                  "collectives: simulate on this system (validate/ collective records, or "
                  "nccl-tests' text output with --op)");
  cmd->add_option("--op", a->coll.op, "collectives: the op of an nccl-tests output");
  cmd->add_option("--gpus", a->coll.gpus, "collectives: ranks, where the file does not say");
  cmd->add_flag("--no-nvls", a->coll.no_nvls, "collectives: NVLS off (NCCL_NVLS_ENABLE=0)");
  cmd->add_option("--host-issue-us", a->coll.host_issue_us,
                  "collectives: host time per rank per call when one thread issued every rank")
      ->check(finite_in(0, 1e6));
  cmd->add_flag("--rows", a->coll.all_rows, "collectives: list every measurement");
  cmd->add_option("records", a->files, "measurement record files (ridge.records/1 JSON)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--exclude", a->exclude,
                  "leave out records whose id starts with this (repeatable)");
  cmd->add_option("--gpu", a->gpu, "GPU config (e.g. configs/hw/h200-sxm-141gb.calibrated.yaml)")
      ->capture_default_str();
  cmd->add_option("--mode", a->mode, "fast or detailed")
      ->check(CLI::IsMember({"fast", "detailed"}))
      ->capture_default_str();
  cmd->add_option("--csv", a->csv, "also write every case as CSV to this file");
  cmd->add_option("--worst", a->worst, "how many of the worst cases to list")
      ->capture_default_str();
  auto* held = cmd->add_flag("--held-out")->description("only the held-out (test) split");
  auto* md = cmd->add_flag("--markdown")->description("print the per-class table as Markdown");
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, a, held, md, as_json] {
    action = [=] {
      if (!a->coll.system.empty()) {
        CollectiveCompareArgs c = a->coll;
        c.files = a->files;
        c.markdown = md->count() > 0;
        c.json = as_json->count() > 0;
        return compare_collectives_command(c);
      }
      std::vector<std::pair<std::string, std::string>> files;
      const auto records = read_all(a->files, a->exclude, files);
      if (!a->csv.empty()) check_output_target(a->csv);
      const hw::GpuSpec gpu = hw::find_gpu(a->gpu);
      files.insert(files.begin(), gpu.files.begin(), gpu.files.end());
      const auto c = models::compare(gpu, records, parse_mode(a->mode), held->count() > 0);
      // Records not compared, said rather than dropped: ops outside the vocabulary (a typo or a
      // microbenchmark Ridge does not predict) and host-side timings.
      std::map<std::string, int> skipped;
      for (const auto& r : records) {
        if (r.spec) continue;
        if (!models::find_op(r.op))
          ++skipped[fmt::format("{}: op '{}' is not in the vocabulary (ridge describe ops)", r.file,
                                r.op)];
        else
          ++skipped[fmt::format("{}: op '{}' timed on the host (method: host)", r.file, r.op)];
      }
      std::string not_compared;
      nlohmann::json skipped_json = nlohmann::json::array();
      for (const auto& [why, n] : skipped) {
        not_compared += fmt::format("not compared: {} record(s): {}\n", n, why);
        skipped_json.push_back({{"records", n}, {"reason", why}});
      }
      std::cerr << not_compared;
      if (!a->csv.empty()) {
        std::string csv = "id,op,class,held_out,measured_us,predicted_us,error,bound\n";
        for (const auto& r : c.rows)
          csv += fmt::format("{},{},{},{},{:.3f},{:.3f},{:.4f},{}\n", r.id, r.op, r.op_class,
                             r.held_out ? 1 : 0, r.measured_s * 1e6, r.predicted_s * 1e6, r.error,
                             r.bound);
        write_file_atomically(a->csv, csv);
      }
      std::string text;
      if (md->count() > 0) {
        text +=
            "| op class | cases | median abs error | p90 abs error | max abs error "
            "|\n|---|---:|---:|---:|---:|\n";
        for (const auto& s : c.classes)
          text += fmt::format("| {} | {} | {} | {} | {} |\n", s.op_class, s.cases,
                              pct(s.median_abs), pct(s.p90_abs), pct(s.max_abs));
      } else {
        Table t({"op class", "cases", "median |err|", "p90 |err|", "max |err|"});
        for (const auto& s : c.classes)
          t.row({s.op_class, fmt::format("{}", s.cases), pct(s.median_abs), pct(s.p90_abs),
                 pct(s.max_abs)});
        text += fmt::format("{} ({} mode){}: predicted vs measured\n", gpu.name, a->mode,
                            held->count() ? ", held-out split" : "");
        text += t.str();
        std::vector<models::ComparisonRow> rows = c.rows;
        std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
          return std::fabs(x.error) > std::fabs(y.error);
        });
        Table w({"worst cases", "measured", "predicted", "error", "bound"});
        for (int i = 0; i < a->worst && i < static_cast<int>(rows.size()); ++i)
          w.row({rows[i].id, fmt_time(rows[i].measured_s), fmt_time(rows[i].predicted_s),
                 fmt::format("{:+.1f}%", 100 * rows[i].error), rows[i].bound});
        text += "\n" + w.str() + "\n" + provenance_text(files);
      }
      nlohmann::json j = models::comparison_json(c);
      j["not_compared"] = skipped_json;
      j["gpu"] = gpu.name;
      j["mode"] = a->mode;
      j["provenance"] = provenance(files);
      emit(as_json->count() > 0, text, j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
