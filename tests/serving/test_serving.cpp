// Serving: scheduler schedules derived by hand, closed forms (idle TTFT, Little's law), the
// bucketing error, streaming percentiles, preemption, and properties (load vs latency,
// determinism).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "hw/gpu_loader.hpp"
#include "workloads/executor.hpp"
#include "workloads/kineto_reader.hpp"
#include "workloads/serving.hpp"
#include "workloads/transformer.hpp"

using namespace ridge;
using namespace ridge::workloads;

namespace {

const hw::GpuSpec& h200() {
  static const hw::GpuSpec g = hw::find_gpu("h200");
  return g;
}
const TransformerConfig& llama8b() {
  static const TransformerConfig m = load_model_config("llama3-8b").transformer();
  return m;
}

Request req(std::int64_t id, double t, long long prompt, long long out, int priority = 0) {
  Request r;
  r.id = id;
  r.arrival_s = t;
  r.prompt_tokens = prompt;
  r.output_tokens = out;
  r.priority = priority;
  return r;
}

ServeResult serve(std::vector<Request> rs, SchedulerSpec s, EngineCost e = {}) {
  if (e.capture_sizes.empty()) e.capture_sizes = vllm_capture_sizes(s.max_num_seqs);
  auto src = list_source(std::move(rs));
  IterationCostModel cost(llama8b(), h200(), e);
  ServeOptions o;
  o.scheduler = s;
  o.max_context = llama8b().max_positions;
  o.record_requests = true;
  return simulate_serving(*src, cost, llama8b(), h200(), o);
}

// A measured serving record: PATH, or PATH.gz (the records are committed gzipped).
nlohmann::json read_record(const std::string& path) {
  std::ifstream in(path);
  if (!in && std::ifstream(path + ".gz"))
    return nlohmann::json::parse(read_maybe_gzip(path + ".gz"));
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

std::map<std::int64_t, RequestRecord> by_id(const ServeResult& r) {
  std::map<std::int64_t, RequestRecord> m;
  for (const auto& x : r.records) m[x.id] = x;
  return m;
}

}  // namespace

// Seed 003 ("Keep inference work moving"): A needs four iterations, B and C two each, two slots.
// An iteration emits one token per sequence in it (the prefill emits the first), so output tokens
// = iterations needed: A 4, B 2, C 2, all waiting at t = 0.
//   static:      {A, B} runs until A's 4th token (B's slot idles for 2), then {C} 2 -> 6
//   iterations. continuous:  1 A,B prefill | 2 A,B decode: B done | 3 A decode + C prefill | 4 A,
//   C: both done
//                -> 4 iterations (C takes B's slot at iteration 3).
//   chunked with a budget above every prompt: the same schedule -> 4.
//   prefill_first (vLLM V0, prefill iterations apart): 1 A,B prefill | 2 A,B: B done | 3 C
//                prefill alone | 4 A, C: C done | 5 A done -> 5.
TEST_CASE("seed 003: continuous batching finishes A, B, C in 4 iterations, static in 6",
          "[analytic][serving]") {
  const std::vector<Request> rs = {req(0, 0, 32, 4), req(1, 0, 32, 2), req(2, 0, 32, 2)};
  SchedulerSpec s;
  s.max_num_seqs = 2;
  s.policy = SchedulerPolicy::kStatic;
  CHECK(serve(rs, s).iterations == 6);
  s.policy = SchedulerPolicy::kContinuous;
  const ServeResult c = serve(rs, s);
  CHECK(c.iterations == 4);
  const auto rec = by_id(c);
  CHECK(rec.at(1).finish_s < rec.at(2).finish_s);       // B leaves at iteration 2
  CHECK(rec.at(0).finish_s == rec.at(2).finish_s);      // A and C both end at iteration 4
  CHECK(rec.at(2).first_token_s > rec.at(1).finish_s);  // C's prefill runs after B left
  s.policy = SchedulerPolicy::kChunked;
  CHECK(serve(rs, s).iterations == 4);
  s.policy = SchedulerPolicy::kPrefillFirst;
  CHECK(serve(rs, s).iterations == 5);
}

// An idle server schedules a request when it arrives, alone: its first token comes after exactly
// one prefill iteration of its prompt; each later token after one decode iteration whose context
// is the prompt plus the tokens already decoded.
TEST_CASE("idle server: TTFT is one prefill, TPOT the mean of its decode iterations",
          "[analytic][serving]") {
  EngineCost e;
  e.bucketing = false;
  e.capture_sizes = vllm_capture_sizes(256);
  SchedulerSpec s;
  const ServeResult r = serve({req(0, 5.0, 512, 3)}, s, e);
  IterationCostModel cost(llama8b(), h200(), e);
  BatchShape pre;
  pre.prefills.push_back({512, 0, true});
  const double prefill = cost.exact(pre).total_s;
  BatchShape d1, d2;
  d1.decodes = d2.decodes = 1;
  d1.decode_context_sum = 512;
  d2.decode_context_sum = 513;
  const double tpot = 0.5 * (cost.exact(d1).total_s + cost.exact(d2).total_s);
  const auto rec = by_id(r).at(0);
  CHECK(rec.first_token_s - rec.arrival_s == Approx(prefill).epsilon(1e-12));
  CHECK((rec.finish_s - rec.first_token_s) / 2 == Approx(tpot).epsilon(1e-12));
  // The engine adds its CPU time to every iteration, and a decode of one sequence replays a graph.
  CHECK(cost.exact(d1).graph);
  CHECK(cost.exact(d1).cpu_s == e.cpu_overhead_s);
}

// hf_eager: the first SDPA call at an attention shape new to the process pays a host build
// (EngineCost::sdpa_new_shape_*; validate/data/h200/sdpa_shapes). Derivation: an iteration's
// total is cpu_overhead + the executor step + the builds of its new shapes, so the first
// iteration of a shape minus a repeat is exactly the figure, and a repeat pays none. The key is
// the whole (batch, q_len, kv_len): a new kv_len at a seen batch and a new batch at a seen kv_len
// each pay once; shapes listed as seen before the first iteration (a warm-up) do not. Exact
// equality up to floating-point summation (1e-12 relative): no timing model enters the difference.
TEST_CASE("hf_eager: a new attention shape pays one SDPA graph build", "[unit][serving]") {
  EngineCost e;
  e.hf_eager = true;
  e.bucketing = false;
  e.sdpa_new_shape_decode_s = 38.4e-3;
  e.sdpa_new_shape_prefill_s = 0.446;
  e.sdpa_seen_shapes = {{4, 1, 301}};
  IterationCostModel cost(llama8b(), h200(), e);
  const auto decode = [](long long n, long long ctx) {
    BatchShape b;
    b.decodes = n;
    b.decode_context_max = ctx;
    b.decode_context_sum = n * ctx;
    return b;
  };
  const double first = cost.time(decode(8, 300)).total_s;  // (8, 1, 301): new
  const double again = cost.time(decode(8, 300)).total_s;
  CHECK(first - again == Approx(38.4e-3).epsilon(1e-9));
  CHECK(cost.time(decode(8, 300)).host_s == 0);
  CHECK(cost.time(decode(8, 301)).host_s == Approx(38.4e-3));  // new kv_len, seen batch
  CHECK(cost.time(decode(2, 300)).host_s == Approx(38.4e-3));  // new batch, seen kv_len
  CHECK(cost.time(decode(4, 300)).host_s == 0);                // listed as seen (a warm-up)
  BatchShape pre;
  pre.prefills.assign(8, PrefillChunk{256, 0, true});
  CHECK(cost.time(pre).host_s == Approx(0.446));  // (8, 256, 256): new
  CHECK(cost.time(pre).host_s == 0);
  CHECK(cost.sdpa_shapes_seen() == 5);
  // Disabled (cuDNN SDP off): no cost at all.
  e.sdpa_new_shape_decode_s = e.sdpa_new_shape_prefill_s = 0;
  IterationCostModel off(llama8b(), h200(), e);
  CHECK(off.time(decode(8, 300)).total_s == Approx(again).epsilon(1e-12));
}

// hf_graph (EngineCost::hf_graph): a decode-only batch replays the graph captured for
// (batch padded up to the next capture size, kv_len rounded up to the window). Derivations: (1)
// two batches that pad to the same capture size and window are the same replay, so their times
// are equal exactly (11 decodes at context 300 and 16 at 318: both (16, kv 320)); (2) one more
// cached token that crosses the window boundary (context 320: kv 321 -> 384) reads more KV, so it
// costs more; (3) graphs were captured (and their SDPA builds paid) before the first iteration,
// so a replay at a shape never seen pays no build, while (4) a batch above the largest capture
// size runs eagerly and pays the build of its new shape; (5) a replay costs the executor's
// graph-launched decode step at the padded shape plus cpu_overhead, no more (the executor's own
// step, as a check that the padding rule feeds it (16, 320) and not (11, 301)); (6) for a
// host-bound eager step (an 8B model at batch 1: ~300 launches) the graph is faster.
TEST_CASE("hf_graph: decode batches replay graphs per capture size and KV window",
          "[unit][serving]") {
  const auto decode = [](long long n, long long ctx) {
    BatchShape b;
    b.decodes = n;
    b.decode_context_max = ctx;
    b.decode_context_sum = n * ctx;
    return b;
  };
  EngineCost e;
  e.hf_eager = true;
  e.hf_graph = true;
  e.graph_kv_window = 64;
  e.capture_sizes = {1, 2, 4, 8, 16};
  e.cpu_overhead_s = 0.2e-3;
  e.sdpa_new_shape_decode_s = 38.4e-3;
  IterationCostModel cost(llama8b(), h200(), e);
  const auto a = cost.time(decode(11, 300)), b = cost.time(decode(16, 318));
  CHECK(a.graph);
  CHECK(a.padded_decodes == 16);
  CHECK(a.total_s == b.total_s);                                // (1)
  CHECK(cost.time(decode(16, 320)).total_s > a.total_s);        // (2)
  CHECK(a.host_s == 0);                                         // (3)
  CHECK(cost.time(decode(17, 300)).host_s == Approx(38.4e-3));  // (4)
  CHECK_FALSE(cost.time(decode(17, 300)).graph);
  InferenceOptions o;
  o.batch = 16;
  o.context = 319;
  o.max_len = 320;
  o.cuda_graph = true;
  const double step = execute(build_decode_step(llama8b(), o), h200()).step_time_s;
  CHECK(a.total_s == Approx(0.2e-3 + step).epsilon(1e-12));  // (5)
  // A prefill of equal prompts replays its captured graph (argmax and token copy included): no
  // build, the executor's graph step plus cpu_overhead.
  BatchShape pre;
  pre.prefills.assign(1, PrefillChunk{256, 0, true});
  const auto pg = cost.time(pre);
  CHECK(pg.graph);
  CHECK(pg.host_s == 0);
  InferenceOptions po;
  po.batch = 1;
  po.prompt = 256;
  po.max_len = 256;
  po.cuda_graph = true;
  CHECK(pg.total_s ==
        Approx(0.2e-3 + execute(build_prefill(llama8b(), po), h200()).step_time_s).epsilon(1e-12));
  EngineCost eager = e;
  eager.hf_graph = false;
  eager.sdpa_new_shape_decode_s = 0;
  IterationCostModel ec(llama8b(), h200(), eager);
  CHECK(cost.time(decode(1, 319)).total_s < ec.time(decode(1, 319)).total_s);  // (6)
}

// engine.row_move / row_shift: the validation loop's housekeeping (serve_llama.py). Derivations
// on the loop's policy (prefill_first, one prompt per prefill iteration, rows appended in
// admission order, a finished row freed from the last one back with the last row moving in, a
// left shift when the oldest sequence's first column is no longer 0), with the host time of a
// move M and of a shift H added after the iteration (its finishes recorded before it):
// (1) A (3 tokens), B (5), C (2) at t = 0: 1-3 prefill A, B, C (rows A B C, all starting at column
//     0) | 4 decode: C done, the last row: no move | 5 decode: A done at row 0, B moves in (one
//     move); B still starts at 0: no shift | 6, 7 decode: B done. So B finishes exactly M later
//     than with no housekeeping, A and C at the same time.
// (2) A (3 tokens) at 0, B (3) arriving during A's first decode: 1 prefill A | 2 decode (column
//     P + 1) | 3 prefill B, its prompt ending at the write column: B starts at column 1 | 4 decode:
//     A done at row 0, B moves in (M), and B's start 1 > 0: every row shifts (H) | 5 decode: B
//     done. B's finish is later by exactly M + H, and by M alone or H alone with the other 0.
TEST_CASE("row_move and row_shift: the loop's housekeeping delays what follows",
          "[analytic][serving]") {
  SchedulerSpec s;
  s.policy = SchedulerPolicy::kPrefillFirst;
  s.max_num_seqs = 16;
  s.max_batched_tokens = 32;
  EngineCost e;
  e.hf_eager = e.hf_graph = true;
  e.capture_sizes = {1, 2, 4, 8, 16};
  e.cpu_overhead_s = 0.2e-3;
  const auto finish = [&](const std::vector<Request>& rs, double move, double shift) {
    EngineCost x = e;
    x.row_move_s = move;
    x.row_shift_s = shift;
    return by_id(serve(rs, s, x));
  };
  const std::vector<Request> one = {req(0, 0, 32, 3), req(1, 0, 32, 5), req(2, 0, 32, 2)};
  const auto a = finish(one, 0, 0), b = finish(one, 0.5, 0.25);
  CHECK(b.at(1).finish_s - a.at(1).finish_s == Approx(0.5).epsilon(1e-9));  // (1)
  CHECK(b.at(0).finish_s == a.at(0).finish_s);
  CHECK(b.at(2).finish_s == a.at(2).finish_s);
  IterationCostModel cost(llama8b(), h200(), e);
  BatchShape pre, dec;
  pre.prefills.push_back({32, 0, true});
  dec.decodes = 1;
  dec.decode_context_sum = dec.decode_context_max = 32;
  const double t_b = cost.time(pre).total_s + 0.5 * cost.time(dec).total_s;
  const std::vector<Request> two = {req(0, 0, 32, 3), req(1, t_b, 32, 3)};
  const double base = finish(two, 0, 0).at(1).finish_s;
  CHECK(finish(two, 0.5, 0.25).at(1).finish_s - base == Approx(0.75).epsilon(1e-9));  // (2)
  CHECK(finish(two, 0.5, 0).at(1).finish_s - base == Approx(0.5).epsilon(1e-9));
  CHECK(finish(two, 0, 0.25).at(1).finish_s - base == Approx(0.25).epsilon(1e-9));
}

// engine.host_probe: the serving host's CPU probe, r = probe / host_probe_us (EngineCost::
// host_probe_s). A host time T becomes T x (1 - share + share x r): the GPU spec's host costs with
// host_probe_share, the SDPA builds with sdpa_build_probe_share, cpu_overhead with share 1; the
// test sets the shares to 0.79 and 0.57 (run 6's fit) for the arithmetic. Derivations at r = 0.8:
// (1) a probe equal to host_probe_us changes nothing (factor exactly 1: byte-identical times); (2)
// the engine CPU time and an SDPA build are pure host figures, so they scale exactly: cpu_s = 0.8 x
// 0.2 ms = 0.16 ms, host_s = (1 - 0.57 x 0.2) x 38.4 ms = 0.886 x 38.4 ms = 34.0224 ms; (3) the
// vllm engine's eager host time is kernels x host_launch_cuda, so it scales by 1 - 0.79 x 0.2 =
// 0.842 exactly while the GPU time does not move; (4) the eager decode step of an 8B model at batch
// 8 is host-bound (its ~300 eager ops issue slower than their kernels run), so its time scales by
// 0.842, up to the GPU's tail after the last issue: within [0.842, 0.842 + 5%] of the unscaled step
// (the tail is a few kernels of a ~10 ms step); (5) shares of 1 give run 5's model (every host time
// x r) and shares of 0 leave every host time but cpu_overhead unchanged.
TEST_CASE("engine.host_probe scales host times by 1 - share + share x probe / host_probe_us",
          "[unit][serving]") {
  const double ref = h200().param("host_probe_us");
  const double r = 0.8;
  const auto decode = [](long long n, long long ctx) {
    BatchShape b;
    b.decodes = n;
    b.decode_context_max = ctx;
    b.decode_context_sum = n * ctx;
    return b;
  };
  EngineCost e;
  e.hf_eager = true;
  e.bucketing = false;
  e.cpu_overhead_s = 0.2e-3;
  e.host_probe_share = 0.79;
  e.sdpa_build_probe_share = 0.57;
  IterationCostModel base(llama8b(), h200(), e);
  e.host_probe_s = ref;
  IterationCostModel same(llama8b(), h200(), e);
  e.host_probe_s = r * ref;
  IterationCostModel fast(llama8b(), h200(), e);
  CHECK(same.host_speed() == 1.0);
  CHECK(fast.probe_ratio() == Approx(r).epsilon(1e-12));
  CHECK(fast.host_speed() == Approx(0.842).epsilon(1e-12));
  const auto b0 = base.time(decode(8, 300)), s0 = same.time(decode(8, 300)),
             f0 = fast.time(decode(8, 300));  // each the first (8, 1, 301): one build
  CHECK(s0.total_s == b0.total_s);
  CHECK(f0.cpu_s == Approx(0.16e-3).epsilon(1e-12));
  CHECK(f0.host_s == Approx(34.0224e-3).epsilon(1e-12));
  const double step0 = base.time(decode(8, 300)).gpu_s, step_f = fast.time(decode(8, 300)).gpu_s;
  CHECK(step_f >= 0.842 * step0 * (1 - 1e-12));
  CHECK(step_f <= (0.842 + 0.05) * step0);
  // Shares 1: every host time x r (run 5's model); shares 0: only cpu_overhead moves.
  e.host_probe_share = e.sdpa_build_probe_share = 1;
  IterationCostModel prop(llama8b(), h200(), e);
  CHECK(prop.host_speed() == Approx(r).epsilon(1e-12));
  CHECK(prop.time(decode(8, 300)).host_s == Approx(r * 38.4e-3).epsilon(1e-12));
  e.host_probe_share = e.sdpa_build_probe_share = 0;
  IterationCostModel none(llama8b(), h200(), e);
  const auto n0 = none.time(decode(8, 300));
  CHECK(none.host_speed() == 1.0);
  CHECK(n0.host_s == b0.host_s);
  CHECK(n0.gpu_s == b0.gpu_s);
  CHECK(n0.cpu_s == Approx(0.16e-3).epsilon(1e-12));
  // The vllm engine: eager host time k x host_launch_cuda x 0.842, the GPU time unchanged.
  EngineCost v;
  v.host_probe_share = 0.79;
  v.capture_sizes = vllm_capture_sizes(256);
  v.cuda_graph = false;
  IterationCostModel vb(llama8b(), h200(), v);
  v.host_probe_s = r * ref;
  IterationCostModel vf(llama8b(), h200(), v);
  const auto pb = vb.exact(decode(64, 1000)), pf = vf.exact(decode(64, 1000));
  CHECK(pf.host_s == Approx(0.842 * pb.host_s).epsilon(1e-12));
  CHECK(pf.gpu_s == pb.gpu_s);
  CHECK(pf.cpu_s == Approx(r * v.cpu_overhead_s).epsilon(1e-12));
}

// engine.host_probe_trace: an iteration starting at t is priced as with host_probe = the trace's
// last probe at or before t. Derivation: the trace (0 s: 250 us, 1 s: 150 us, 2 s: 250 us) must
// give, at t = 0.5 and 2.5 s, exactly the iteration of a model built with host_probe 250 us, and
// at 1.5 s exactly that of host_probe 150 us (the same arithmetic on the same figures: equal to
// the last bit), before the first pair (t < 0) the first pair's; the attention shapes seen belong
// to the process, so a shape first run at one speed pays no build at another.
TEST_CASE("engine.host_probe_trace prices each iteration at the probe of its start time",
          "[unit][serving]") {
  const auto decode = [](long long n, long long ctx) {
    BatchShape b;
    b.decodes = n;
    b.decode_context_max = ctx;
    b.decode_context_sum = n * ctx;
    return b;
  };
  EngineCost e;
  e.hf_eager = true;
  e.bucketing = false;
  e.host_probe_s = 250e-6;
  IterationCostModel slow(llama8b(), h200(), e);
  e.host_probe_s = 150e-6;
  IterationCostModel fast(llama8b(), h200(), e);
  e.host_probe_s = 0;
  e.host_probe_trace = {{0.0, 250e-6}, {1.0, 150e-6}, {2.0, 250e-6}};
  IterationCostModel tr(llama8b(), h200(), e);
  const auto same = [](const IterationParts& a, const IterationParts& b) {
    return a.gpu_s == b.gpu_s && a.host_s == b.host_s && a.cpu_s == b.cpu_s &&
           a.total_s == b.total_s;
  };
  // Each model's first (8, 1, 301) pays the build; a seen shape does not.
  tr.at_time(-1.0);
  CHECK(same(tr.time(decode(8, 300)), slow.time(decode(8, 300))));
  tr.at_time(0.5);
  CHECK(same(tr.time(decode(8, 400)), slow.time(decode(8, 400))));
  tr.at_time(1.5);
  CHECK(tr.probe_ratio() == Approx(150.0 / 197.0).epsilon(1e-12));
  CHECK(same(tr.time(decode(4, 500)), fast.time(decode(4, 500))));
  // (8, 1, 301) was built at 250 us: at 150 us it is a seen shape, as the second call of `fast`.
  fast.time(decode(8, 300));
  const auto seen_fast = fast.time(decode(8, 300));
  const auto seen_tr = tr.time(decode(8, 300));
  CHECK(seen_tr.host_s == 0.0);
  CHECK(same(seen_tr, seen_fast));
  tr.at_time(2.5);
  CHECK(same(tr.time(decode(8, 400)), slow.time(decode(8, 400))));
  CHECK(tr.probe_ratio() == Approx(250.0 / 197.0).epsilon(1e-12));
}

// Little's law, L = lambda W, holds for any system where every arrival leaves: the time integral
// of the number in the system (accumulated by the simulator from its queue and batch sizes at
// every iteration) must equal the sum of the requests' sojourn times (from their own records).
// Equal up to floating-point summation error (1e-9 relative).
TEST_CASE("Little's law on the simulated server", "[analytic][serving]") {
  ArrivalSpec a;
  a.rate_per_s = 30;
  a.requests = 400;
  a.seed = 7;
  a.prompt_tokens = 300;
  a.output_tokens = 100;
  auto src = make_source(a, {}, llama8b().max_positions);
  EngineCost e;
  e.capture_sizes = vllm_capture_sizes(256);
  IterationCostModel cost(llama8b(), h200(), e);
  ServeOptions o;
  o.record_requests = true;
  const ServeResult r = simulate_serving(*src, cost, llama8b(), h200(), o);
  REQUIRE(r.requests == 400);
  double sojourn = 0;
  for (const auto& x : r.records) sojourn += x.finish_s - x.arrival_s;
  CHECK(r.in_system_integral == Approx(sojourn).epsilon(1e-9));
  CHECK(r.e2e.mean() * 400 == Approx(sojourn).epsilon(1e-9));
}

// The per-iteration log (ridge serve --iterations) is the simulator's own clock: iterations do not
// overlap, their durations sum to busy_s, each request's first token ends the iteration that
// prefilled it, and the batch counts add up to the tokens generated. Exact up to summation error.
TEST_CASE("The iteration log accounts for every iteration and token", "[analytic][serving]") {
  ArrivalSpec a;
  a.rate_per_s = 20;
  a.requests = 60;
  a.seed = 11;
  a.prompt_tokens = 200;
  a.output_tokens = 40;
  auto src = make_source(a, {}, llama8b().max_positions);
  EngineCost e;
  e.capture_sizes = vllm_capture_sizes(256);
  IterationCostModel cost(llama8b(), h200(), e);
  ServeOptions o;
  o.record_requests = true;
  const ServeResult r = simulate_serving(*src, cost, llama8b(), h200(), o);
  REQUIRE(r.iteration_records.size() == static_cast<std::size_t>(r.iterations));
  double busy = 0;
  long long decode_tokens = 0, prefills = 0;
  for (std::size_t i = 0; i < r.iteration_records.size(); ++i) {
    const auto& it = r.iteration_records[i];
    busy += it.duration_s;
    decode_tokens += it.decodes;
    prefills += it.prefills;
    CHECK(it.build_s == 0);  // vllm engine: no SDPA builds
    if (i + 1 < r.iteration_records.size())
      CHECK(r.iteration_records[i + 1].start_s >= it.start_s + it.duration_s * (1 - 1e-12));
  }
  CHECK(busy == Approx(r.busy_s).epsilon(1e-9));
  CHECK(prefills == 60);  // whole prompts, no preemption at this load
  CHECK(decode_tokens == 60 * (40 - 1));
  const auto& last = r.iteration_records.back();
  CHECK(last.start_s + last.duration_s == Approx(r.makespan_s).epsilon(1e-12));
}

// vLLM pads a decode-only batch to the next captured size (set_cudagraph_sizes); above the largest
// (512 for max_num_seqs 256) it runs eagerly. A mixed batch never replays a decode graph here.
TEST_CASE("CUDA-graph decode batches are padded to vLLM's capture sizes", "[unit][serving]") {
  const auto sizes = vllm_capture_sizes(256);
  CHECK(sizes.front() == 1);
  CHECK(sizes[3] == 8);
  CHECK(std::find(sizes.begin(), sizes.end(), 248) != sizes.end());
  CHECK(std::find(sizes.begin(), sizes.end(), 256) != sizes.end());
  CHECK(std::find(sizes.begin(), sizes.end(), 272) != sizes.end());
  CHECK(std::find(sizes.begin(), sizes.end(), 264) == sizes.end());
  CHECK(sizes.back() == 512);
  EngineCost e;
  e.capture_sizes = sizes;
  IterationCostModel cost(llama8b(), h200(), e);
  BatchShape b;
  b.decodes = 9;
  b.decode_context_sum = 9 * 1000;
  CHECK(cost.time(b).graph);
  CHECK(cost.time(b).padded_decodes == 16);
  b.decodes = 600;
  b.decode_context_sum = 600 * 1000;
  CHECK_FALSE(cost.time(b).graph);
  b.prefills.push_back({100, 0, true});
  b.decodes = 4;
  CHECK_FALSE(cost.time(b).graph);
}

// Dense layers and the LM head are timed at exact row counts; only attention shapes are bucketed:
// a prefill chunk's length and context and the decodes' mean context round up by at most
// 2^(1/64) - 1 = 1.09% each (above 64 tokens). Prefill attention time grows at most like
// q x (context + q), so a chunk's attention can grow by at most (1.0109)^2 - 1 = 2.2%, and an
// iteration by no more than that (its other parts are exact). Bound checked: 2.5%. Measured on
// these 300 random mixes: worst 1.40%, mean 0.16% (docs/serving.md); the mean must stay <= 0.3%.
TEST_CASE("shape buckets change an iteration's time by at most 2.5%", "[property][serving]") {
  EngineCost e;
  e.capture_sizes = vllm_capture_sizes(256);
  IterationCostModel cost(llama8b(), h200(), e);
  Rng rng(11);
  double worst = 0, sum = 0;
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    BatchShape b;
    const int chunks = static_cast<int>(rng.next() % 4);
    for (int c = 0; c < chunks; ++c)
      b.prefills.push_back({1 + static_cast<long long>(rng.next() % 2048),
                            static_cast<long long>(rng.next() % 4096), true});
    b.decodes = static_cast<long long>(rng.next() % 257);
    for (long long d = 0; d < b.decodes; ++d)
      b.decode_context_sum += 1 + static_cast<long long>(rng.next() % 4000);
    if (b.decodes == 0 && b.prefills.empty()) b.decodes = 1, b.decode_context_sum = 10;
    const double exact = cost.exact(b).total_s, bucketed = cost.time(b).total_s;
    const double err = std::abs(bucketed - exact) / exact;
    worst = std::max(worst, err);
    sum += err;
  }
  INFO("worst " << worst << " mean " << sum / n);
  CHECK(worst <= 0.025);
  CHECK(sum / n <= 0.003);
}

// The histogram reports a bucket's geometric midpoint: within 2^(1/128) - 1 = 0.54% of any value
// in the bucket. Against exact nearest-rank percentiles of 20000 log-uniform values (1 ms..10 s).
TEST_CASE("streaming percentiles are within 0.55% of exact ones", "[unit][serving]") {
  Rng rng(3);
  LogHistogram h;
  std::vector<double> v;
  for (int i = 0; i < 20000; ++i) {
    const double x = 1e-3 * std::pow(1e4, rng.uniform());
    v.push_back(x);
    h.add(x);
  }
  std::sort(v.begin(), v.end());
  for (double p : {50.0, 90.0, 99.0, 99.9}) {
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100 * double(v.size())));
    const double exact = v[rank - 1];
    CHECK(std::abs(h.percentile(p) - exact) / exact <= 0.0055);
  }
}

// With too few KV blocks for every running sequence to grow, sequences are preempted; every
// request still completes with all its tokens. 40 requests of 200 + 200 tokens need 25 blocks of
// 16 each at the end; 120 blocks hold at most 4 such sequences at full length, so the scheduler
// (admitting on prompt blocks, 13 each) must preempt.
TEST_CASE("preemption by recompute and by swap completes every request", "[analytic][serving]") {
  std::vector<Request> rs;
  for (int i = 0; i < 40; ++i) rs.push_back(req(i, 0.001 * i, 200, 200));
  for (Preemption p : {Preemption::kRecompute, Preemption::kSwap}) {
    SchedulerSpec s;
    s.num_blocks = 120;
    s.preemption = p;
    const ServeResult r = serve(rs, s);
    CHECK(r.preemptions > 0);
    CHECK(r.requests == 40);
    CHECK(r.output_tokens == 40 * 200);
    CHECK(r.max_kv_used <= 1.0);
  }
}

// Under the priority order, of two requests waiting when the server frees up, the one with the
// lower priority number is admitted first even though it arrived later.
TEST_CASE("priority order admits the more urgent request first", "[unit][serving]") {
  SchedulerSpec s;
  s.max_num_seqs = 1;
  s.priority = true;
  // Request 0 occupies the server; 1 (priority 5) and 2 (priority 0) wait behind it.
  const auto rec =
      by_id(serve({req(0, 0, 64, 20), req(1, 0.001, 64, 2, 5), req(2, 0.002, 64, 2, 0)}, s));
  CHECK(rec.at(2).first_token_s < rec.at(1).first_token_s);
  s.priority = false;
  const auto fcfs =
      by_id(serve({req(0, 0, 64, 20), req(1, 0.001, 64, 2, 5), req(2, 0.002, 64, 2, 0)}, s));
  CHECK(fcfs.at(1).first_token_s < fcfs.at(2).first_token_s);
}

// More load never helps a request: over a fixed set of seeds, the mean of the median end-to-end
// latency does not decrease as the Poisson rate rises (5, 20, 60 req/s of the chat trace shape).
TEST_CASE("a higher arrival rate never lowers the median latency (seed set mean)",
          "[property][serving]") {
  ServeStudy s;
  s.engine.capture_sizes = vllm_capture_sizes(256);
  s.arrivals.prompt_tokens = 160;
  s.arrivals.output_tokens = 120;
  double prev = 0;
  for (double rate : {5.0, 20.0, 60.0}) {
    double sum = 0;
    for (std::uint64_t seed = 1; seed <= 4; ++seed)
      sum += serve_at_rate(s, llama8b(), h200(), {}, rate, 150, seed).e2e.percentile(50);
    CHECK(sum / 4 >= prev);
    prev = sum / 4;
  }
}

// Same study, same output, byte for byte (JSON report and Perfetto trace).
TEST_CASE("serving is deterministic byte for byte", "[property][serving]") {
  ServeStudy s;
  s.model_path = "llama3-8b";
  s.gpu_name = "h200";
  s.arrivals.process = ArrivalProcess::kGamma;
  s.arrivals.cv = 3;
  s.arrivals.rate_per_s = 20;
  s.arrivals.requests = 200;
  s.arrivals.trace_path = std::string(RIDGE_SOURCE_DIR) + "/configs/traces/chat.csv";
  s.engine.capture_sizes = vllm_capture_sizes(256);
  const ServeRun a = run_serve(s), b = run_serve(s);
  CHECK(serve_json(a).dump() == serve_json(b).dump());
  CHECK(serve_trace_json(a) == serve_trace_json(b));
  CHECK(serve_svg(a) == serve_svg(b));
  CHECK(a.result.requests == 200);
}

// The static run of validate/data/h200/serve (serve_llama.py on an H200): batches of 8 in id order,
// each running until its longest output, so iterations = sum over batches of the longest output
// (1 prefill + longest - 1 decodes). The measured loop recorded 883 iterations; Ridge's static
// scheduler must produce exactly the same count from the recorded request list.
TEST_CASE("static scheduler reproduces the measured H200 loop's iteration count",
          "[validation][serving]") {
  const nlohmann::json doc =
      read_record(std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve/e2e_serve.json");
  for (const auto& rec : doc["records"]) {
    if (rec["params"]["policy"] != "static") continue;
    std::vector<Request> rs;
    for (const auto& q : rec["requests"])
      rs.push_back(req(q["id"].get<std::int64_t>(), q["arrival_s"].get<double>(),
                       q["prompt_tokens"].get<long long>(), q["output_tokens"].get<long long>()));
    SchedulerSpec s;
    s.policy = SchedulerPolicy::kStatic;
    s.max_num_seqs = rec["params"]["batch"].get<long long>();
    CHECK(serve(rs, s).iterations == static_cast<std::int64_t>(rec["iterations"].size()));
  }
}

// Prefix caching: B arrives after A has finished, with the same 512-token prefix (32 full blocks
// of 16) in a 600-token prompt. A's blocks for the prefix stay cached, so B's prefill is only its
// last 88 tokens against 512 cached ones: TTFT = one prefill iteration of {88 tokens, context
// 512}; without caching it is a prefill of {600, context 0}.
TEST_CASE("prefix caching: a cached prefix leaves only the rest of the prompt to prefill",
          "[analytic][serving]") {
  EngineCost e;
  e.bucketing = false;
  e.capture_sizes = vllm_capture_sizes(256);
  auto a = req(0, 0.0, 600, 2), b = req(1, 10.0, 600, 2);
  a.prefix_id = b.prefix_id = 7;
  a.prefix_tokens = b.prefix_tokens = 512;
  IterationCostModel cost(llama8b(), h200(), e);
  BatchShape hit, miss;
  hit.prefills.push_back({88, 512, true});
  miss.prefills.push_back({600, 0, true});
  for (bool caching : {true, false}) {
    SchedulerSpec s;
    s.prefix_caching = caching;
    const auto rec = by_id(serve({a, b}, s, e));
    const double want = caching ? cost.exact(hit).total_s : cost.exact(miss).total_s;
    CHECK(rec.at(1).first_token_s - rec.at(1).arrival_s == Approx(want).epsilon(1e-12));
    CHECK(rec.at(0).first_token_s - rec.at(0).arrival_s == Approx(cost.exact(miss).total_s));
  }
}

// Under block pressure with a few shared prefixes, cached prefixes are evicted and sequences
// preempted, yet every request completes, every block is returned (the simulator checks that
// free + cached blocks = all blocks at the end and throws otherwise), and caching does not make
// the mean TTFT worse.
TEST_CASE("prefix caching under block pressure: no leak, no loss", "[property][serving]") {
  std::vector<Request> rs;
  Rng rng(5);
  for (int i = 0; i < 80; ++i) {
    auto r = req(i, 0.002 * i, 300 + static_cast<long long>(rng.next() % 200), 100);
    r.prefix_id = static_cast<long long>(rng.next() % 4);
    r.prefix_tokens = 256;
    rs.push_back(r);
  }
  double mean_ttft[2] = {0, 0};
  for (int caching = 0; caching < 2; ++caching) {
    SchedulerSpec s;
    s.num_blocks = 200;
    s.prefix_caching = caching == 1;
    const ServeResult r = serve(rs, s);
    CHECK(r.requests == 80);
    CHECK(r.output_tokens == 80 * 100);
    CHECK(r.preemptions > 0);
    mean_ttft[caching] = r.ttft.mean();
  }
  CHECK(mean_ttft[1] <= mean_ttft[0]);
}

// Disaggregated pools, one request on idle GPUs: its first token comes after one prefill
// iteration on the prefill GPU; its KV cache (512 tokens x 2 x 32 layers x 8 KV heads x 128 x
// 2 bytes = 131072 bytes per token) crosses the link (10 us + bytes / bandwidth); the decode GPU
// then runs two decode iterations (contexts 512 and 513). E2E = prefill + transfer + decodes.
TEST_CASE("disaggregated prefill/decode: TTFT, KV transfer and decodes add up",
          "[analytic][serving]") {
  EngineCost e;
  e.bucketing = false;
  e.capture_sizes = vllm_capture_sizes(256);
  ServeOptions o;
  o.record_requests = true;
  o.max_context = llama8b().max_positions;
  DisaggSpec d;
  d.enabled = true;
  d.link_bytes_per_s = 100e9;
  d.link_latency_s = 10e-6;
  auto src = list_source({req(0, 1.0, 512, 3)});
  const ServeResult r = simulate_disaggregated(*src, llama8b(), h200(), e, TimingMode::kFast, o, d);
  IterationCostModel cost(llama8b(), h200(), e);
  BatchShape pre, d1, d2;
  pre.prefills.push_back({512, 0, true});
  d1.decodes = d2.decodes = 1;
  d1.decode_context_sum = 512;
  d2.decode_context_sum = 513;
  const double prefill = cost.exact(pre).total_s;
  const double transfer = 10e-6 + 512.0 * 131072.0 / 100e9;
  REQUIRE(r.records.size() == 1);
  const auto& rec = r.records[0];
  CHECK(rec.arrival_s == 1.0);
  CHECK(rec.first_token_s - 1.0 == Approx(prefill).epsilon(1e-12));
  CHECK(
      rec.finish_s - 1.0 ==
      Approx(prefill + transfer + cost.exact(d1).total_s + cost.exact(d2).total_s).epsilon(1e-12));
  CHECK(r.requests == 1);
  CHECK(r.output_tokens == 3);
}

// ---- H200 serving validation, run 2 (validate/data/h200/serve2; validate/README.md, serving) ----
// serve_llama.py's static and continuous loops measured once on the H200, against Ridge's
// prediction of the same request lists (the committed studies beside the record, whose numbers
// were committed before the measurement in predictions.json).
namespace {

const std::string kServe2 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve2/";

const nlohmann::json& serve2_record() {
  static const nlohmann::json doc = [] { return read_record(kServe2 + "e2e_serve.json"); }();
  return doc;
}

double rel(double predicted, double measured) {
  return (predicted - measured) / measured;
}

// The issue's serving targets for one H200 run (its studies in `dir`, its measured record):
// throughput and p50s within 10%, p99s within 20%, for the static and the continuous loop.
// Each run the record holds is checked (run 4's second process ran only the continuous set).
void check_serving_targets(const std::string& dir, const nlohmann::json& record) {
  for (const char* policy : {"static", "continuous"}) {
    bool ran = false;
    for (const auto& rec : record["records"]) ran = ran || rec["params"]["policy"] == policy;
    if (!ran) continue;
    const auto run = run_serve(load_serve_study(dir + policy + ".yaml"));
    const nlohmann::json pred = serve_json(run);
    for (const auto& rec : record["records"]) {
      if (rec["params"]["policy"] != policy) continue;
      const auto& m = rec["summary"];
      INFO(policy);
      CHECK(std::fabs(rel(pred["requests_per_s"], m["requests_per_s"])) <= 0.10);
      for (const char* k : {"ttft", "tpot", "e2e"}) {
        INFO(k);
        CHECK(std::fabs(rel(pred[k]["p50_s"], m[k]["p50_s"])) <= 0.10);
        CHECK(std::fabs(rel(pred[k]["p99_s"], m[k]["p99_s"])) <= 0.20);
      }
    }
  }
}

// A decode step's time at the host speed Ridge prices (e2e_compare.hpp): measured x
// host_probe_us / the step's CPU probe, for steps issued at nominal host speed only.
struct Step {
  long long rows, kv_len;
  double scaled_s;
};

// The run's decode steps whose attention shape (rows, kv_len) already ran earlier in the timed
// runs (static first, then continuous, as the script ran them) and whose probe is nominal
// (<= kNominalProbeRatio x the run's fastest). The first step of each shape pays a one-off cost
// of ~40 ms (see the README) that Ridge does not model; these are the steady-state steps.
std::map<std::string, std::vector<Step>> serve2_steady_steps(double host_probe_s) {
  std::map<std::string, std::vector<Step>> out;
  std::set<std::pair<long long, long long>> seen;
  for (const char* policy : {"static", "continuous"})
    for (const auto& rec : serve2_record()["records"]) {
      if (rec["params"]["policy"] != policy) continue;
      double fastest = 1e9;
      for (const auto& it : rec["iterations"])
        fastest = std::min(fastest, it["probe_us"].get<double>());
      for (const auto& it : rec["iterations"]) {
        if (it["kind"] != "decode") continue;
        const std::pair<long long, long long> shape{it["rows"].get<long long>(),
                                                    it["kv_len"].get<long long>()};
        const double probe = it["probe_us"].get<double>();
        const double t = it["forward_end_s"].get<double>() - it["start_s"].get<double>();
        if (seen.count(shape) && probe <= 1.25 * fastest)
          out[policy].push_back({shape.first, shape.second, t * host_probe_s / (probe * 1e-6)});
        seen.insert(shape);
      }
    }
  return out;
}

}  // namespace

// The issue's targets on run 2: throughput and p50s within 10%, p99s within 20%. NOT MET, by far
// (static +216% on throughput, continuous TTFT p50 -99.7%): the loops pay ~40 ms at the first
// decode step of every new (batch, kv_len) attention shape, which Ridge's eager model does not
// represent (validate/README.md, serving, run 2). Marked to fail: Catch reports it passed only
// while some metric is outside its budget; when all are within, the tag must come off.
TEST_CASE("H200 serving run 2: throughput and p50 within 10%, p99 within 20% (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_serving_targets(kServe2, serve2_record());
}

// Regression guard (not the target) on what run 2 does support:
// - the static schedule: Ridge's static scheduler runs exactly the measured 883 iterations for
//   the recorded request list (batches of 8 in id order, each 1 prefill + its longest output - 1
//   decodes);
// - the steady-state eager decode step: over the decode steps of an attention shape already run
//   and issued at nominal host speed, scaled to the model's host speed, the median of Ridge's
//   step (hf_eager engine, no CPU overhead, at the step's own batch and context) over the measured
//   one is within 10% in each loop. Measured: static 171 steps, continuous 204; median
//   predicted / measured 1.053 and 1.062 (Ridge ~9.5 ms against ~9.0 and ~8.9 ms).
TEST_CASE("H200 serving run 2: static schedule and steady-state decode step (guard)",
          "[validation][serving]") {
  const auto study = load_serve_study(kServe2 + "static.yaml");
  const auto run = run_serve(study);
  for (const auto& rec : serve2_record()["records"])
    if (rec["params"]["policy"] == "static")
      CHECK(run.result.iterations == static_cast<std::int64_t>(rec["iterations"].size()));
  EngineCost e = study.engine;
  REQUIRE(e.hf_eager);
  e.cpu_overhead_s = 0;
  e.sdpa_new_shape_decode_s = e.sdpa_new_shape_prefill_s = 0;  // the forward alone
  IterationCostModel cost(run.model.transformer(), run.gpu, e);
  const auto steps = serve2_steady_steps(run.gpu.param("host_probe_us"));
  for (const char* policy : {"static", "continuous"}) {
    const auto it = steps.find(policy);
    REQUIRE(it != steps.end());
    REQUIRE(it->second.size() >= 100);
    std::vector<double> ratio;
    for (const Step& s : it->second) {
      BatchShape b;
      b.decodes = s.rows;
      b.decode_context_max = s.kv_len - 1;
      b.decode_context_sum = b.decode_context_max * s.rows;
      ratio.push_back(cost.time(b).total_s / s.scaled_s);
    }
    std::nth_element(ratio.begin(), ratio.begin() + ratio.size() / 2, ratio.end());
    INFO(policy << ": " << it->second.size() << " steps, median predicted/measured "
                << ratio[ratio.size() / 2]);
    CHECK(std::fabs(ratio[ratio.size() / 2] - 1) <= 0.10);
  }
}

// ---------------------------------------------------------------------------------------------
// Run 3 (validate/data/h200/serve3): pre-registered. The model (per-new-shape SDPA build, from
// validate/data/h200/sdpa_shapes alone) and these predictions were committed before the
// measurement; nothing is fitted on this run.

namespace {

const std::string kServe3 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve3/";

const nlohmann::json& serve3_record() {
  static const nlohmann::json doc = [] { return read_record(kServe3 + "e2e_serve.json"); }();
  return doc;
}

}  // namespace

// The issue's targets on run 3: throughput and p50s within 10%, p99s within 20%. NOT MET: the
// continuous loop meets them except TTFT (p50 -15%, p99 -35%), but the static run is off by
// +54% on throughput and -31% to -45% on latencies: its host ran slow (CPU probe median 1.84x
// its fastest; 46 of 891 iterations at nominal speed), which Ridge does not model. Marked to
// fail: Catch reports it passed only while some metric is outside its budget.
TEST_CASE("H200 serving run 3: throughput and p50 within 10%, p99 within 20% (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_serving_targets(kServe3, serve3_record());
}

// Regression guard (not the target) on what run 3 supports:
// - the continuous loop's throughput and TPOT/E2E (measured: requests/s +0.8%, TPOT p50 -0.6%
//   p99 -13.9%, E2E p50 -4.2% p99 -14.7%) within the target's budgets (10% / 20%);
// - the static schedule: 891 iterations, as measured;
// - the per-step mechanism: the run's decode steps, replayed in the measured order through the
//   study's cost model (its sdpa_seen_shapes, no CPU overhead), split by whether Ridge charges a
//   build; over the steps at nominal host speed (probe <= 1.25 x fastest), scaled to
//   host_probe_us, the median predicted / measured is within 10% in each group with >= 30 steps.
//   Measured: static with a build 42 steps (Ridge 47.9 ms vs 51.0 ms), continuous with a build
//   514 (47.9 vs 49.5 ms), continuous without 617 (9.5 vs 8.9 ms); static without a build has 4
//   nominal steps (skipped).
TEST_CASE("H200 serving run 3: continuous metrics, static schedule, per-shape step (guard)",
          "[validation][serving]") {
  for (const char* policy : {"static", "continuous"}) {
    INFO(policy);
    const auto study = load_serve_study(kServe3 + policy + ".yaml");
    const auto run = run_serve(study);
    const nlohmann::json pred = serve_json(run);
    EngineCost e = study.engine;
    REQUIRE(e.hf_eager);
    e.cpu_overhead_s = 0;
    IterationCostModel cost(run.model.transformer(), run.gpu, e);
    const double host_probe_s = run.gpu.param("host_probe_us");
    for (const auto& rec : serve3_record()["records"]) {
      if (rec["params"]["policy"] != policy) continue;
      const auto& m = rec["summary"];
      if (std::string(policy) == "static") {
        CHECK(run.result.iterations == static_cast<std::int64_t>(rec["iterations"].size()));
      } else {
        CHECK(std::fabs(rel(pred["requests_per_s"], m["requests_per_s"])) <= 0.10);
        CHECK(std::fabs(rel(pred["tpot"]["p50_s"], m["tpot"]["p50_s"])) <= 0.10);
        CHECK(std::fabs(rel(pred["tpot"]["p99_s"], m["tpot"]["p99_s"])) <= 0.20);
        CHECK(std::fabs(rel(pred["e2e"]["p50_s"], m["e2e"]["p50_s"])) <= 0.10);
        CHECK(std::fabs(rel(pred["e2e"]["p99_s"], m["e2e"]["p99_s"])) <= 0.20);
      }
      double fastest = 1e9;
      for (const auto& it : rec["iterations"])
        fastest = std::min(fastest, it["probe_us"].get<double>());
      std::map<bool, std::vector<double>> ratio;  // by "Ridge charges a build"
      for (const auto& it : rec["iterations"]) {
        BatchShape b;
        const long long rows = it["rows"].get<long long>();
        if (it["kind"] == "prefill") {
          b.prefills.assign(static_cast<std::size_t>(rows), PrefillChunk{256, 0, true});
          cost.time(b);
          continue;
        }
        b.decodes = rows;
        b.decode_context_max = it["kv_len"].get<long long>() - 1;
        b.decode_context_sum = b.decode_context_max * rows;
        const auto p = cost.time(b);
        const double probe = it["probe_us"].get<double>();
        if (probe > 1.25 * fastest) continue;
        const double t = it["forward_end_s"].get<double>() - it["start_s"].get<double>();
        ratio[p.host_s > 0].push_back(p.total_s / (t * host_probe_s / (probe * 1e-6)));
      }
      for (auto& [build, r] : ratio) {
        if (r.size() < 30) continue;
        std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
        INFO((build ? "with a build: " : "without: ")
             << r.size() << " steps, median ratio " << r[r.size() / 2]);
        CHECK(std::fabs(r[r.size() / 2] - 1) <= 0.10);
      }
    }
  }
}

// ---- Per-request predictions and the nominal-host-speed comparison (runs 3 and 4) ----
namespace {

// Nearest rank, as serve_llama.py's pct: the smallest value with at least p% at or below it.
double nearest_rank(std::vector<double> xs, double p) {
  std::sort(xs.begin(), xs.end());
  const auto k =
      std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(p / 100.0 * xs.size())));
  return xs[std::min(xs.size(), k) - 1];
}

// TTFT of the requests a measured continuous run served at nominal host speed (every iteration
// overlapping [arrival, first token] at probe <= 1.25 x the run's fastest: serve_compare.py's
// nominal_ids), measured and as Ridge predicts each of the same requests (run_serve's records).
struct Paired {
  std::vector<double> measured, ridge;
};
Paired nominal_ttft(const std::string& dir, const nlohmann::json& record) {
  Paired out;
  for (const auto& rec : record["records"]) {
    if (rec["params"]["policy"] != "continuous") continue;
    const auto run = run_serve(load_serve_study(dir + "continuous.yaml"), true);
    const auto pred = by_id(run.result);
    double fastest = 1e9;
    for (const auto& it : rec["iterations"])
      fastest = std::min(fastest, it["probe_us"].get<double>());
    std::map<std::int64_t, double> arrival;
    for (const auto& q : rec["requests"]) arrival[q["id"].get<std::int64_t>()] = q["arrival_s"];
    for (const auto& q : rec["results"]) {
      const auto id = q["id"].get<std::int64_t>();
      const double lo = arrival.at(id), hi = q["first_token_s"];
      bool nominal = true;
      for (const auto& it : rec["iterations"])
        if (it["end_s"].get<double>() > lo && it["start_s"].get<double>() < hi)
          nominal = nominal && it["probe_us"].get<double>() <= 1.25 * fastest;
      if (!nominal) continue;
      REQUIRE(pred.count(id) == 1);
      out.measured.push_back(hi - lo);
      out.ridge.push_back(pred.at(id).first_token_s - pred.at(id).arrival_s);
    }
  }
  return out;
}

}  // namespace

// `ridge serve --requests`: one row per request in id order, each consistent with the run's
// histograms: the nearest-rank p50 of the rows' TTFT is within the histogram's stated 0.54% of
// serve_json's p50 (the histogram's bucket error, docs/serving.md "Metrics"), first <= last token
// <= finish, and the disaggregated mode also lists the requests done on the prefill GPU.
TEST_CASE("per-request records: CSV rows match the run's percentiles", "[unit][serving]") {
  // The shipped chat study, 300 Poisson requests at 8 req/s drawn from its trace, no capacity.
  ServeStudy st = load_serve_study(std::string(RIDGE_SOURCE_DIR) +
                                   "/configs/studies/serve-llama3-8b-chat.yaml");
  st.arrivals.process = ArrivalProcess::kPoisson;
  st.arrivals.rate_per_s = 8;
  st.arrivals.requests = 300;
  st.capacity.enabled = false;
  const auto run = run_serve(st, true);
  const std::string csv = serve_requests_csv(run);
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  CHECK(line ==
        "id,arrival_s,first_token_s,last_token_s,finish_s,prompt_tokens,output_tokens,"
        "preemptions");
  std::vector<double> ttft;
  std::int64_t expect = 0;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(row, cell, ',')) v.push_back(std::stod(cell));
    REQUIRE(v.size() == 8);
    CHECK(static_cast<std::int64_t>(v[0]) == expect++);
    CHECK(v[1] <= v[2]);
    CHECK(v[2] <= v[3]);
    CHECK(v[3] <= v[4]);
    ttft.push_back(v[2] - v[1]);
  }
  CHECK(expect == run.result.requests);
  const double p50 = serve_json(run)["ttft"]["p50_s"];
  CHECK(std::fabs(nearest_rank(ttft, 50) / p50 - 1) <= 0.0055);
  // Without the flag nothing is kept.
  CHECK(run_serve(st).result.records.empty());
  // Disaggregated: a request with one output token ends on the prefill GPU; it is listed too.
  std::vector<Request> rs = {req(0, 0.0, 64, 1), req(1, 0.0, 64, 4)};
  SchedulerSpec s;
  s.max_num_seqs = 4;
  ServeOptions o;
  o.scheduler = s;
  o.max_context = llama8b().max_positions;
  o.record_requests = true;
  DisaggSpec d;
  d.enabled = true;
  auto src = list_source(rs);
  EngineCost e;
  e.capture_sizes = vllm_capture_sizes(s.max_num_seqs);
  const auto r = simulate_disaggregated(*src, llama8b(), h200(), e, TimingMode::kFast, o, d);
  CHECK(r.records.size() == 2);
}

// Run 3's TTFT over the requests served at nominal host speed (development data: the split and
// this comparison were designed after run 3's miss, see validate/README.md, run 3). 30 of 64
// requests qualify; measured p50 29.0 ms and p99 (their largest) 52.1 ms, Ridge's for the same
// requests 29.7 ms (+2.3%) and 57.4 ms (+10.3%). Guard: the issue's budgets, 10% and 20%.
TEST_CASE("H200 serving run 3: TTFT at nominal host speed, per request (guard)",
          "[validation][serving]") {
  const Paired p = nominal_ttft(kServe3, serve3_record());
  REQUIRE(p.measured.size() == 30);
  CHECK(std::fabs(rel(nearest_rank(p.ridge, 50), nearest_rank(p.measured, 50))) <= 0.10);
  CHECK(std::fabs(rel(nearest_rank(p.ridge, 99), nearest_rank(p.measured, 99))) <= 0.20);
}

// ---- H200 serving validation, run 4 (validate/data/h200/serve4; validate/README.md, run 4) ----
// Pre-registered (6a17b68) with the model frozen at 53fc900; measured in one call: process 1 ran
// the static set and the continuous set at 1.4 req/s (serve4/), process 2 the continuous set at
// 2.0 req/s (serve4/rate2/). The host ran at nominal speed for most of it (CPU probe median
// within 1.14x of the fastest in each set).
namespace {

const std::string kServe4 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve4/";

const nlohmann::json& json_file(const std::string& path) {
  static std::map<std::string, nlohmann::json> docs;
  auto it = docs.find(path);
  if (it == docs.end()) {
    it = docs.emplace(path, read_record(path)).first;  // JSON files, records maybe gzipped
  }
  return it->second;
}

// Ridge's prediction for a committed study (run once per test binary: the hf_eager studies take
// 1-3 s each).
const nlohmann::json& predicted(const std::string& study) {
  static std::map<std::string, nlohmann::json> preds;
  auto it = preds.find(study);
  if (it == preds.end())
    it = preds.emplace(study, serve_json(run_serve(load_serve_study(study)))).first;
  return it->second;
}

struct Err {
  std::string metric;
  double error, budget;
};

// The issue's metrics for one set of a run: (predicted - measured) / measured and its budget
// (throughput and p50s 10%, p99s 20%).
std::vector<Err> errors_against(const nlohmann::json& pred, const std::string& dir,
                                const char* policy) {
  std::vector<Err> out;
  for (const auto& rec : json_file(dir + "e2e_serve.json")["records"]) {
    if (rec["params"]["policy"] != policy) continue;
    const auto& m = rec["summary"];
    out.push_back({"requests/s", rel(pred["requests_per_s"], m["requests_per_s"]), 0.10});
    out.push_back(
        {"output tokens/s", rel(pred["output_tokens_per_s"], m["output_tokens_per_s"]), 0.10});
    for (const char* k : {"ttft", "tpot", "e2e"}) {
      out.push_back({std::string(k) + " p50", rel(pred[k]["p50_s"], m[k]["p50_s"]), 0.10});
      out.push_back({std::string(k) + " p99", rel(pred[k]["p99_s"], m[k]["p99_s"]), 0.20});
    }
  }
  REQUIRE(out.size() == 8);
  return out;
}

// Ridge's prediction now (the model in the tree) for a run's committed study.
std::vector<Err> run4_errors(const std::string& dir, const char* policy) {
  return errors_against(predicted(dir + policy + ".yaml"), dir, policy);
}

// The prediction committed with a pre-registered run (DIR/predictions.json, written by its rule
// before the comparison): the run's figures as they were scored, whatever the model is now.
std::vector<Err> committed_errors(const std::string& dir, const char* policy) {
  return errors_against(json_file(dir + "predictions.json")["predictions"][policy], dir, policy);
}

}  // namespace

// Run 4, static set: MET. Measured 1.863 req/s (Ridge +3.9%), TTFT p50 11.08 s / p99 15.39 s
// (-5.5% / -4.8%), TPOT p50 9.03 ms / p99 47.45 ms (+6.2% / -7.0%), E2E p50 13.48 s / p99
// 17.18 s (-6.6% / -3.9%); 870 iterations as predicted; 638 of 870 iterations at nominal host
// speed (run 3's static set, 46 of 891, missed by 31-54%).
TEST_CASE("H200 serving run 4: static set within the targets (10% throughput and p50s, 20% p99s)",
          "[validation][serving]") {
  for (const auto& e : run4_errors(kServe4, "static")) {
    INFO(e.metric << ": " << 100 * e.error << "%");
    CHECK(std::fabs(e.error) <= e.budget);
  }
  for (const auto& rec : json_file(kServe4 + "e2e_serve.json")["records"])
    if (rec["params"]["policy"] == "static")
      CHECK(predicted(kServe4 + "static.yaml")["iterations"] == rec["iterations"].size());
}

// Run 4, continuous sets: NOT MET. At 1.4 req/s TPOT p50 +13.6% (measured 23.87 ms) and E2E p50
// +23.5% (2388 ms) miss; at 2.0 req/s TTFT p50 +28.5% (26.49 ms) and p99 -25.1% (74.0 ms) miss.
// Marked to fail: Catch reports it passed only while some metric is outside its budget.
TEST_CASE("H200 serving run 4: continuous sets within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  for (const std::string& dir : {kServe4, kServe4 + "rate2/"})
    for (const auto& e : run4_errors(dir, "continuous")) {
      INFO(dir << " " << e.metric << ": " << 100 * e.error << "%");
      CHECK(std::fabs(e.error) <= e.budget);
    }
}

// Regression guard on what run 4's continuous sets met, each within its target budget:
// 1.4 req/s: requests/s -0.7%, TTFT p50 -3.7% p99 -10.0%, TPOT p99 -4.8%, E2E p99 +0.8%;
// 2.0 req/s: requests/s +3.3%, TPOT p50 +0.1% p99 -12.9%, E2E p50 +5.6% p99 -0.9%.
TEST_CASE("H200 serving run 4: the continuous metrics that met their budgets (guard)",
          "[validation][serving]") {
  const std::map<std::string, std::set<std::string>> met = {
      {kServe4, {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p99", "e2e p99"}},
      {kServe4 + "rate2/",
       {"requests/s", "output tokens/s", "tpot p50", "tpot p99", "e2e p50", "e2e p99"}}};
  for (const auto& [dir, names] : met) {
    std::size_t n = 0;
    for (const auto& e : run4_errors(dir, "continuous")) {
      if (!names.count(e.metric)) continue;
      ++n;
      INFO(dir << " " << e.metric << ": " << 100 * e.error << "%");
      CHECK(std::fabs(e.error) <= e.budget);
    }
    CHECK(n == names.size());
  }
}

// ---- What the pre-registered runs' tests share (runs 5, 6 and 7) ----
namespace {

// A run's sets: the record folder, the policy its process ran.
struct ServeSet {
  std::string dir;
  const char* policy;
};

std::vector<ServeSet> serve_sets(const std::string& base) {
  return {{base, "continuous"}, {base + "rate2/", "continuous"}, {base + "static/", "static"}};
}

// Runs 5 and 6's rule: each committed study predicts at its record's probe, rounded to 1 us.
void check_probe_rule(const std::vector<ServeSet>& sets) {
  for (const auto& s : sets) {
    const double probe_us =
        json_file(s.dir + "e2e_serve.json")["environment"]["host_probe_us"].get<double>();
    const auto study = load_serve_study(s.dir + s.policy + ".yaml");
    INFO(s.dir);
    CHECK(study.engine.host_probe_s == Approx(std::round(probe_us) * 1e-6).epsilon(1e-12));
  }
}

// Whose prediction a run's test scores: the model in the tree, or the one committed with the run.
enum class Pred { kNow, kCommitted };

std::vector<Err> set_errors(const ServeSet& s, Pred p) {
  return p == Pred::kNow ? run4_errors(s.dir, s.policy) : committed_errors(s.dir, s.policy);
}

// Every metric of every set within its budget (10% throughput and p50s, 20% p99s).
void check_targets(const std::vector<ServeSet>& sets, Pred p = Pred::kNow) {
  for (const auto& s : sets)
    for (const auto& e : set_errors(s, p)) {
      INFO(s.dir << " " << e.metric << ": " << 100 * e.error << "%");
      CHECK(std::fabs(e.error) <= e.budget);
    }
}

// The named metrics of each set within their budgets (each name must exist).
void check_met(const std::vector<ServeSet>& sets,
               const std::map<std::string, std::set<std::string>>& met, Pred p = Pred::kNow) {
  for (const auto& s : sets) {
    const auto names = met.find(s.dir);
    if (names == met.end()) continue;
    std::size_t n = 0;
    for (const auto& e : set_errors(s, p)) {
      if (!names->second.count(e.metric)) continue;
      ++n;
      INFO(s.dir << " " << e.metric << ": " << 100 * e.error << "%");
      CHECK(std::fabs(e.error) <= e.budget);
    }
    CHECK(n == names->second.size());
  }
}

}  // namespace

// ---- H200 serving validation, run 5 (validate/data/h200/serve5; validate/README.md, serving) ----
// Pre-registered (c95398a): each process measured the host probe before its timed set, and
// Ridge's prediction is Ridge at that probe rounded to 1 us (engine.host_probe), with the model
// frozen at bfd99db. The host ran slow for the whole call (probes 309-338 us, host_probe_us 197).
namespace {

const std::string kServe5 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve5/";

}  // namespace

// The rule itself: each committed study predicts at its record's probe, rounded to 1 us
// (measured 337.6, 315.0 and 308.8 us).
TEST_CASE("H200 serving run 5: each prediction is Ridge at its run's host probe (the rule)",
          "[validation][serving]") {
  check_probe_rule(serve_sets(kServe5));
}

// Run 5, all sets: NOT MET (with the model frozen for run 5, below; with run 6's fitted shares
// the continuous sets still miss, see the guard). Continuous 1.4 req/s (150 requests): TTFT p50
// +50.6% (measured 41.45 ms) p99 +182% (861 ms), TPOT p50 +30.4% (46.84 ms), E2E p50 +31.5% (5164
// ms) miss; continuous 2.0 req/s: TTFT p50 +32.5% (42.26 ms) p99 +39.1% (3415 ms), E2E p50 +18.5%
// (6051 ms) miss; static: requests/s -14.7% (1.444), E2E p50 +19.1% (13.71 s) miss. Marked to fail:
// Catch reports it passed only while some metric is outside its budget.
TEST_CASE("H200 serving run 5: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe5));
}

// Run 5, the metrics that met their budgets. With the model frozen for run 5 (shares 1: every
// host time x probe / 197 us), as measured: 1.4 req/s: requests/s -2.1%, TPOT p99 +8.2%, E2E p99
// +13.2%; 2.0 req/s: requests/s -3.6%, TPOT p50 +9.4% p99 -6.8%, E2E p99 +7.6%; static: TTFT
// p50 +9.7% p99 +17.8%, TPOT p50 +7.9% p99 +9.9%, E2E p99 +17.4%. Since run 6's mechanism
// (host_probe_share 0.79, sdpa_build_probe_share 0.57, fitted on runs 2-5's per-iteration
// records), run 5 is fit data and the current model meets (run 6's preregistration.md):
// 1.4 req/s: requests/s +0.5%, TPOT p99 -9.0%, E2E p99 -7.8% (misses TTFT p50 +13.6% p99
// -20.6%, TPOT p50 +12.1%, E2E p50 +13.0%); 2.0 req/s: requests/s -1.2%, TTFT p99 -9.8%, TPOT
// p50 -9.0%, E2E p50 +0.7% p99 -4.5% (misses TTFT p50 +15.1%, TPOT p99 -20.8%); static: every
// metric (requests/s -3.4%, TTFT -5.7% / +3.4%, TPOT -1.1% / -5.6%, E2E +3.4% / +3.1%). Those
// figures are run 6's model's; the guard holds with run 9's shares (0.85, 0.65, fitted on runs
// 2-8).
TEST_CASE("H200 serving run 5 (fit data since run 6): the metrics within their budgets (guard)",
          "[validation][serving]") {
  check_met(serve_sets(kServe5),
            {{kServe5, {"requests/s", "output tokens/s", "tpot p99", "e2e p99"}},
             {kServe5 + "rate2/",
              {"requests/s", "output tokens/s", "ttft p99", "tpot p50", "e2e p50", "e2e p99"}},
             {kServe5 + "static/",
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p50", "e2e p99"}}});
  for (const auto& rec : json_file(kServe5 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe5 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- Run 6's mechanism: how the loop's host time follows the host probe (runs 2-8 as fit data) --
// validate/e2e/serve_host_fit.py fits host time = T0 x (1 - share + share x probe / 197 us) by
// least squares in log (T0 free) over every decode iteration of runs 2-8 (in-loop probe_us): the
// repeated-shape steps (host-bound: an ~9 ms step of which Ridge's kernels are < 1 ms; 16074
// steps, those over 30 ms left out) give share 0.85 (EngineCost::host_probe_share); the new-shape
// steps' excess over that fit (the cuDNN SDPA builds: steps over 20 ms that exceed the fit; 14957)
// give 0.65 (sdpa_build_probe_share). Runs 2-5 alone gave 0.79 and 0.57 (run 6's defaults).
// Re-derived here from the records: each default is the grid minimum of the sum of squared log
// residuals against its neighbours 0.01 either side.
namespace {

struct DecodeSteps {
  std::vector<std::pair<double, double>> repeated, fresh;  // (probe us, forward ms)
};

DecodeSteps serving_decode_steps() {
  DecodeSteps out;
  const std::string base = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/";
  for (const char* d :
       {"serve2", "serve3", "serve4", "serve4/rate2", "serve5", "serve5/rate2", "serve5/static",
        "serve6", "serve6/rate2", "serve6/static", "serve7", "serve7/rate2", "serve7/static",
        "serve8", "serve8/rate2", "serve8/static"}) {
    const auto doc = read_record(base + d + "/e2e_serve.json");
    for (const auto& rec : doc["records"]) {
      std::set<std::pair<long long, long long>> seen;
      for (const auto& it : rec["iterations"]) {
        if (it["kind"] != "decode") continue;
        const double ms = (it["forward_end_s"].get<double>() - it["start_s"].get<double>()) * 1e3;
        const std::pair<double, double> p{it["probe_us"].get<double>(), ms};
        if (seen.insert({it["rows"].get<long long>(), it["kv_len"].get<long long>()}).second)
          out.fresh.push_back(p);
        else if (ms < 30)
          out.repeated.push_back(p);
      }
    }
  }
  return out;
}

double probe_factor(double probe_us, double share) {
  return 1 + share * (probe_us / 197.0 - 1);
}

// Sum of squared log residuals at `share` (T0 at its optimum, the mean log ratio); t0 out.
double log_sse(const std::vector<std::pair<double, double>>& pts, double share, double* t0) {
  double sum = 0, sq = 0;
  for (const auto& [p, t] : pts) {
    const double l = std::log(t) - std::log(probe_factor(p, share));
    sum += l;
    sq += l * l;
  }
  const double n = double(pts.size()), mean = sum / n;
  if (t0) *t0 = std::exp(mean);
  return sq - n * mean * mean;
}

}  // namespace

TEST_CASE("host probe shares: the fit over runs 2-8's decode steps gives the defaults",
          "[validation][serving]") {
  const DecodeSteps s = serving_decode_steps();
  CHECK(s.repeated.size() == 16074);
  const EngineCost e;
  double t0 = 0;
  const double at = log_sse(s.repeated, e.host_probe_share, &t0);
  CHECK(at < log_sse(s.repeated, e.host_probe_share - 0.01, nullptr));
  CHECK(at < log_sse(s.repeated, e.host_probe_share + 0.01, nullptr));
  CHECK(t0 == Approx(8.992).epsilon(1e-3));  // ms at 197 us (serve8/host_fit.json)
  std::vector<std::pair<double, double>> builds;
  for (const auto& [p, t] : s.fresh) {
    const double rep = t0 * probe_factor(p, e.host_probe_share);
    if (t > 20 && t > rep) builds.push_back({p, t - rep});
  }
  CHECK(builds.size() == 14957);
  const double b = log_sse(builds, e.sdpa_build_probe_share, nullptr);
  CHECK(b < log_sse(builds, e.sdpa_build_probe_share - 0.01, nullptr));
  CHECK(b < log_sse(builds, e.sdpa_build_probe_share + 0.01, nullptr));
}

// ---- H200 serving run 6 (validate/data/h200/serve6/preregistration.md): pre-registered ----
// Pre-registered: validate/data/h200/serve6/preregistration.md; its grid freeze test went when
// the run was measured and scored on its committed predictions (below).

// ---- H200 serving run 6, measured 2026-12-02 (validate/data/h200/serve6/README.md) ----
// Each process probed the host at nominal speed before its set (196.4, 182.6, 181.7 us); the host
// then ran slower in stretches during the sets (iteration-time-weighted in-loop probes 249, 233
// and 270 us), and the continuous sets' p50s are steep in host speed at these loads.
namespace {

const std::string kServe6 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve6/";

}  // namespace

// The rule: each committed study predicts at its record's probe, rounded to 1 us.
TEST_CASE("H200 serving run 6: each prediction is Ridge at its run's host probe (the rule)",
          "[validation][serving]") {
  check_probe_rule(serve_sets(kServe6));
}

// Run 6, all sets: NOT MET. 1.4 req/s: TTFT p50 -46.0% (measured 35.15 ms) p99 -40.4% (95.07
// ms), TPOT p50 -32.4% (32.63 ms) p99 -28.7% (68.24 ms), E2E p50 -30.3% (3599 ms) miss; 2.0
// req/s: TTFT p50 -20.0% (32.09 ms) p99 -22.2% (70.49 ms), TPOT p50 -22.5% (29.74 ms), E2E p50
// -18.3% (3897 ms) miss; static: requests/s +27.4% (1.468), TTFT p50 -16.4% (12.26 s), TPOT p50
// -37.4% (14.50 ms), E2E p50 -15.0% (15.14 s) p99 -21.8% (21.80 s) miss.
TEST_CASE("H200 serving run 6: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe6), Pred::kCommitted);
}

// Run 6, the metrics that met their budgets: 1.4 req/s requests/s -0.1%, E2E p99 +0.7%; 2.0
// req/s requests/s +1.1%, TPOT p99 -12.1%, E2E p99 -3.0%; static TTFT p99 -17.1%, TPOT p99
// -16.0%; the static schedule's 968 iterations exactly.
TEST_CASE("H200 serving run 6: the metrics within their budgets (guard)", "[validation][serving]") {
  check_met(serve_sets(kServe6),
            {{kServe6, {"requests/s", "output tokens/s", "e2e p99"}},
             {kServe6 + "rate2/", {"requests/s", "output tokens/s", "tpot p99", "e2e p99"}},
             {kServe6 + "static/", {"ttft p99", "tpot p99"}}},
            Pred::kCommitted);
  for (const auto& rec : json_file(kServe6 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe6 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- H200 serving run 7 (validate/data/h200/serve7/preregistration.md): pre-registered ----
// Pre-registered: validate/data/h200/serve7/preregistration.md; its grid freeze test went when
// the run was measured and scored on its committed predictions (below).

// ---- H200 serving run 7, measured 2026-12-02 (validate/data/h200/serve7/README.md) ----
// The rule's input is the mean of side_probe.py's samples over each set's window (319, 336 and
// 336 us); the probes before the sets read 269.1, 228.8 and 364.6 us. The static set is the
// second attempt (run7_static.sh): the first one's record did not come back from the device.
namespace {

const std::string kServe7 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve7/";

// Run 7's rule, derived here from the files: the mean of DIR/side_probe.csv's samples from the
// record's t0_perf_counter_s to the end of its last iteration, rounded to 1 us.
double side_probe_mean_us(const std::string& dir) {
  const auto rec = json_file(dir + "e2e_serve.json")["records"];
  REQUIRE(rec.size() == 1);
  const double t0 = rec[0]["t0_perf_counter_s"].get<double>();
  const double t1 = t0 + rec[0]["iterations"].back()["end_s"].get<double>();
  std::ifstream in(dir + "side_probe.csv");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "perf_counter_s,probe_us");
  double sum = 0;
  int n = 0;
  while (std::getline(in, line)) {
    const auto comma = line.find(',');
    if (comma == std::string::npos) continue;
    const double t = std::stod(line.substr(0, comma));
    if (t >= t0 && t <= t1) {
      sum += std::stod(line.substr(comma + 1));
      ++n;
    }
  }
  REQUIRE(n >= 20);  // the rule's own floor (fewer: the side probe failed)
  return std::round(sum / n);
}

}  // namespace

TEST_CASE("H200 serving run 7: each prediction is Ridge at its set's side-probe mean (the rule)",
          "[validation][serving]") {
  // Each set's window held ~1800-2100 samples (one per 50 ms over 90-106 s; static ~560 over 28
  // s), so the mean is far from the 20-sample floor.
  for (const auto& s : serve_sets(kServe7)) {
    const auto study = load_serve_study(s.dir + s.policy + ".yaml");
    INFO(s.dir);
    CHECK(study.engine.host_probe_s == Approx(side_probe_mean_us(s.dir) * 1e-6).epsilon(1e-12));
  }
}

// Run 7, all sets: NOT MET (14 of the 21 targets met, run 6: 7). 1.4 req/s: TTFT p99 +45.7%
// (measured 1230 ms), TPOT p50 -16.3% (51.03 ms) p99 -23.0% (88.35 ms), E2E p50 -16.8% (7011 ms)
// miss; static: TTFT p50 -11.2% (16.51 s), TPOT p50 -10.2% (16.64 ms), E2E p50 -11.6% (20.14 s)
// miss.
TEST_CASE("H200 serving run 7: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe7), Pred::kCommitted);
}

// Run 7, the metrics that met their budgets: 1.4 req/s requests/s +4.3%, TTFT p50 -7.1%, E2E p99
// -16.9%; 2.0 req/s every one (requests/s +1.6%, TTFT p50 -3.8% p99 -0.4%, TPOT p50 -0.6% p99
// -8.8%, E2E p50 -4.7% p99 -4.7%); static requests/s +8.4%, TTFT p99 -9.9%, TPOT p99 -11.9%, E2E
// p99 -7.3%; the static schedule's 933 iterations exactly.
TEST_CASE("H200 serving run 7: the metrics within their budgets (guard)", "[validation][serving]") {
  check_met(
      serve_sets(kServe7),
      {{kServe7, {"requests/s", "output tokens/s", "ttft p50", "e2e p99"}},
       {kServe7 + "rate2/",
        {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99", "e2e p50",
         "e2e p99"}},
       {kServe7 + "static/", {"requests/s", "output tokens/s", "ttft p99", "tpot p99", "e2e p99"}}},
      Pred::kCommitted);
  for (const auto& rec : json_file(kServe7 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe7 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- H200 serving run 8 (validate/data/h200/serve8/preregistration.md): pre-registered ----
// Pre-registered: validate/data/h200/serve8/preregistration.md; its grid freeze test went when
// the run was measured and scored on its committed predictions (below).

// ---- H200 serving run 8, measured 2026-12-02 (validate/data/h200/serve8/README.md) ----
// Side-probe means 310, 304 and 270 us; in the static set the loop's own probes read ~200 us
// where the side process read 217-270 (the host's speed differed by core).
namespace {

const std::string kServe8 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve8/";

}  // namespace

TEST_CASE("H200 serving run 8: each prediction is Ridge at its set's side-probe mean (the rule)",
          "[validation][serving]") {
  for (const auto& s : serve_sets(kServe8)) {
    const auto study = load_serve_study(s.dir + s.policy + ".yaml");
    INFO(s.dir);
    CHECK(study.engine.host_probe_s == Approx(side_probe_mean_us(s.dir) * 1e-6).epsilon(1e-12));
  }
}

// Run 8, all sets: NOT MET (11 of 21). 1.4 req/s: TTFT p50 +15.5% (measured 39.89 ms) p99 +918%
// (99.16 ms), TPOT p50 +16.6% (38.25 ms) p99 -22.1% (85.51 ms); 2.0 req/s: TTFT p99 -42.9% (933.2
// ms), TPOT p99 -24.2% (86.91 ms); static: TTFT p50 -19.3% (17.20 s), TPOT p50 +17.3% (10.60 ms)
// p99 -22.6% (70.78 ms), E2E p50 -14.3% (19.48 s).
TEST_CASE("H200 serving run 8: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe8), Pred::kCommitted);
}

// Run 8, the metrics that met their budgets: 1.4 req/s requests/s +2.6%, E2E p50 +6.7% p99
// -8.3%; 2.0 req/s requests/s -0.6%, TTFT p50 -3.2%, TPOT p50 -2.9%, E2E p50 -7.8% p99 -15.4%;
// static requests/s +8.0%, TTFT p99 -10.8%, E2E p99 -7.6%; the static schedule's 842 iterations
// exactly.
TEST_CASE("H200 serving run 8: the metrics within their budgets (guard)", "[validation][serving]") {
  check_met(serve_sets(kServe8),
            {{kServe8, {"requests/s", "output tokens/s", "e2e p50", "e2e p99"}},
             {kServe8 + "rate2/",
              {"requests/s", "output tokens/s", "ttft p50", "tpot p50", "e2e p50", "e2e p99"}},
             {kServe8 + "static/", {"requests/s", "output tokens/s", "ttft p99", "e2e p99"}}},
            Pred::kCommitted);
  for (const auto& rec : json_file(kServe8 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe8 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- H200 serving run 9 (validate/data/h200/serve9/preregistration.md): pre-registered ----
// The prediction for each set will be Ridge with engine.host_probe_trace = the loop's own probe
// per iteration (serve_compare.py --host-probe-us loop-trace), with the shares refitted on runs
// 2-8. grid.json holds the model at constant probes of 140-440 us, committed before the
// measurement. Freeze guard as run 8's: one probe for the 2.0 req/s set, three for the static
// set; 1e-12 relative (JSON's round trip of doubles); iterations exactly.
// (Run 9's freeze guard, which held the model to the committed grid until the run was
// measured, was removed with the round-3 kernel model: the run is measured and scored on its
// committed predictions.)

// ---- H200 serving run 9, measured 2026-12-02 (validate/data/h200/serve9/README.md) ----
// The rule's input is each set's own loop probes, one (start, probe) pair per iteration (3861,
// 2083 and 977 pairs); 19 of the 21 targets met.
namespace {

const std::string kServe9 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve9/";

// Runs 9 and 10's rule: each committed study's host_probe_trace is its record's (iteration
// start_s, probe_us) pairs, in order, as serve_compare.py writes them (time to 1 us, probe to 1
// ns: within half of that), and no single host_probe.
void check_loop_trace_rule(const std::vector<ServeSet>& sets) {
  for (const auto& s : sets) {
    const auto study = load_serve_study(s.dir + s.policy + ".yaml");
    const auto its = json_file(s.dir + "e2e_serve.json")["records"][0]["iterations"];
    INFO(s.dir);
    REQUIRE(study.engine.host_probe_trace.size() == its.size());
    CHECK(study.engine.host_probe_s == 0.0);
    std::size_t bad = 0;
    for (std::size_t i = 0; i < its.size(); ++i) {
      const auto [t, p] = study.engine.host_probe_trace[i];
      if (std::fabs(t - its[i]["start_s"].get<double>()) > 0.5e-6 ||
          std::fabs(p - its[i]["probe_us"].get<double>() * 1e-6) > 0.5e-9)
        ++bad;
    }
    CHECK(bad == 0);
  }
}

}  // namespace

TEST_CASE("H200 serving run 9: each prediction is Ridge with its set's loop probes as the trace",
          "[validation][serving]") {
  check_loop_trace_rule(serve_sets(kServe9));
}

// Run 9, all sets: NOT MET (19 of 21). 2.0 req/s: E2E p50 -11.1% (measured 6088 ms); static: TPOT
// p50 +10.7% (15.05 ms).
TEST_CASE("H200 serving run 9: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe9), Pred::kCommitted);
}

// Run 9, the 19 metrics that met their budgets: 1.4 req/s every one (requests/s +0.5%, TTFT
// +3.6% / +1.6%, TPOT +6.2% / -2.4%, E2E +2.8% / -3.1%); 2.0 req/s requests/s -3.4%, TTFT -1.4% /
// +12.9%, TPOT -9.7% / -0.7%, E2E p99 +3.1%; static requests/s -2.5%, TTFT -1.1% / +2.7%, TPOT
// p99 -0.8%, E2E +2.7% / +2.7%; the static schedule's 977 iterations exactly.
TEST_CASE("H200 serving run 9: the metrics within their budgets (guard)", "[validation][serving]") {
  check_met(serve_sets(kServe9),
            {{kServe9,
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p50", "e2e p99"}},
             {kServe9 + "rate2/",
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p99"}},
             {kServe9 + "static/",
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p99", "e2e p50",
               "e2e p99"}}},
            Pred::kCommitted);
  for (const auto& rec : json_file(kServe9 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe9 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- H200 serving run 10 (validate/data/h200/serve10/preregistration.md): pre-registered ----
// Run 9 again with new request lists (seeds 10001-10003), the same model and rule. Freeze guard as
// run 9's.
// (Run 10's freeze guard, which held the model to the committed grid until the run was
// measured, was removed with the round-3 kernel model: the run is measured and scored on its
// committed predictions.)

// ---- H200 serving run 10, measured 2026-12-02 (validate/data/h200/serve10/README.md) ----
// Run 9's model and rule on new request lists: 20 of the 21 targets met.
namespace {

const std::string kServe10 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve10/";

}  // namespace

TEST_CASE("H200 serving run 10: each prediction is Ridge with its set's loop probes as the trace",
          "[validation][serving]") {
  check_loop_trace_rule(serve_sets(kServe10));
}

// Run 10, all sets: NOT MET (20 of 21). 2.0 req/s: TTFT p99 +22.9% (measured 1811 ms).
TEST_CASE("H200 serving run 10: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe10), Pred::kCommitted);
}

// Run 10, the 20 metrics that met their budgets: 1.4 req/s every one (requests/s +2.7%, TTFT
// -3.4% / -13.2%, TPOT -0.2% / -5.0%, E2E -3.5% / -4.8%); 2.0 req/s requests/s +2.6%, TTFT p50
// +0.0%, TPOT -4.3% / -11.4%, E2E -1.9% / -7.6%; static every one (requests/s +2.8%, TTFT -7.5% /
// -2.4%, TPOT +3.2% / -8.1%, E2E -4.8% / -2.6%); the static schedule's 988 iterations exactly.
TEST_CASE("H200 serving run 10: the metrics within their budgets (guard)",
          "[validation][serving]") {
  check_met(serve_sets(kServe10),
            {{kServe10,
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p50", "e2e p99"}},
             {kServe10 + "rate2/",
              {"requests/s", "output tokens/s", "ttft p50", "tpot p50", "tpot p99", "e2e p50",
               "e2e p99"}},
             {kServe10 + "static/",
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p50", "e2e p99"}}},
            Pred::kCommitted);
  for (const auto& rec : json_file(kServe10 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe10 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- H200 serving run 11 (validate/data/h200/serve11/preregistration.md): pre-registered ----
// Run 10 again with new request lists (seeds 11001-11003), the same model and rule. Freeze guard
// as runs 9 and 10's.
// (Run 11's freeze guard, which held the model to the committed grid until the run was
// measured, was removed with the round-3 kernel model: the run is measured and scored on its
// committed predictions.)

// ---- H200 serving run 11, measured 2026-12-02 (validate/data/h200/serve11/README.md) ----
// Runs 9 and 10's model and rule on new request lists, on a host slow through the 2.0 req/s set
// (loop probe median 345 us, nominal ~200): 17 of the 21 targets met.
namespace {

const std::string kServe11 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve11/";

}  // namespace

TEST_CASE("H200 serving run 11: each prediction is Ridge with its set's loop probes as the trace",
          "[validation][serving]") {
  check_loop_trace_rule(serve_sets(kServe11));
}

// Run 11, all sets: NOT MET (17 of 21). 1.4 req/s: TTFT p99 -33.4% (measured 2607 ms); 2.0 req/s:
// TTFT p50 -27.0% (88.4 ms), TTFT p99 -32.1% (6918 ms), E2E p50 -12.4% (7425 ms).
TEST_CASE("H200 serving run 11: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe11), Pred::kCommitted);
}

// Run 11, the 17 metrics that met their budgets: 1.4 req/s requests/s -0.8%, TTFT p50 +4.9%, TPOT
// +6.9% / -7.5%, E2E -5.6% / -6.5%; 2.0 req/s requests/s +0.8%, TPOT -1.2% / -16.9%, E2E p99
// -15.5%; static every one (requests/s +1.8%, TTFT -4.3% / -2.1%, TPOT +3.2% / -4.1%, E2E -3.0% /
// -2.0%); the static schedule's 821 iterations exactly.
TEST_CASE("H200 serving run 11: the metrics within their budgets (guard)",
          "[validation][serving]") {
  check_met(
      serve_sets(kServe11),
      {{kServe11,
        {"requests/s", "output tokens/s", "ttft p50", "tpot p50", "tpot p99", "e2e p50",
         "e2e p99"}},
       {kServe11 + "rate2/", {"requests/s", "output tokens/s", "tpot p50", "tpot p99", "e2e p99"}},
       {kServe11 + "static/",
        {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99", "e2e p50",
         "e2e p99"}}},
      Pred::kCommitted);
  for (const auto& rec : json_file(kServe11 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe11 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- H200 serving run 12 (validate/data/h200/serve12/preregistration.md): pre-registered ----
// Each continuous set's rate is chosen on the device: the set's load fraction x Ridge's capacity
// of the loop at the host probe measured just before the set (rate_table.json, from
// capacity.json). The rate is known only after the run, so the guard holds grids at the rates
// the table gives at probes of 200, 300 and 400 us (guard/<set>-<probe>us/, each a grid at 200,
// 300 and 400 us), and the static set's grid (static/, seed 12003, 140-440 us).
namespace {

const std::string kServe12 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve12/";

}  // namespace

// (Run 12's freeze guard, which held the model to the committed grid until the run was
// measured, was removed with the round-3 kernel model: the run is measured and scored on its
// committed predictions.)

// The committed table is the rule applied to the committed capacities: at every probe, each
// set's rate is its fraction x the capacity there rounded to 0.01 req/s (to within 0.5e-2 plus
// a rounding margin of 1e-9: the table holds round(f x C, 2)), the capacity is the median of the
// three seeds' searches, and each guard folder's list was made at the table's rate at its probe.
TEST_CASE("H200 serving run 12 (pre-registered): the rate table is the rule's",
          "[validation][serving]") {
  const auto& table = json_file(kServe12 + "rate_table.json");
  const auto& cap = json_file(kServe12 + "capacity.json")["capacity_by_probe_us"];
  CHECK(table["capacity_by_probe_us"].size() == cap.size());
  CHECK(cap.size() == 16);  // 140, 160, ..., 440 us
  for (const auto& [probe, c] : cap.items()) {
    auto xs = c["by_seed"].get<std::vector<double>>();
    REQUIRE(xs.size() == 3);
    std::sort(xs.begin(), xs.end());
    INFO("probe " << probe);
    CHECK(c["median"].get<double>() == xs[1]);
    CHECK(table["capacity_by_probe_us"][probe].get<double>() == xs[1]);
    for (const std::string set : {"set1", "set2"}) {
      const double want = table["fractions"][set].get<double>() * xs[1];
      CHECK(std::fabs(table["rate_by_probe_us"][probe][set].get<double>() - want) <= 0.005 + 1e-9);
    }
  }
  for (const std::string set : {"set1", "set2"})
    for (const char* p : {"200", "300", "400"}) {
      INFO(set << " at " << p << " us");
      CHECK(json_file(kServe12 + "guard/" + set + "-" + p + "us/predictions.json")["rate_per_s"] ==
            table["rate_by_probe_us"][p][set]);
    }
}

// ---- H200 serving run 12, measured 2026-12-02 (validate/data/h200/serve12/README.md) ----
// The rates the device chose: set 1 1.09 req/s (probe 284.6 us, 0.4 x 2.72), set 2 1.61 req/s
// (probe 344.0 us, 0.7 x 2.30); 19 of the 21 targets met.
TEST_CASE("H200 serving run 12: each prediction is Ridge with its set's loop probes as the trace",
          "[validation][serving]") {
  check_loop_trace_rule(serve_sets(kServe12));
}

// The rule's rate is the record's: each continuous set's committed prediction was made at the
// rate its record holds (params.rate_per_s), which the device chose from the table.
TEST_CASE("H200 serving run 12: each continuous prediction is at its record's rate",
          "[validation][serving]") {
  for (const auto& d : std::vector<std::string>{kServe12, kServe12 + "rate2/"}) {
    const auto rec = json_file(d + "e2e_serve.json")["records"][0];
    INFO(d);
    CHECK(json_file(d + "predictions.json")["rate_per_s"] == rec["params"]["rate_per_s"]);
  }
  CHECK(json_file(kServe12 + "e2e_serve.json")["records"][0]["params"]["rate_per_s"] == 1.09);
  CHECK(json_file(kServe12 + "rate2/e2e_serve.json")["records"][0]["params"]["rate_per_s"] == 1.61);
}

// Run 12, all sets: NOT MET (19 of 21). Set 2 (0.7 x capacity): TTFT p99 -23.2% (measured 2806
// ms), the target the pre-registration named as the likeliest miss; static: TPOT p50 +18.0%
// (15.23 ms, on a host at loop probe median 356 us).
TEST_CASE("H200 serving run 12: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe12), Pred::kCommitted);
}

// Run 12, the 19 metrics that met their budgets: set 1 every one (requests/s +0.0%, TTFT +7.4% /
// -11.9%, TPOT +4.7% / +14.1%, E2E -8.8% / -4.1%); set 2 requests/s -0.2%, TTFT p50 -5.3%, TPOT
// -5.3% / -5.9%, E2E +0.0% / -6.6%; static requests/s -3.5%, TTFT -2.9% / +0.2%, TPOT p99 -3.2%,
// E2E -4.2% / +4.2%; the static schedule's 940 iterations exactly.
TEST_CASE("H200 serving run 12: the metrics within their budgets (guard)",
          "[validation][serving]") {
  check_met(serve_sets(kServe12),
            {{kServe12,
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p50", "e2e p99"}},
             {kServe12 + "rate2/",
              {"requests/s", "output tokens/s", "ttft p50", "tpot p50", "tpot p99", "e2e p50",
               "e2e p99"}},
             {kServe12 + "static/",
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p99", "e2e p50",
               "e2e p99"}}},
            Pred::kCommitted);
  for (const auto& rec : json_file(kServe12 + "static/e2e_serve.json")["records"])
    CHECK(predicted(kServe12 + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

// ---- H200 serving run 13 (validate/data/h200/serve13/preregistration.md): pre-registered ----
// A replication of run 12 with new seeds (13001, 13002, static 13003): the same loop, rule and
// scoring, the model frozen at fa99191. The rate is chosen on the device (rate_table.json, the
// set's fraction x Ridge's capacity of the loop at the host probe just before the set), so the
// guard holds grids at the table's rates at probes of 200, 300 and 400 us (guard/<set>-<probe>us/,
// each a grid at 200, 300 and 400 us) and the static set's grid (static/, 140-440 us).
namespace {

const std::string kServe13 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve13/";

// Freeze guard of a pre-registered grid (grid.json, `points` probes): the model still gives it at
// the probes named, to 1e-12 relative (JSON's round trip of doubles; ridge --json prints 17
// significant digits) and the iterations exactly. (Runs 9-12's copy went with their guards.)
void check_grid(const ServeSet& s, const std::vector<int>& probes_us, std::size_t points) {
  std::ifstream in(s.dir + "grid.json");
  REQUIRE(in);
  const auto grid = nlohmann::json::parse(in)["predictions_by_host_probe_us"];
  CHECK(grid.size() == points);
  for (int p : probes_us) {
    auto study = load_serve_study(s.dir + s.policy + ".yaml");
    study.engine.host_probe_s = double(p) * 1e-6;  // as the loader reads "P us"
    study.engine.host_probe_trace.clear();         // the grid is at one probe throughout
    const auto now = serve_json(run_serve(study));
    const auto& want = grid.at(std::to_string(p)).at(s.policy);
    INFO(s.dir << " at " << p << " us");
    CHECK(now["iterations"] == want["iterations"]);
    CHECK(now["requests_per_s"].get<double>() ==
          Approx(want["requests_per_s"].get<double>()).epsilon(1e-12));
    for (const char* m : {"ttft", "tpot", "e2e"})
      for (const char* q : {"p50_s", "p99_s"}) {
        INFO(m << " " << q);
        CHECK(now[m][q].get<double>() == Approx(want[m][q].get<double>()).epsilon(1e-12));
      }
  }
}

}  // namespace

TEST_CASE("H200 serving run 13 (pre-registered): the model reproduces the committed grid",
          "[validation][serving]") {
  for (const std::string set : {"set1", "set2"})
    for (int p : {200, 300, 400})
      check_grid({kServe13 + "guard/" + set + "-" + std::to_string(p) + "us/", "continuous"},
                 {200, 300, 400}, 3);
  check_grid({kServe13 + "static/", "static"}, {140, 300, 440}, 31);
}

// The committed table is run 12's rule applied to the capacities of the model frozen for the run:
// at every probe, each set's rate is its fraction (run 12's: 0.4 and 0.7) x the capacity there
// rounded to 0.01 req/s (to within 0.5e-2 plus a rounding margin of 1e-9), the capacity is the
// median of the three seeds' searches, and each guard folder's list is the set's seed at the
// table's rate at its probe, with the run's length.
void check_rate_table(const std::string& dir, const std::map<std::string, int>& seeds,
                      int static_seed, int cont_requests) {
  const auto& table = json_file(dir + "rate_table.json");
  const auto& cap = json_file(dir + "capacity.json")["capacity_by_probe_us"];
  CHECK(table["fractions"] == json_file(kServe12 + "rate_table.json")["fractions"]);
  CHECK(table["fractions"]["set1"] == 0.4);
  CHECK(table["fractions"]["set2"] == 0.7);
  CHECK(table["capacity_by_probe_us"].size() == cap.size());
  CHECK(cap.size() == 16);  // 140, 160, ..., 440 us
  for (const auto& [probe, c] : cap.items()) {
    auto xs = c["by_seed"].get<std::vector<double>>();
    REQUIRE(xs.size() == 3);
    std::sort(xs.begin(), xs.end());
    INFO("probe " << probe);
    CHECK(c["median"].get<double>() == xs[1]);
    CHECK(table["capacity_by_probe_us"][probe].get<double>() == xs[1]);
    for (const std::string set : {"set1", "set2"}) {
      const double want = table["fractions"][set].get<double>() * xs[1];
      CHECK(std::fabs(table["rate_by_probe_us"][probe][set].get<double>() - want) <= 0.005 + 1e-9);
    }
  }
  for (const auto& [set, seed] : seeds) {
    CHECK(table["seeds"][set] == seed);
    for (const char* p : {"200", "300", "400"}) {
      INFO(set << " at " << p << " us");
      const auto& pred = json_file(dir + "guard/" + set + "-" + p + "us/predictions.json");
      CHECK(pred["rate_per_s"] == table["rate_by_probe_us"][p][set]);
      CHECK(pred["cont_seed"] == seed);
      CHECK(pred["cont_requests"] == cont_requests);
    }
  }
  CHECK(json_file(dir + "static/predictions.json")["static_seed"] == static_seed);
}

TEST_CASE("H200 serving run 13 (pre-registered): the rate table is the rule's",
          "[validation][serving]") {
  check_rate_table(kServe13, {{"set1", 13001}, {"set2", 13002}}, 13003, 150);
}

// ---- H200 serving run 13, measured 2026-12-03 (validate/data/h200/serve13/README.md) ----
// The rates the device chose: set 1 1.19 req/s (probe 257.3 us, 0.4 x 2.97), set 2 1.75 req/s
// (probe 312.9 us, 0.7 x 2.50); 17 of the 21 targets met.
TEST_CASE("H200 serving run 13: each prediction is Ridge with its set's loop probes as the trace",
          "[validation][serving]") {
  check_loop_trace_rule(serve_sets(kServe13));
}

// The rule's rate is the record's: each continuous set's committed prediction was made at the
// rate its record holds (params.rate_per_s), and that rate is the table's at the probe log.txt
// shows ("rate setN: host probe P us ..."): round(fraction x capacity(P), 2), the capacity linear
// between the table's probes. log.txt prints P to 0.1 us, so the rate must be the same at P -
// 0.05 and P + 0.05 us.
void check_record_rates(const std::string& dir) {
  const std::map<std::string, std::string> dirs = {{"set1", dir}, {"set2", dir + "rate2/"}};
  const auto& table = json_file(dir + "rate_table.json");
  std::vector<std::pair<double, double>> cap;  // (probe us, req/s), in probe order
  for (const auto& [probe, c] : table["capacity_by_probe_us"].items())
    cap.emplace_back(std::stod(probe), c.get<double>());
  std::sort(cap.begin(), cap.end());
  REQUIRE(cap.size() == 16);
  const auto capacity_at = [&](double p) {
    if (p <= cap.front().first) return cap.front().second;
    if (p >= cap.back().first) return cap.back().second;
    for (std::size_t i = 1; i < cap.size(); ++i)
      if (p <= cap[i].first) {
        const auto [a, ca] = cap[i - 1];
        const auto [b, cb] = cap[i];
        return ca + (cb - ca) * (p - a) / (b - a);
      }
    return cap.back().second;
  };
  std::ifstream log(dir + "log.txt");
  REQUIRE(log);
  std::map<std::string, double> probe_us;
  for (std::string line; std::getline(log, line);) {
    const std::string head = "rate set";
    const auto at = line.find(" host probe ");
    if (line.rfind(head, 0) != 0 || at == std::string::npos) continue;
    probe_us["set" + line.substr(head.size(), 1)] = std::stod(line.substr(at + 12));
  }
  REQUIRE(probe_us.size() == 2);
  for (const auto& [set, d] : dirs) {
    const double rate = json_file(d + "e2e_serve.json")["records"][0]["params"]["rate_per_s"];
    const double f = table["fractions"][set].get<double>();
    INFO(set << " at " << probe_us[set] << " us, record " << rate << " req/s");
    CHECK(json_file(d + "predictions.json")["rate_per_s"].get<double>() == rate);
    for (double dp : {-0.05, 0.0, 0.05})
      CHECK(std::round(100 * f * capacity_at(probe_us[set] + dp)) / 100 == Approx(rate));
  }
}

// Every metric the serving comparison scores.
const std::set<std::string> kAllServeMetrics = {"requests/s", "output tokens/s", "ttft p50",
                                                "ttft p99",   "tpot p50",        "tpot p99",
                                                "e2e p50",    "e2e p99"};

// The static set's schedule is the loop's: Ridge's committed study runs as many iterations as
// the record holds.
void check_static_schedule(const std::string& dir) {
  for (const auto& rec : json_file(dir + "static/e2e_serve.json")["records"])
    CHECK(predicted(dir + "static/static.yaml")["iterations"] == rec["iterations"].size());
}

TEST_CASE("H200 serving run 13: each continuous prediction is at its record's rate",
          "[validation][serving]") {
  check_record_rates(kServe13);
  CHECK(json_file(kServe13 + "e2e_serve.json")["records"][0]["params"]["rate_per_s"] == 1.19);
  CHECK(json_file(kServe13 + "rate2/e2e_serve.json")["records"][0]["params"]["rate_per_s"] == 1.75);
}

// Run 13, all sets: NOT MET (17 of 21). Set 2 (0.7 x capacity) missed four: TTFT p50 -18.9%
// (measured 35.28 ms, Ridge 28.62), TTFT p99 -93.2% (1309 ms, Ridge 89.2; the target the
// pre-registration named as the likeliest miss), TPOT p50 -19.4% (37.09 ms, Ridge 29.89) and E2E
// p50 -12.4% (3960 ms, Ridge 3470): the loop's 16 slots filled at 80-88 s, Ridge's batch peaked
// at 15. Set 1 and the static set met all seven.
TEST_CASE("H200 serving run 13: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe13), Pred::kCommitted);
}

// Run 13, the 17 metrics that met their budgets: set 1 every one (requests/s +0.0%, TTFT -0.8% /
// +1.8%, TPOT +5.2% / -14.1%, E2E -3.3% / -5.8%); set 2 requests/s +0.4%, TPOT p99 -9.6%, E2E p99
// -12.7%; static every one (requests/s -0.4%, TTFT -2.5% / -0.0%, TPOT +8.6% / -2.6%, E2E -0.6% /
// +0.2%); the static schedule's 861 iterations exactly.
TEST_CASE("H200 serving run 13: the metrics within their budgets (guard)",
          "[validation][serving]") {
  check_met(serve_sets(kServe13),
            {{kServe13,
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p50", "e2e p99"}},
             {kServe13 + "rate2/", {"requests/s", "output tokens/s", "tpot p99", "e2e p99"}},
             {kServe13 + "static/",
              {"requests/s", "output tokens/s", "ttft p50", "ttft p99", "tpot p50", "tpot p99",
               "e2e p50", "e2e p99"}}},
            Pred::kCommitted);
  check_static_schedule(kServe13);
}

// ---- H200 serving run 14 (validate/data/h200/serve14/preregistration.md): pre-registered ----
// Run 13's design with the loop's steps replayed from CUDA graphs (serve_llama.py --graphs;
// Ridge's engine model hf_graph), 1000-request continuous sets, a static set of 128, seeds 14001,
// 14002, 14003; the capacity and rate table recomputed for that loop.
namespace {
const std::string kServe14 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve14/";
}  // namespace

TEST_CASE("H200 serving run 14 (pre-registered): the model reproduces the committed grid",
          "[validation][serving]") {
  for (const std::string set : {"set1", "set2"})
    for (int p : {200, 300, 400})
      check_grid({kServe14 + "guard/" + set + "-" + std::to_string(p) + "us/", "continuous"},
                 {200, 300, 400}, 3);
  check_grid({kServe14 + "static/", "static"}, {140, 300, 440}, 31);
}

TEST_CASE("H200 serving run 14 (pre-registered): the rate table is the rule's",
          "[validation][serving]") {
  check_rate_table(kServe14, {{"set1", 14001}, {"set2", 14002}}, 14003, 1000);
  // Every study of the run is the graph loop's.
  for (const char* d : {"guard/set1-200us/", "guard/set2-400us/", "static/", "", "rate2/"})
    CHECK(json_file(kServe14 + d + "predictions.json")["graphs"] == true);
}

// ---- H200 serving run 14, measured 2026-12-03 (validate/data/h200/serve14/README.md) ----
// The rates the device chose: set 1 14.76 req/s (probe 354.3 us, 0.4 x 36.89), set 2 25.64 req/s
// (probe 370.1 us, 0.7 x 36.62); 20 of the 21 targets met.
TEST_CASE("H200 serving run 14: each prediction is Ridge with its set's loop probes as the trace",
          "[validation][serving]") {
  check_loop_trace_rule(serve_sets(kServe14));
}

TEST_CASE("H200 serving run 14: each continuous prediction is at its record's rate",
          "[validation][serving]") {
  check_record_rates(kServe14);
  CHECK(json_file(kServe14 + "e2e_serve.json")["records"][0]["params"]["rate_per_s"] == 14.76);
  CHECK(json_file(kServe14 + "rate2/e2e_serve.json")["records"][0]["params"]["rate_per_s"] ==
        25.64);
}

// Run 14, all sets: NOT MET (20 of 21). Set 2 (0.7 x capacity) missed TTFT p99 -24.4% (measured
// 102.5 ms, Ridge 77.5 ms), the target the pre-registration named as the likeliest miss.
TEST_CASE("H200 serving run 14: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe14), Pred::kCommitted);
}

// Run 14, the 20 metrics that met their budgets: set 1 every one (requests/s +0.0%, TTFT +4.6% /
// -1.4%, TPOT -2.9% / -5.6%, E2E -1.9% / -5.2%); set 2 all but TTFT p99 (requests/s +0.1%, TTFT
// p50 +2.3%, TPOT -5.2% / -5.4%, E2E -5.1% / -6.6%); static every one (requests/s +0.3%, TTFT
// +0.1% / -0.5%, TPOT -0.3% / -1.3%, E2E -0.1% / -0.4%); the static schedule's 3455 iterations.
TEST_CASE("H200 serving run 14: the metrics within their budgets (guard)",
          "[validation][serving]") {
  check_met(serve_sets(kServe14),
            {{kServe14, kAllServeMetrics},
             {kServe14 + "rate2/",
              {"requests/s", "output tokens/s", "ttft p50", "tpot p50", "tpot p99", "e2e p50",
               "e2e p99"}},
             {kServe14 + "static/", kAllServeMetrics}},
            Pred::kCommitted);
  check_static_schedule(kServe14);
}

// ---- H200 serving run 15 (validate/data/h200/serve15/), pre-registered and measured ----
// A replication of run 14 with seeds 15001-15003 and nothing else changed: run 14's rate table
// byte for byte, the model of run 14's pre-registration. The rates the device chose: set 1 14.66
// req/s (probe 367.6 us, 0.4 x 36.65), set 2 26.61 req/s (probe 278.5 us, 0.7 x 38.02).
namespace {
const std::string kServe15 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve15/";
}  // namespace

TEST_CASE("H200 serving run 15: run 14's table, and each prediction by the rule",
          "[validation][serving]") {
  CHECK(json_file(kServe15 + "rate_table.json") == json_file(kServe14 + "rate_table.json"));
  check_record_rates(kServe15);
  CHECK(json_file(kServe15 + "e2e_serve.json")["records"][0]["params"]["rate_per_s"] == 14.66);
  CHECK(json_file(kServe15 + "rate2/e2e_serve.json")["records"][0]["params"]["rate_per_s"] ==
        26.61);
  check_loop_trace_rule(serve_sets(kServe15));
  for (const char* d : {"", "rate2/", "static/"})
    CHECK(json_file(kServe15 + d + "predictions.json")["graphs"] == true);
}

// Run 15, all sets: NOT MET (20 of 21). Set 2 (0.7 x capacity) missed TTFT p99 -26.8% (measured
// 115.4 ms, Ridge 84.5 ms), as in run 14 and as the pre-registration expected.
TEST_CASE("H200 serving run 15: every set within the targets (target, not met)",
          "[validation][serving][!shouldfail]") {
  check_targets(serve_sets(kServe15), Pred::kCommitted);
}

// Run 15, the 20 metrics that met their budgets: set 1 every one (requests/s +0.0%, TTFT +4.8% /
// -0.1%, TPOT -4.8% / -6.6%, E2E -4.7% / -5.8%; the host ran at a probe median of 354 us, 1.8x
// nominal); set 2 all but TTFT p99 (requests/s +0.0%, TTFT p50 +4.4%, TPOT -5.0% / -6.1%, E2E
// -5.0% / -7.2%); static every one (requests/s -0.1%, TTFT +0.6% / -0.4%, TPOT +0.5% / -0.4%, E2E
// -0.3% / +0.2%); the static schedule's 3745 iterations exactly.
TEST_CASE("H200 serving run 15: the metrics within their budgets (guard)",
          "[validation][serving]") {
  check_met(serve_sets(kServe15),
            {{kServe15, kAllServeMetrics},
             {kServe15 + "rate2/",
              {"requests/s", "output tokens/s", "ttft p50", "tpot p50", "tpot p99", "e2e p50",
               "e2e p99"}},
             {kServe15 + "static/", kAllServeMetrics}},
            Pred::kCommitted);
  check_static_schedule(kServe15);
}

// ---- H200 serving run 16 (validate/data/h200/serve16/), pre-registered and measured ----
// Run 14's design with seeds 16001-16003, predicted with the loop's housekeeping priced
// (engine.row_move / row_shift) from the loop's move and shift timed alone in the same call
// (validate/data/h200/serve_housekeeping). Rates: set 1 15.38 req/s (probe 251.8 us, 0.4 x 38.45),
// set 2 26.95 req/s (probe 250.2 us, 0.7 x 38.49).
namespace {
const std::string kServe16 = std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve16/";
const std::string kHousekeeping =
    std::string(RIDGE_SOURCE_DIR) + "/validate/data/h200/serve_housekeeping/";
}  // namespace

// The two figures are derive.py's rule on the timing (housekeeping.json): each timing t at probe p
// brought to host_probe_us with the engine's host share, t / (1 - 0.85 + 0.85 p / 197 us); the
// median per point; the median over the points of each kind; to 1e-4 ms as model.json rounds.
// Every study of run 16 carries them.
TEST_CASE("H200 serving run 16: the housekeeping figures are the rule's on their timing",
          "[validation][serving]") {
  const auto& doc = json_file(kHousekeeping + "housekeeping.json");
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  };
  std::map<std::string, std::vector<double>> per;
  for (const auto& p : doc["points"]) {
    const auto t = p["times_s"].get<std::vector<double>>();
    const auto q = p["probes_us"].get<std::vector<double>>();
    REQUIRE(t.size() == q.size());
    REQUIRE(t.size() == 40);
    std::vector<double> norm;
    for (std::size_t i = 0; i < t.size(); ++i) norm.push_back(t[i] / (0.15 + 0.85 * q[i] / 197.0));
    per[p["kind"].get<std::string>()].push_back(median(norm));
  }
  REQUIRE(per["move"].size() == 5);
  REQUIRE(per["shift"].size() == 9);
  const auto& model = json_file(kHousekeeping + "model.json");
  CHECK(model["row_move_ms"].get<double>() == Approx(median(per["move"]) * 1e3).margin(0.5e-4));
  CHECK(model["row_shift_ms"].get<double>() == Approx(median(per["shift"]) * 1e3).margin(0.5e-4));
  for (const auto& s : serve_sets(kServe16)) {
    const auto study = load_serve_study(s.dir + s.policy + ".yaml");
    INFO(s.dir);
    CHECK(study.engine.hf_graph);
    CHECK(study.engine.row_move_s == Approx(model["row_move_ms"].get<double>() * 1e-3));
    CHECK(study.engine.row_shift_s == Approx(model["row_shift_ms"].get<double>() * 1e-3));
  }
}

TEST_CASE("H200 serving run 16: run 14's table, and each prediction by the rule",
          "[validation][serving]") {
  CHECK(json_file(kServe16 + "rate_table.json") == json_file(kServe14 + "rate_table.json"));
  check_record_rates(kServe16);
  CHECK(json_file(kServe16 + "e2e_serve.json")["records"][0]["params"]["rate_per_s"] == 15.38);
  CHECK(json_file(kServe16 + "rate2/e2e_serve.json")["records"][0]["params"]["rate_per_s"] ==
        26.95);
  check_loop_trace_rule(serve_sets(kServe16));
}

// Run 16: MET, all 21: set 1 requests/s -0.0%, TTFT +5.7% / +5.3%, TPOT -1.2% / -3.7%, E2E
// -1.1% / -1.5%; set 2 +0.0%, +1.1% / -15.3% (108.8 ms measured, 92.2 ms Ridge), -2.3% / -2.6%,
// -3.4% / -4.1%; static +0.4%, -0.1% / +0.0%, -0.1% / -2.4%, -0.3% / -0.0%; the static schedule's
// 3674 iterations exactly. The committed predictions, and the model still gives them.
TEST_CASE("H200 serving run 16: every set within the targets", "[validation][serving]") {
  const auto sets = serve_sets(kServe16);
  check_targets(sets, Pred::kCommitted);
  check_targets(sets, Pred::kNow);
  check_static_schedule(kServe16);
}
