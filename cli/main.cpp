// ridge: predicts how long GPU work takes, what bounds it and what would change it.
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "cli/commands.hpp"
#include "cli/output.hpp"
#include "hw/config.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "ridge: a GPU performance model and simulator. `ridge` alone runs the default study."};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", RIDGE_VERSION);
  ridge::cli::Action action;
  ridge::cli::register_hw(app, action);
  ridge::cli::register_roofline(app, action);
  ridge::cli::register_occupancy(app, action);
  ridge::cli::register_describe(app, action);
  ridge::cli::register_kernel(app, action);
  ridge::cli::register_predict(app, action);
  ridge::cli::register_calibrate(app, action);
  ridge::cli::register_compare(app, action);
  ridge::cli::register_run(app, action);
  ridge::cli::register_system(app, action);
  ridge::cli::register_collective(app, action);
  ridge::cli::register_serve(app, action);
  ridge::cli::register_import(app, action);
  ridge::cli::register_chakra(app, action);
  ridge::cli::register_sweep(app, action);
  ridge::cli::register_plan(app, action);
  ridge::cli::install_progress_reporter();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every argument error exits 2, as a config error does (CLI11's
    // own codes are 100-115).
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    if (!action) return ridge::cli::run_default_study();
    return action();
  } catch (const ridge::hw::ConfigException& e) {
    std::cerr << e.what() << "\n";
    std::cerr << fmt::format("ridge: {} problem(s) in the configuration; nothing was written\n",
                             e.errors().size());
    return 2;
  } catch (const ridge::cli::OutputError& e) {
    std::cerr << "ridge: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "ridge: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ridge: " << e.what() << "\n";
    return 1;
  }
}
