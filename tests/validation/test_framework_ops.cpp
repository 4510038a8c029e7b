// Framework ops (models/op_framework) against their PyTorch measurements on the H200
// (validate/data/h200/torch/, validate/prereg/, validate/README.md "Framework ops").
//
// The protocol: set 1 (train) set the parameters; model v1 was frozen and its predictions for set
// 2 committed before set 2 was measured; v2 (fitted on sets 1 and 2) was frozen and its
// predictions for set 3 committed before set 3 was measured; v3 (fitted on sets 1-3) was frozen
// and its predictions for set 4 committed before set 4 was measured; v4 (the parameters sets 1-3
// could not pin down fixed or dropped: validate/torch/identifiability.json) changed the model
// after set 4, so set 4 is no longer a prediction for the model in the tree. The targets of issue
// 18 point 6 are asserted on those pre-registered predictions; each missed target is a
// [!shouldfail] test whose name states the miss (never a looser tolerance).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "hw/gpu_loader.hpp"
#include "models/kernel_model.hpp"
#include "models/op_framework.hpp"
#include "models/op_framework_ident.hpp"
#include "models/records.hpp"

using namespace ridge;

namespace {
const std::string kRoot = RIDGE_SOURCE_DIR;

const hw::GpuSpec& h200() {
  static const hw::GpuSpec g = hw::find_gpu(kRoot + "/configs/hw/h200-sxm-141gb.yaml");
  return g;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

struct Errors {
  std::vector<double> all;                           // |error|
  std::map<std::string, std::vector<double>> by_op;  // |error| per op class
  double median() const { return models::percentile(all, 50); }
  double p90() const { return models::percentile(all, 90); }
  double class_median(const std::string& op) const { return models::percentile(by_op.at(op), 50); }
};

// |predicted - measured| / measured per record, from a predictions file (ridge predict --json).
Errors preregistered(const std::string& set) {
  const auto measured =
      models::read_records(kRoot + "/validate/data/h200/torch/" + set + "/" + set + ".json");
  const auto pred = read_json(kRoot + "/validate/prereg/torch-" + set + "/predictions.json");
  std::map<std::string, double> p;
  for (const auto& r : pred.at("records")) p[r.at("id")] = r.at("timing").at("median_us");
  Errors e;
  for (const auto& r : measured.records) {
    REQUIRE(p.count(r.id) == 1);
    const double err = std::abs(models::relative_error(p[r.id] * 1e-6, r.median_s));
    e.all.push_back(err);
    e.by_op[r.op].push_back(err);
  }
  return e;
}

// The current model's errors on a measured set.
Errors current(const std::string& set) {
  const auto measured =
      models::read_records(kRoot + "/validate/data/h200/torch/" + set + "/" + set + ".json");
  Errors e;
  for (const auto& r : measured.records) {
    REQUIRE(r.spec.has_value());
    const double t = models::predict_kernel(h200(), *r.spec).time_s;
    const double err = std::abs(models::relative_error(t, r.median_s));
    e.all.push_back(err);
    e.by_op[r.op].push_back(err);
  }
  return e;
}
}  // namespace

// ---- set 2: model v1 (1490920), pre-registered in 1e80afd, measured in ae81deb ------------------

TEST_CASE("set 2, model v1 pre-registered: kernels median <= 5% (missed: 5.1%)",
          "[validation][!shouldfail]") {
  CHECK(preregistered("set2").median() <= 0.05);
}

TEST_CASE("set 2, model v1 pre-registered: kernels p90 <= 15% (missed: 21.3%)",
          "[validation][!shouldfail]") {
  CHECK(preregistered("set2").p90() <= 0.15);
}

TEST_CASE(
    "set 2, model v1 pre-registered: every op class median <= 10% (missed: softmax 14.7%, "
    "nll_loss 19.6%)",
    "[validation][!shouldfail]") {
  const Errors e = preregistered("set2");
  for (const auto& [op, v] : e.by_op) {
    INFO(op);
    CHECK(e.class_median(op) <= 0.10);
  }
}

// ---- set 3: model v2 (2651530), pre-registered in e22b01e, measured in e912780 ------------------

TEST_CASE("set 3, model v2 pre-registered: kernels median <= 5% (met: 4.2%)", "[validation]") {
  CHECK(preregistered("set3").median() <= 0.05);
}

TEST_CASE("set 3, model v2 pre-registered: kernels p90 <= 15% (missed: 17.0%)",
          "[validation][!shouldfail]") {
  CHECK(preregistered("set3").p90() <= 0.15);
}

TEST_CASE(
    "set 3, model v2 pre-registered: every op class median <= 10% (missed: layernorm "
    "11.8%)",
    "[validation][!shouldfail]") {
  const Errors e = preregistered("set3");
  CHECK(e.class_median("torch_layernorm") <= 0.10);
}

TEST_CASE("set 3, model v2 pre-registered: op classes other than layernorm within 10% (met)",
          "[validation]") {
  const Errors e = preregistered("set3");
  for (const auto& [op, v] : e.by_op) {
    if (op == "torch_layernorm") continue;
    INFO(op << ": " << e.class_median(op));
    CHECK(e.class_median(op) <= 0.10);
  }
}

// ---- set 4: model v3 (3e78ddf), pre-registered in 29035fc, measured in the commit after --------
// Measured: median 3.8%, p90 12.6%; op-class medians 2.2% (cat) to 6.7% (layernorm).

TEST_CASE("set 4, model v3 pre-registered: kernels median <= 5% (met: 3.8%)", "[validation]") {
  const Errors e = preregistered("set4");
  REQUIRE(e.all.size() == 84);
  CHECK(e.median() <= 0.05);
}

TEST_CASE("set 4, model v3 pre-registered: kernels p90 <= 15% (met: 12.6%)", "[validation]") {
  CHECK(preregistered("set4").p90() <= 0.15);
}

TEST_CASE("set 4, model v3 pre-registered: every op class median <= 10% (met: largest 6.7%)",
          "[validation]") {
  const Errors e = preregistered("set4");
  CHECK(e.by_op.size() == 9);  // all nine torch_* op classes, >= 6 records each
  for (const auto& [op, v] : e.by_op) {
    INFO(op << ": n " << v.size() << ", median " << e.class_median(op));
    CHECK(v.size() >= 6);
    CHECK(e.class_median(op) <= 0.10);
  }
}

// ---- set 5: model v4 (ee1a013), pre-registered in 5933c33, measured in the commit after --------
// Measured: median 3.6%, p90 12.4%; op-class medians 1.3% (strided_copy) to 9.9% (nll_loss).

TEST_CASE("set 5, model v4 pre-registered: kernels median <= 5% (met: 3.6%)", "[validation]") {
  const Errors e = preregistered("set5");
  REQUIRE(e.all.size() == 82);
  CHECK(e.median() <= 0.05);
}

TEST_CASE("set 5, model v4 pre-registered: kernels p90 <= 15% (met: 12.4%)", "[validation]") {
  CHECK(preregistered("set5").p90() <= 0.15);
}

TEST_CASE("set 5, model v4 pre-registered: every op class median <= 10% (met: largest 9.9%)",
          "[validation]") {
  const Errors e = preregistered("set5");
  CHECK(e.by_op.size() == 9);  // all nine torch_* op classes, >= 6 records each
  for (const auto& [op, v] : e.by_op) {
    INFO(op << ": n " << v.size() << ", median " << e.class_median(op));
    CHECK(v.size() >= 6);
    CHECK(e.class_median(op) <= 0.10);
  }
}

// Sets 1-3 are fits for v3 and v4 (they were set on them): a regression guard at the targets'
// budget; measured when v3 was frozen: set 1 3.1% / 12.3%, set 2 2.1% / 8.7%, set 3 2.8% / 8.6%
// (median / p90); v4 (the unidentifiable parameters fixed or dropped, their neighbours re-fitted;
// python3 validate/torch/errors.py): 3.1% / 12.3%, 2.2% / 8.7%, 2.8% / 8.2%; every op class's
// median within 10% (largest: LayerNorm 6.7% on set 2).
TEST_CASE("model v4 on the sets it was fitted on (a fit, not a prediction)", "[validation]") {
  for (const char* set : {"train", "set2", "set3"}) {
    const Errors e = current(set);
    INFO(set << ": median " << e.median() << ", p90 " << e.p90());
    CHECK(e.median() <= 0.05);
    CHECK(e.p90() <= 0.15);
    for (const auto& [op, v] : e.by_op) {
      INFO(op << ": " << e.class_median(op));
      CHECK(e.class_median(op) <= 0.10);
    }
  }
}

// ---- mechanism, derived by hand -----------------------------------------------------------------

TEST_CASE("framework ops: kernel lists and closed forms", "[analytic]") {
  const auto& g = h200();
  auto t_us = [&](const char* kind, std::vector<std::string> kv) {
    return models::predict_kernel(g, models::OpSpec::parse(kind, kv)).time_s * 1e6;
  };
  // Exact GELU over 2^27 bf16 elements is issue-bound: 2^27 x 0.345 cycles / (132 SMs x 1.98 GHz)
  // = 177.17 us (its bytes, 2^27 x 4 B / 4.4 TB/s = 122.0 us, are less), plus 1 us per kernel.
  CHECK(t_us("torch_gelu", {"n=134217728", "dtype=bf16"}) ==
        Approx(1.0 + 134217728.0 * 0.345 / (132 * 1.98e9) * 1e6).epsilon(1e-9));
  // cat of 2 pieces of 16384 x 4096 bf16: reads and writes 2 x 134217728 x 2 B at 4.0 TB/s.
  CHECK(t_us("torch_cat", {"pieces=2", "rows=16384", "cols=4096"}) ==
        Approx(1.0 + 2 * 134217728.0 * 2 / 4.0e12 * 1e6).epsilon(1e-9));
  // nll_loss forward over 32768 rows: rows/16 = 2048 threads clamps to 1024, so 32 iterations;
  // each the larger of 0.44 us and 1024 threads x 40 B at 53 GB/s (0.7728 us).
  CHECK(t_us("torch_nll_loss", {"rows=32768", "vocab=32000"}) ==
        Approx(1.0 + 32 * (1024 * 40.0 / 53e9) * 1e6).epsilon(1e-9));
  // Cross-entropy of bf16 logits in fp32 costs the fp32 cross-entropy plus the widening cast:
  // a non-vectorised copy, max(n / 0.345e12 elements/s, 6 n B / 4.4 TB/s) + 1 us.
  const double n = 4096.0 * 32000;
  CHECK(t_us("torch_cross_entropy", {"rows=4096", "vocab=32000", "logits_dtype=bf16"}) -
            t_us("torch_cross_entropy", {"rows=4096", "vocab=32000"}) ==
        Approx(1.0 + std::max(n / 0.345e12, 6 * n / 4.4e12) * 1e6).epsilon(1e-9));
}

TEST_CASE("framework ops v3: warp softmax and LayerNorm forward closed forms", "[analytic]") {
  const auto& g = h200();
  auto t_us = [&](const char* kind, std::vector<std::string> kv) {
    return models::predict_kernel(g, models::OpSpec::parse(kind, kv)).time_s * 1e6;
  };
  // softmax over 262144 rows of 16 bf16: logical warps of 16 lanes, 2 rows each, two per hardware
  // warp: 4 rows a hardware warp, 65536 of them; 19 registers leave 16 blocks (64 warps) an SM;
  // each lane walks 2 elements. A hardware warp costs 14.28 ns + 2 x (3.811 ns + 151.7 ns / 64)
  // of its SM; 65536 / 132 of them per SM, + 1 us (the bytes, 16.8 MB at 4.4 TB/s, are less).
  CHECK(t_us("torch_softmax", {"rows=262144", "cols=16"}) ==
        Approx(1.0 + 65536.0 / 132 * (14.28 + 2 * (3.811 + 151.7 / 64)) * 1e-3).epsilon(1e-9));
  // LayerNorm forward over 8192 x 3072 bf16: 16 blocks of 128 threads an SM (2112 slots, 3.879
  // waves); a round moves 2112 x 128 threads x 8 B in flight: latency 0.3285 us + that / 5.841
  // TB/s + 0.09548 us (Welford); 2 x 3072 / 512 = 12 rounds and a 1.862 us base a block (v4's
  // values). The rows in flight (13 MB) fit L2, so no spill.
  const double lat = 0.3285e-6 + 2112.0 * 128 * 8 / 5.841e12 + 0.09548e-6;
  CHECK(t_us("torch_layernorm", {"rows=8192", "cols=3072"}) ==
        Approx(1.0 + 8192.0 / 2112 * (1.862 + 12 * lat * 1e6)).epsilon(1e-9));
  // RMSNorm forward (v4: no block base) over the same shape: the same rounds without Welford.
  const double lat_rms = 0.3285e-6 + 2112.0 * 128 * 8 / 5.841e12;
  CHECK(t_us("torch_rmsnorm", {"rows=8192", "cols=3072"}) ==
        Approx(1.0 + 8192.0 / 2112 * (12 * lat_rms * 1e6)).epsilon(1e-9));
  // A strided fp32 copy whose input spans more than 2^31 bytes runs as two kernels (set 3).
  CHECK(models::framework_kernels(
            g, models::OpSpec::parse("torch_strided_copy", {"n=33554432", "stride=32"}))
            .size() == 2);
}

TEST_CASE("framework ops launch the kernels PyTorch launched", "[unit]") {
  // Kernel counts per call in the profiler traces of set 1 (torch 2.11, H200).
  const auto& g = h200();
  auto count = [&](const char* kind, std::vector<std::string> kv) {
    return models::framework_kernels(g, models::OpSpec::parse(kind, kv)).size();
  };
  CHECK(count("torch_rmsnorm", {"rows=8192", "cols=1024", "impl=composed"}) == 8);
  CHECK(count("torch_rmsnorm", {"rows=8192", "cols=1024", "impl=composed", "pass=bwd"}) == 17);
  CHECK(count("torch_rmsnorm", {"rows=8192", "cols=1024", "pass=bwd"}) == 2);
  CHECK(count("torch_cross_entropy", {"rows=4096", "vocab=32000", "logits_dtype=bf16"}) == 3);
  CHECK(count("torch_cross_entropy",
              {"rows=4096", "vocab=32000", "logits_dtype=bf16", "pass=bwd"}) == 4);
  CHECK(count("torch_softmax", {"rows=4096", "cols=2048", "pass=bwd"}) == 2);
  // Every record of the three sets: the model's kernel count is the measured one, except where
  // PyTorch's TensorIterator splits an elementwise kernel whose tensors span more than 2^31 bytes
  // into two (fills and casts of 4 GB logits): the model launches one.
  int compared = 0;
  for (const char* set : {"train", "set2", "set3"}) {
    const auto f =
        models::read_records(kRoot + "/validate/data/h200/torch/" + set + "/" + set + ".json");
    for (const auto& r : f.records) {
      if (!r.spec || !models::is_framework_op(r.op)) continue;
      const auto c = models::framework_op_cost(*r.spec);
      // (v3 models the strided copy's split; the fills and casts of large logits stay one.)
      const double reads = r.op == "torch_strided_copy" ? 0 : c.bytes_read * 2;
      if (std::max(reads, c.bytes_written) > 2147483648.0) continue;
      ++compared;
      INFO(r.id);
      CHECK(models::framework_kernels(g, *r.spec).size() == r.raw.at("kernels").size());
    }
  }
  CHECK(compared >= 290);  // 293 of the 337 framework-op records
}

TEST_CASE("framework ops are in the vocabulary with checked parameters", "[unit]") {
  for (const char* k :
       {"torch_softmax", "torch_nll_loss", "torch_cross_entropy", "torch_layernorm",
        "torch_rmsnorm", "torch_gelu", "torch_transpose_copy", "torch_cat", "torch_strided_copy"})
    CHECK(models::find_op(k) != nullptr);
  CHECK_THROWS_WITH(models::OpSpec::parse("torch_gelu", {"n=1024", "approximate=fast"}),
                    Catch::Contains("approximate: expected one of none|tanh, got 'fast'"));
}

// ---- identifiability of the parameters (models/op_framework_ident) ------------------------------

namespace {
std::vector<models::Record> fit_records() {
  std::vector<models::Record> out;
  for (const char* set : {"train", "set2", "set3"}) {
    auto f = models::read_records(kRoot + "/validate/data/h200/torch/" + set + "/" + set + ".json");
    for (auto& r : f.records) out.push_back(std::move(r));
  }
  return out;
}

// The records of `op` (and `pass`) in sets 1-3 with their measured kernels replaced by the
// model's times under `planted`, each scaled by a deterministic +-3% pattern (the noise).
std::vector<models::Record> synthetic(const std::string& op, const std::string& pass,
                                      const models::FwParams& planted) {
  std::vector<models::Record> out;
  int i = 0;
  for (auto r : fit_records()) {
    if (r.op != op || r.params.value("pass", "fwd") != pass) continue;
    const auto ks = models::framework_kernels(h200(), *r.spec, planted);
    nlohmann::json kernels = nlohmann::json::array();
    double sum = 0;
    for (const auto& k : ks) {
      const double t = k.time_s * std::exp(0.03 * std::sin(1.7 * ++i));
      kernels.push_back({{"name", k.name}, {"median_us", t * 1e6}});
      sum += t;
    }
    r.raw["kernels"] = kernels;
    r.median_s = sum;
    out.push_back(std::move(r));
  }
  return out;
}

const models::FwParamIdent& param(const models::FwIdentResult& r, const std::string& name) {
  for (const auto& p : r.params)
    if (p.name == name) return p;
  FAIL("no parameter " << name);
  return r.params.front();
}
}  // namespace

TEST_CASE("framework identifiability recovers a planted parameter from synthetic records",
          "[analytic]") {
  // Plant the GELU exact-forward issue cost 20% above the model's (0.414 cycles an element
  // instead of 0.345) in the measured GELU forward records of sets 1-3, with +-3% noise; a fit of
  // that one parameter from the model's value must find it again, and the interval at the fit
  // must contain it. The bf16 records above ~8 Mi elements are issue-bound, so their time is
  // proportional to the parameter: the noise (rms ~2%) over 9 such records puts the 95% interval
  // near +-2%; the recovered value must lie within 3% (a tolerance beyond that interval).
  models::FwParams planted;
  planted.gelu_exact_fwd_cpe = 0.345 * 1.2;
  const auto recs = synthetic("torch_gelu", "fwd", planted);
  REQUIRE(recs.size() >= 12);
  const models::FwParams fit =
      models::framework_refit(h200(), recs, models::FwParams{}, {"gelu_exact_fwd_cpe"});
  CHECK(fit.gelu_exact_fwd_cpe == Approx(planted.gelu_exact_fwd_cpe).epsilon(0.03));
  const auto id = models::framework_identifiability(h200(), recs, fit);
  const auto& p = param(id, "gelu_exact_fwd_cpe");
  CHECK(p.ci_lo <= planted.gelu_exact_fwd_cpe);
  CHECK(p.ci_hi >= planted.gelu_exact_fwd_cpe);
  CHECK(p.verdict == "pinned");
  // A parameter no GELU kernel uses (the LayerNorm forward base) is pinned by nothing, and the
  // scan cannot bound it: unidentifiable.
  CHECK(param(id, "ln_fwd_base_s").pinning == 0);
  CHECK(param(id, "ln_fwd_base_s").verdict == "unidentifiable");
}

TEST_CASE("framework identifiability: a threshold is bounded by its scan", "[analytic]") {
  // The LayerNorm grad-input spill threshold moves a record only when the record crosses it, so
  // the derivative sees nothing (no residual pins it) and the classification falls to the
  // conditional scan. Planted at 0.5077 with noise-free data, the scan's range must contain it.
  models::FwParams planted;
  const auto recs = synthetic("torch_layernorm", "bwd", planted);
  const auto id = models::framework_identifiability(h200(), recs, planted);
  const auto& p = param(id, "lngi_keep_fraction");
  CHECK(p.pinning == 0);
  CHECK(p.verdict_by == "scan");
  CHECK(p.scan_lo <= 0.5077);
  CHECK(p.scan_hi >= 0.5077);
  CHECK(p.scan_hi < 10 * 0.5077);
}

// validate/torch/identifiability.json is the output of
//   ridge calibrate validate/data/h200/torch/{train/train,set2/set2,set3/set3}.json
//     --framework-ops --json
// (the table in validate/README.md and docs/framework-ops.md); recomputing it must give the
// committed values (1e-9 relative: JSON keeps 17 digits) and verdicts.
TEST_CASE("the committed framework-op identifiability table is what the command computes",
          "[validation]") {
  const auto committed = read_json(kRoot + "/validate/torch/identifiability.json");
  const auto now = models::framework_identifiability(h200(), fit_records());
  REQUIRE(committed.at("params").size() == now.params.size());
  CHECK(committed.at("residuals").get<int>() == now.residuals);
  for (size_t i = 0; i < now.params.size(); ++i) {
    const auto& c = committed.at("params")[i];
    const auto& p = now.params[i];
    INFO(p.name);
    CHECK(c.at("name") == p.name);
    CHECK(c.at("value").get<double>() == Approx(p.value).epsilon(1e-9));
    CHECK(c.at("verdict") == p.verdict);
    CHECK(c.at("pinning_residuals").get<int>() == p.pinning);
    if (std::isfinite(p.ci_hi)) {
      CHECK(c.at("ci_lo").get<double>() == Approx(p.ci_lo).epsilon(1e-9));
      CHECK(c.at("ci_hi").get<double>() == Approx(p.ci_hi).epsilon(1e-9));
    } else {
      CHECK(c.at("ci_hi").is_null());
    }
    CHECK(c.at("scan_lo").get<double>() == Approx(p.scan_lo).epsilon(1e-9));
    CHECK(c.at("scan_hi").get<double>() == Approx(p.scan_hi).epsilon(1e-9));
  }
}
