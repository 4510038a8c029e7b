// The model-builder options of issue 18 point 5 (workloads/model_config, workloads/transformer):
// activation gelu (exact), norm_impl fused|composed, position none, loss_dtype fp32.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "hw/config.hpp"
#include "workloads/model_config.hpp"
#include "workloads/transformer.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {
const std::string kData = RIDGE_WORKLOADS_TEST_DATA;

std::map<std::string, int> op_kinds(const Graph& g) {
  std::map<std::string, int> n;
  for (std::size_t i = 0; i < g.size(); ++i) ++n[g.op(static_cast<int>(i)).op.kind()];
  return n;
}
}  // namespace

TEST_CASE("framework options are read and change the op sequence", "[unit]") {
  const TransformerConfig m = load_model_config(kData + "/framework_options.yaml").transformer();
  CHECK(m.activation == "gelu");
  CHECK(m.norm_impl == "fused");
  CHECK(m.position == "none");
  CHECK(m.loss_dtype == "fp32");
  TrainOptions o;
  o.seq = 256;
  const auto ops = op_kinds(build_train_step(m, o));
  // Per layer one GELU forward and one backward (2 layers); norms: 2 per layer + the final one,
  // each forward and backward; one cross-entropy forward and one backward.
  CHECK(ops.at("torch_gelu") == 4);
  CHECK(ops.at("torch_rmsnorm") == 2 * (2 * 2 + 1));
  CHECK(ops.at("torch_cross_entropy") == 2);
  // position none: neither learned position embeddings nor rotary kernels.
  const Graph g = build_train_step(m, o);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const std::string& name = g.op(static_cast<int>(i)).name;
    CHECK(name.find("rope") == std::string::npos);
    CHECK(name.find("embed.positions") == std::string::npos);
  }
}

TEST_CASE("the defaults keep the op sequence the e2e runs were matched with", "[unit]") {
  // gpt2-small: gelu_tanh, layernorm fused, learned positions, bf16 loss: no torch_* op at all.
  const TransformerConfig m = load_model_config("gpt2-small").transformer();
  CHECK(m.norm_impl == "fused");
  CHECK(m.loss_dtype == "bf16");
  TrainOptions o;
  o.seq = 128;
  for (const auto& [kind, n] : op_kinds(build_train_step(m, o)))
    CHECK(kind.rfind("torch_", 0) == std::string::npos);
  // llama3-8b: rmsnorm defaults to the composed (Hugging Face) form.
  CHECK(load_model_config("llama3-8b").transformer().norm_impl == "composed");
}

TEST_CASE("a composed layernorm is refused at its position", "[config-errors]") {
  try {
    load_model_config(kData + "/bad_norm_impl.yaml");
    FAIL("expected a ConfigException");
  } catch (const hw::ConfigException& e) {
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("bad_norm_impl.yaml:11:14: model.norm_impl: composed is the "
                               "Hugging Face RMSNorm's form"));
  }
}
