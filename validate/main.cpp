// ridge-bench: measures a GPU and writes measurement records (validate/README.md).
//   ridge-bench --suite memory,kernels --out FILE.json [--overlay FILE.yaml] [--quick] [--list]
//   ridge-bench --cases CASES.json --out FILE.json   (the listed cases only; suite_cases.cpp)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "suites.hpp"

using namespace ridge::validate;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

void usage(FILE* f) {
  std::fprintf(f,
               "usage: ridge-bench [--suite NAME[,NAME...]|all] [--out FILE.json] "
               "[--overlay FILE.yaml] [--quick] [--device N] [--list]\n"
               "       ridge-bench --cases CASES.json [--out FILE.json] [--device N]\n");
}

Json make_doc(Context& ctx, const Json& device) {
  Json doc = Json::object();
  doc["schema"] = "ridge.records/1";
  Json gen = Json::object();
  gen["tool"] = "ridge-bench";
  gen["version"] = RIDGE_VALIDATE_VERSION;
  gen["command"] = ctx.opt().command;
  gen["date"] = utc_now_iso();
  Json suites = Json::array();
  for (const auto& s : ctx.opt().suites) suites.push_back(s);
  gen["suites"] = suites;
  gen["quick"] = ctx.quick();
  doc["generated_by"] = gen;
  doc["device"] = device;
  doc["failures"] = Json::array_of(ctx.failures());
  Json recs = Json::array();
  for (const auto& r : ctx.records()) recs.push_back(r);
  doc["records"] = recs;
  return doc;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 0; i < argc; ++i) {
    if (i) opt.command += ' ';
    opt.command += argv[i];
  }
  bool list = false;
  std::string suites = "all";
  std::string cases;
  bool suites_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ridge-bench: %s needs a value\n", name);
        std::exit(64);
      }
      return argv[++i];
    };
    if (a == "--suite" || a == "--suites") {
      suites = value("--suite");
      suites_given = true;
    } else if (a == "--cases") {
      cases = value("--cases");
    } else if (a == "--out") {
      opt.out = value("--out");
    } else if (a == "--overlay") {
      opt.overlay = value("--overlay");
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--device") {
      opt.device = std::atoi(value("--device").c_str());
    } else if (a == "--list") {
      list = true;
    } else if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    } else {
      std::fprintf(stderr, "ridge-bench: unknown argument '%s'\n", a.c_str());
      usage(stderr);
      return 64;
    }
  }
  if (list) {
    for (const auto& s : all_suites()) std::printf("%-10s %s\n", s.name, s.description);
    return 0;
  }
  std::vector<const Suite*> chosen;
  // --cases alone runs only the listed cases; with --suite, the suites first.
  if (!cases.empty() && !suites_given) suites.clear();
  for (const auto& name : split(suites, ',')) {
    if (name == "all") {
      for (const auto& s : all_suites()) chosen.push_back(&s);
      continue;
    }
    auto it = std::find_if(all_suites().begin(), all_suites().end(),
                           [&](const Suite& s) { return name == s.name; });
    if (it == all_suites().end()) {
      std::fprintf(stderr, "ridge-bench: unknown suite '%s' (--list shows them)\n", name.c_str());
      return 64;
    }
    chosen.push_back(&*it);
  }
  for (const Suite* s : chosen) opt.suites.push_back(s->name);
  if (!cases.empty()) opt.suites.push_back("cases:" + cases);

  try {
    Context ctx(opt);
    Json device = device_json(ctx);
    auto write = [&]() {
      if (opt.out.empty()) return;
      // Clocks seen while timing go into the device block at the end.
      Json dev = device_json(ctx);
      write_records_file(opt.out, make_doc(ctx, dev));
      std::fprintf(stderr, "wrote %zu records to %s\n", ctx.records().size(), opt.out.c_str());
    };
    ctx.on_fatal = write;
    std::fprintf(stderr, "ridge-bench on %s (%d SMs), suites:", ctx.prop().name,
                 ctx.prop().multiProcessorCount);
    for (const auto& s : opt.suites) std::fprintf(stderr, " %s", s.c_str());
    std::fprintf(stderr, "\n");
    for (const Suite* s : chosen) {
      ctx.run_case(std::string("suite/") + s->name, [&] { s->run(ctx); });
    }
    if (!cases.empty()) {
      std::size_t n = 0;
      ctx.run_case("cases", [&] { n = run_cases_file(ctx, cases); });
      std::fprintf(stderr, "%zu case(s) listed in %s\n", n, cases.c_str());
    }
    if (!opt.overlay.empty()) {
      ctx.run_case("overlay", [&] { write_overlay(ctx, opt.overlay); });
    }
    write();
    if (!ctx.failures().empty()) {
      std::fprintf(stderr, "%zu case(s) failed:\n", ctx.failures().size());
      for (const auto& f : ctx.failures()) std::fprintf(stderr, "  %s\n", f.c_str());
      return 3;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ridge-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
