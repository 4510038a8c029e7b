// `ridge collective OP bytes=SIZE --system S --gpus N`: one NCCL collective simulated on a system's
// links (time, algbw, busbw in nccl-tests' conventions, the algorithm and protocol and why, the
// bottleneck link); `--sweep 8B:8GiB` prints nccl-tests' table over sizes.
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/system_loader.hpp"
#include "hw/units.hpp"
#include "models/collective.hpp"

namespace ridge::cli {

namespace {

double parse_size(const std::string& text, const std::string& what) {
  hw::ParsedQuantity q = hw::parse_quantity(text, hw::Dimension::kBytes);
  if (!q.error.empty()) {
    const hw::ParsedQuantity plain = hw::parse_quantity(text, hw::Dimension::kCount);
    if (plain.error.empty()) q = plain;
  }
  if (!q.error.empty()) throw std::invalid_argument(fmt::format("{}: {}", what, q.error));
  if (!(q.value >= 1) || q.value > 1e15 || q.value != std::floor(q.value))
    throw std::invalid_argument(
        fmt::format("{}: '{}' is not a whole number of bytes in [1 B, 1 PB]", what, text));
  return q.value;
}

nlohmann::json result_json(const models::CollectiveResult& r) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : r.tune.cells) {
    nlohmann::json cj = {{"algo", std::string(hw::nccl_algo_name(c.algo))},
                         {"proto", std::string(hw::nccl_proto_name(c.proto))},
                         {"enabled", c.enabled}};
    if (c.enabled) {
      cj["time_us"] = c.time_us;
      cj["latency_us"] = c.latency_us;
      cj["busbw_gbps"] = c.busbw_gbps;
    } else {
      cj["why_disabled"] = c.why_disabled;
    }
    cells.push_back(cj);
  }
  return {{"op", std::string(models::coll_op_name(r.op))},
          {"bytes", r.bytes},
          {"gpus", r.gpus},
          {"algo", r.p2p ? "p2p" : std::string(hw::nccl_algo_name(r.algo))},
          {"proto", std::string(hw::nccl_proto_name(r.proto))},
          {"forced", r.forced},
          {"why", r.why},
          {"time_us", r.time_s * 1e6},
          {"latency_us", r.latency_s * 1e6},
          {"algbw_gbps", r.algbw / 1e9},
          {"busbw_gbps", r.busbw / 1e9},
          {"nccl_model_us", r.nccl_model_us},
          {"channels", r.channels},
          {"sm_blocks_per_gpu", r.sm_blocks},
          {"flows", r.flows},
          {"sm_side",
           {{"bound_gbps", r.sm_bound / 1e9},
            {"loads_stores_per_byte", r.sm_loads_stores_per_byte},
            {"binds", r.sm_bound_binds},
            {"fifo_reuse_mb", r.fifo_reuse_bytes / 1e6},
            {"fifo_past_l2", r.fifo_past_l2},
            {"fifo_miss_rate", r.fifo_miss_rate}}},
          {"bottleneck",
           {{"link", r.bottleneck},
            {"capacity_gbps", r.bottleneck_capacity / 1e9},
            {"utilisation", r.bottleneck_utilisation}}},
          {"nccl_model", cells}};
}

std::string result_text(const models::CollectiveResult& r, const hw::SystemSpec& s) {
  std::string out =
      fmt::format("{} of {} on {} GPUs of {}\n", models::coll_op_name(r.op),
                  hw::format_quantity(r.bytes, hw::Dimension::kBytes), r.gpus, s.name);
  out +=
      fmt::format("  algorithm {}, protocol {}: {}\n", r.p2p ? "p2p" : hw::nccl_algo_name(r.algo),
                  hw::nccl_proto_name(r.proto), r.why);
  out += fmt::format("  time {}   algbw {:.2f} GB/s   busbw {:.2f} GB/s\n", fmt_time(r.time_s),
                     r.algbw / 1e9, r.busbw / 1e9);
  out += fmt::format("  latency part {} (NCCL's latency model); {} channels, {} SMs per GPU busy\n",
                     fmt_time(r.latency_s), r.channels, r.sm_blocks);
  if (r.sm_bound > 0) {
    // A ring's bound is its blocks together per edge, a tree's per port direction (both trees'
    // flows); a point-to-point one is per peer, over that peer's channels.
    const int blocks = r.p2p ? r.channels : r.sm_blocks;
    out += fmt::format(
        "  SM side: {} blocks x {} of loads + stores, {:.2f} per byte sent: {} per {}, {}\n",
        blocks, fmt_bw(r.sm_bound * r.sm_loads_stores_per_byte / blocks),
        r.sm_loads_stores_per_byte, fmt_bw(r.sm_bound),
        r.p2p                           ? "peer"
        : r.algo == hw::NcclAlgo::kTree ? "port direction (tree)"
                                        : "ring edge",
        r.sm_bound_binds ? "below the links: the bottleneck" : "above the links");
    if (r.fifo_reuse_bytes > 0)
      out += fmt::format(
          "  LL128 FIFO: {:.1f} MB through the L2 between a line's write and its read, {} its "
          "{}{}\n",
          r.fifo_reuse_bytes / 1e6, r.fifo_past_l2 ? "past" : "within",
          hw::format_quantity(s.node.gpu.memory.l2_size, hw::Dimension::kBytes),
          !r.fifo_past_l2    ? ""
          : r.fifo_miss_rate ? ": the blocks' rate past it (fitted)"
                             : ": no rate measured past it for this GPU, the SM side as within");
  }
  // When the channels' SM side binds, the busiest link is not what limits: say so in its label.
  if (!r.bottleneck.empty())
    out += fmt::format("  {}: {} ({} per direction), {:.0f}% of it used while data moved\n",
                       r.sm_bound > 0 && r.sm_bound_binds ? "busiest link" : "bottleneck",
                       r.bottleneck, fmt_bw(r.bottleneck_capacity), 100 * r.bottleneck_utilisation);
  if (r.nccl_model_us > 0)
    out +=
        fmt::format("  NCCL's own model for this choice: {}\n", fmt_time(r.nccl_model_us * 1e-6));
  return out;
}

// nccl-tests' element count and type for a size (float, 4 bytes).
std::string nccl_tests_row(const models::CollectiveResult& r) {
  const long long count = static_cast<long long>(r.bytes / 4);
  const char* redop = (r.op == models::CollOp::kAllReduce || r.op == models::CollOp::kReduce ||
                       r.op == models::CollOp::kReduceScatter)
                          ? "sum"
                          : "none";
  const int root = (r.op == models::CollOp::kBroadcast || r.op == models::CollOp::kReduce) ? 0 : -1;
  const double us = r.time_s * 1e6;
  const std::string cols =
      fmt::format("{:8.2f} {:7.2f} {:7.2f}    N/A", us, r.algbw / 1e9, r.busbw / 1e9);
  return fmt::format("{:>12} {:>12} {:>8} {:>6} {:>6} {} {}\n", static_cast<long long>(r.bytes),
                     count, "float", redop, root, cols, cols);
}

// --ranks: comma-separated GPU indices and START:STOP[:STEP] ranges (STOP exclusive), e.g.
// "0:64:8" for one GPU per node of 8-GPU nodes.
std::vector<int> parse_ranks(const std::string& text, int total) {
  std::vector<int> out;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument(fmt::format("--ranks '{}': {}", text, why));
  };
  const auto number = [&](const std::string& t) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos || t.size() > 9)
      throw bad(fmt::format("expected a non-negative integer, got '{}'", t));
    return std::stoi(t);
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    std::vector<std::string> parts;
    for (std::size_t p = 0;;) {
      const std::size_t c = item.find(':', p);
      parts.push_back(item.substr(p, c == std::string::npos ? std::string::npos : c - p));
      if (c == std::string::npos) break;
      p = c + 1;
    }
    if (parts.size() == 1) {
      out.push_back(number(parts[0]));
    } else if (parts.size() <= 3) {
      const int start = number(parts[0]), stop = number(parts[1]);
      const int step = parts.size() == 3 ? number(parts[2]) : 1;
      if (step < 1) throw bad("a range's step must be at least 1");
      if (stop <= start) throw bad(fmt::format("empty range '{}'", item));
      for (int r = start; r < stop && out.size() <= 1u << 20; r += step) out.push_back(r);
    } else {
      throw bad(fmt::format("expected N or START:STOP[:STEP], got '{}'", item));
    }
    pos = comma + 1;
  }
  std::vector<int> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
    throw bad("a GPU is listed twice");
  if (sorted.back() >= total)
    throw bad(fmt::format("GPU {} is past the system's {} GPUs (0..{})", sorted.back(), total,
                          total - 1));
  if (out.size() < 2) throw bad("a collective needs at least 2 GPUs");
  return out;
}

}  // namespace

void register_collective(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand(
      "collective", "an NCCL collective on a system's links: time, algbw, busbw, bottleneck");
  struct Args {
    std::string op, size, system = "dgx-h200", algo, proto, sweep, ranks;
    int gpus = 8;
    double factor = 2;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option(
         "op", a->op,
         "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv")
      ->required();
  cmd->add_option("size", a->size, "bytes=SIZE (nccl-tests' size: e.g. bytes=1GiB)");
  cmd->add_option("--system", a->system, "system name or file (ridge system list)")
      ->capture_default_str();
  auto* gpus_opt = cmd->add_option("--gpus", a->gpus, "GPUs taking part: the first N of the system")
                       ->capture_default_str();
  cmd->add_option("--ranks", a->ranks,
                  "the GPUs taking part, in rank order: indices and START:STOP[:STEP] ranges, "
                  "e.g. 0:64:8 (one per 8-GPU node)")
      ->excludes(gpus_opt);
  cmd->add_option("--algo", a->algo, "force: ring, tree, nvls, nvls_tree, collnet, collnet_chain");
  cmd->add_option("--proto", a->proto, "force: ll, ll128, simple");
  cmd->add_option("--sweep", a->sweep, "MIN:MAX sizes, nccl-tests' table (e.g. 8B:8GiB)");
  cmd->add_option("--factor", a->factor, "size step of --sweep (nccl-tests -f)")
      ->capture_default_str();
  auto* no_nvls = cmd->add_flag("--no-nvls")->description("NVLS off, as NCCL_NVLS_ENABLE=0");
  auto* as_json = add_json_flag(cmd);
  cmd->callback([&action, a, as_json, no_nvls] {
    action = [=] {
      models::CollectiveRequest req;
      if (!models::parse_coll_op(a->op, req.op))
        throw std::invalid_argument(fmt::format(
            "collective: unknown op '{}'; expected all_reduce, all_gather, reduce_scatter, "
            "all_to_all, broadcast, reduce or send_recv",
            a->op));
      if (!a->algo.empty()) {
        hw::NcclAlgo al;
        if (!models::parse_nccl_algo(a->algo, al))
          throw std::invalid_argument(
              fmt::format("--algo: unknown '{}'; expected ring, tree, nvls, nvls_tree, collnet or "
                          "collnet_chain",
                          a->algo));
        req.algo = al;
      }
      if (!a->proto.empty()) {
        hw::NcclProto pr;
        if (!models::parse_nccl_proto(a->proto, pr))
          throw std::invalid_argument(
              fmt::format("--proto: unknown '{}'; expected ll, ll128 or simple", a->proto));
        req.proto = pr;
      }
      const hw::SystemSpec sys = hw::find_system(a->system);
      if (!a->ranks.empty()) {
        req.ranks = parse_ranks(a->ranks, sys.total_gpus());
        a->gpus = static_cast<int>(req.ranks.size());
      }
      if (const std::string err = hw::check_gpu_count(sys, a->gpus); !err.empty())
        throw std::invalid_argument(err);
      req.gpus = a->gpus;
      req.nvls_enabled = no_nvls->count() == 0;
      const hw::NcclTuning tuning = hw::load_nccl_tuning(sys.nccl.version);
      std::vector<std::pair<std::string, std::string>> files = sys.files;
      files.insert(files.end(), tuning.files.begin(), tuning.files.end());
      if (a->sweep.empty()) {
        if (a->size.rfind("bytes=", 0) != 0)
          throw std::invalid_argument(
              fmt::format("collective: expected bytes=SIZE (e.g. bytes=1GiB), got '{}'", a->size));
        req.bytes = parse_size(a->size.substr(6), "bytes");
        const models::CollectiveResult r = models::simulate_collective(sys, tuning, req);
        nlohmann::json j = result_json(r);
        j["system"] = sys.name;
        j["provenance"] = provenance(files);
        emit(as_json->count() > 0, result_text(r, sys) + provenance_text(files), j);
        return 0;
      }
      const auto colon = a->sweep.find(':');
      if (colon == std::string::npos)
        throw std::invalid_argument(
            fmt::format("--sweep: expected MIN:MAX (e.g. 8B:8GiB), got '{}'", a->sweep));
      const double lo = parse_size(a->sweep.substr(0, colon), "--sweep minimum");
      const double hi = parse_size(a->sweep.substr(colon + 1), "--sweep maximum");
      if (hi < lo) throw std::invalid_argument("--sweep: the maximum is below the minimum");
      if (!(a->factor > 1.0) || a->factor > 1024)
        throw std::invalid_argument("--factor: expected a number in (1, 1024]");
      if (std::log(hi / lo) / std::log(a->factor) > 4096)
        throw std::invalid_argument("--sweep: more than 4096 sizes; raise --factor");
      std::string text = fmt::format(
          "# ridge collective {} on {} GPUs of {} (simulated; nccl-tests layout)\n"
          "#\n"
          "#                                                 out-of-place                   "
          "    in-place\n"
          "#       size        count     type  redop   root     time   algbw   busbw #wrong   "
          "  time   algbw   busbw #wrong\n"
          "#        (B)   (elements)                             (us)  (GB/s)  (GB/s)          "
          "  (us)  (GB/s)  (GB/s)\n",
          models::coll_op_name(req.op), a->gpus, sys.name);
      nlohmann::json rows = nlohmann::json::array();
      double bus_sum = 0;
      int count = 0;
      for (double b = lo; b <= hi * (1 + 1e-12); b = std::floor(b * a->factor)) {
        req.bytes = b;
        const models::CollectiveResult r = models::simulate_collective(sys, tuning, req);
        text += nccl_tests_row(r);
        rows.push_back(result_json(r));
        bus_sum += r.busbw / 1e9;
        ++count;
      }
      text += fmt::format("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : {:.4f} \n#\n",
                          count ? bus_sum / count : 0.0);
      nlohmann::json j = {{"system", sys.name},
                          {"gpus", a->gpus},
                          {"results", rows},
                          {"average_bus_bandwidth_gbps", count ? bus_sum / count : 0.0},
                          {"provenance", provenance(files)}};
      emit(as_json->count() > 0, text, j);
      return 0;
    };
  });
}

}  // namespace ridge::cli
