// `ridge predict CASES --gpu NAME`: placeholder until the full command lands.
#include "cli/commands.hpp"

namespace ridge::cli {
void register_predict(CLI::App&, Action&) {}
}  // namespace ridge::cli
