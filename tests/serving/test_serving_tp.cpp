// Tensor-parallel serving: the per-GPU KV budget and the iteration's collectives derived by hand,
// and the study errors a tp split can meet.
#include <catch2/catch.hpp>

#include <string>

#include "hw/config.hpp"
#include "hw/gpu_loader.hpp"
#include "workloads/serving.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

const TransformerConfig& llama70b() {
  static const TransformerConfig m = load_model_config("llama3-70b").transformer();
  return m;
}

std::string data(const std::string& name) {
  return std::string(RIDGE_SERVING_TEST_DATA) + "/" + name;
}

}  // namespace

// Llama-3 70B (80 layers, 64 query heads, 8 KV heads, head_dim 128): at tp 4 a GPU holds 2 KV
// heads, so a 16-token block is 2 (K, V) x 80 x 2 x 128 x 2 B x 16 = 1,310,720 B; at tp 16 each GPU
// keeps one (replicated) KV head: 655,360 B. Weights: 2 B x 70.6e9 (Meta's model card) / 4 =
// 35.3 GB; the 1% tolerance covers the card's rounding of the parameter count.
TEST_CASE("tp serving: per-GPU weights and KV block bytes", "[analytic][serving]") {
  SchedulerSpec s;
  const auto gpu = hw::find_gpu("h200");
  const KvBudget k4 = kv_budget(llama70b(), gpu, s, 4);
  CHECK(k4.bytes_per_block == 1310720.0);
  CHECK(k4.weights_bytes == Approx(35.3e9).epsilon(0.01));
  CHECK(kv_budget(llama70b(), gpu, s, 16).bytes_per_block == 655360.0);
  // More GPUs leave more room per GPU: the KV budget grows with tp.
  CHECK(k4.kv_bytes > kv_budget(llama70b(), gpu, s, 2).kv_bytes);
  CHECK(rank_heads(llama70b(), 8).q == 8);
  CHECK(rank_heads(llama70b(), 8).kv == 1);
}

// An iteration at tp runs two all-reduces per layer (after O and after down) plus the
// vocabulary-parallel embedding's, all of T x d x 2 B, and one gather of the sampled rows'
// logits (rows x vocab x 2 B). With constant collective times c (all-reduce) and g (gather), the
// iteration's GPU time grows by exactly (2 x 80 + 1) c + g over the same split with free
// collectives.
TEST_CASE("tp serving: an iteration pays 2L + 1 all-reduces and one gather",
          "[analytic][serving]") {
  const auto gpu = hw::find_gpu("h200");
  const double c = 7e-6, g = 11e-6;
  std::vector<double> ar_bytes;
  EngineCost free_coll, paid;
  free_coll.tp = paid.tp = 4;
  free_coll.cuda_graph = paid.cuda_graph = false;
  free_coll.bucketing = paid.bucketing = false;
  free_coll.tp_collective_s = [](double, bool) { return 0.0; };
  paid.tp_collective_s = [&](double bytes, bool gather) {
    if (!gather) ar_bytes.push_back(bytes);
    return gather ? g : c;
  };
  IterationCostModel a(llama70b(), gpu, free_coll), b(llama70b(), gpu, paid);
  BatchShape batch;
  batch.decodes = 32;
  batch.decode_context_sum = 32 * 1000;
  batch.decode_context_max = 1000;
  const double d = b.exact(batch).gpu_s - a.exact(batch).gpu_s;
  CHECK(d == Approx(161 * c + g).epsilon(1e-9));
  REQUIRE_FALSE(ar_bytes.empty());
  CHECK(ar_bytes.front() == 32.0 * 8192 * 2);  // T = 32 tokens x d = 8192 x bf16
  // And the per-rank work is smaller than one GPU's: the tp-1 model's iteration is slower.
  EngineCost one;
  one.cuda_graph = false;
  one.bucketing = false;
  IterationCostModel single(llama70b(), gpu, one);
  CHECK(a.exact(batch).gpu_s < single.exact(batch).gpu_s);
}

TEST_CASE("tp serving: a replica of 4 GPUs on a DGX H200 runs and counts 4 GPUs",
          "[unit][serving]") {
  ServeStudy s = load_serve_study(data("tp3-study.yaml"));
  s.tp = 4;
  const ServeRun r = run_serve(s);
  CHECK(r.result.requests == 10);
  CHECK(r.gpu.name.find("H200") != std::string::npos);
  CHECK(serve_json(r)["tp"] == 4);
}

TEST_CASE("tp serving: bad splits are errors", "[config-errors][serving]") {
  // tp without a system; gpu given is fine alone, so only the missing system is reported.
  try {
    load_serve_study(data("bad-tp-study.yaml"));
    FAIL("expected an error");
  } catch (const hw::ConfigException& e) {
    REQUIRE(e.errors().size() == 1);
    CHECK(e.errors()[0].str().find("bad-tp-study.yaml:5:7: serve.tp: tp > 1 needs `system:`") !=
          std::string::npos);
  }
  // 3 does not divide Llama-3 70B's 64 heads.
  CHECK_THROWS_WITH(run_serve(load_serve_study(data("tp3-study.yaml"))),
                    Catch::Contains("does not divide the model's 64 attention heads"));
}
