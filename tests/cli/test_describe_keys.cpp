// `ridge describe study|model|cases|records` against their loaders: every key a loader asks for
// is in the describe table, and every key of the table is asked for (the loaders run with key
// recording on over every shipped study and model, a study with one workload of each kind, and a
// records and a cases file). A key added to a loader without a table row fails the file's load
// (file_key/record key lookups throw std::logic_error) or this test; a stale row fails this test.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "hw/config.hpp"
#include "hw/key_record.hpp"
#include "models/cases.hpp"
#include "models/records.hpp"
#include "workloads/file_keys.hpp"
#include "workloads/model_config.hpp"
#include "workloads/parallel_config.hpp"
#include "workloads/study.hpp"

namespace fs = std::filesystem;
using namespace ridge;

namespace {

// Records every key the loaders ask for while alive.
struct Recording {
  std::set<std::string> keys;
  Recording() { hw::record_config_keys(&keys); }
  ~Recording() { hw::record_config_keys(nullptr); }
};

std::set<std::string> table_paths(const std::vector<workloads::FileKey>& t) {
  std::set<std::string> s;
  for (const auto& k : t) s.insert(k.path);
  return s;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("ridge-describe-keys-" + name);
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("describe study: the study loader asks for exactly the table's keys", "[unit]") {
  // One workload of each kind (the loader asks for a kind's keys only for that kind), plus a
  // single `workload:` and a what_if; the shipped studies add parallel blocks.
  const std::string model = std::string(RIDGE_SOURCE_DIR) + "/configs/models/gpt2-small.yaml";
  const std::string wan = std::string(RIDGE_SOURCE_DIR) + "/configs/models/wan2.1-t2v-1.3b.yaml";
  const std::string all = write_temp("all.yaml", "study:\n  question: q\n  model: " + model +
                                                     "\n  gpu: h200\n  mode: fast\n"
                                                     "  what_if: [gemm*2]\n  workloads:\n"
                                                     "    - {kind: train}\n    - {kind: prefill}\n"
                                                     "    - {kind: decode, context: 8}\n");
  const std::string diff =
      write_temp("diff.yaml", "study:\n  model: " + wan + "\n  workload: {kind: diffusion}\n");
  std::set<std::string> asked;
  {
    Recording r;
    (void)workloads::load_study(all);
    (void)workloads::load_study(diff);
    for (const auto& e :
         fs::directory_iterator(std::string(RIDGE_SOURCE_DIR) + "/configs/studies")) {
      std::ifstream in(e.path());
      const std::string text((std::istreambuf_iterator<char>(in)), {});
      if (text.find("\nkind: serve") != std::string::npos) continue;  // ridge describe serve
      if (text.find("\n  plan:") != std::string::npos) continue;      // ridge describe plan
      (void)workloads::load_study(e.path().string());
    }
    asked = r.keys;
  }
  std::set<std::string> study, parallel;
  for (std::string k : asked) {
    // The model, GPU and system files a study names are read too: their keys are other tables'.
    if (k != "study" && !k.starts_with("study.")) continue;
    if (k.starts_with("study.workload.")) k = "study.workloads[]." + k.substr(15);
    if (k.starts_with("study.parallel."))
      parallel.insert(k.substr(15));
    else
      study.insert(k);
  }
  CHECK(study == table_paths(workloads::study_keys()));
  // The parallel block's own table (ridge describe parallel) holds every key its reader asked.
  std::set<std::string> parallel_table;
  for (const auto& k : workloads::parallel_keys()) parallel_table.insert(k.key);
  for (const auto& k : parallel) {
    INFO(k);
    CHECK(parallel_table.count(k.substr(0, k.find('.'))) == 1);
  }
}

TEST_CASE("describe model: the model loader asks for exactly the table's keys", "[unit]") {
  std::set<std::string> asked;
  {
    Recording r;
    for (const auto& e : fs::directory_iterator(std::string(RIDGE_SOURCE_DIR) + "/configs/models"))
      (void)workloads::load_model_config(e.path().string());
    asked = r.keys;
  }
  CHECK(asked == table_paths(workloads::model_keys()));
}

TEST_CASE("describe cases and records: their readers read exactly the table's keys", "[unit]") {
  std::set<std::string> asked;
  {
    Recording r;
    std::vector<std::string> errors;
    (void)models::parse_cases("- {op: gemm, params: {m: 8, n: 8, k: 8}}\n", "c.yaml", errors);
    CHECK(errors.empty());
    asked = r.keys;
  }
  std::set<std::string> cases;
  for (const auto& k : models::case_keys()) cases.insert(k.key);
  CHECK(asked == cases);
  {
    Recording r;
    (void)models::parse_records(
        R"({"schema": "ridge.records/1", "records": [{"id": "a", "op": "gemm",
            "params": {"m": 8, "n": 8, "k": 8}, "timing": {"median_us": 3, "method": "kernel"}}]})",
        "r.json");
    asked = r.keys;
  }
  std::set<std::string> records;
  for (const auto& k : models::record_keys()) records.insert(k.path);
  CHECK(asked == records);
}

TEST_CASE("a case key outside the table is an error with a suggestion", "[config-errors]") {
  std::vector<std::string> errors;
  const auto cases = models::parse_cases(
      "- {op: gemm, parms: {m: 8, n: 8, k: 8}}\n- {op: gemm, params: {m: 8, n: 8, k: 8}}\n",
      "c.yaml", errors);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].find("c.yaml: case 0: unknown key 'parms' (did you mean 'params'?)") == 0);
  CHECK(cases.size() == 1);
}
