// Pieces of the topoaware command shared by its subcommands.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace topoaware {

// Runs Graphviz's `dot -Tsvg` on DOT text (no shell involved); throws std::runtime_error with
// dot's message, or a hint to install graphviz when dot is missing.
std::string dot_to_svg(const std::string &dot);

// topoaware plan (cli/plan.cpp). Axis values stay strings so that the layout parser gives its
// own messages ("--tp=abc": tp must be a whole number ...).
struct PlanOptions {
  CLI::App *command = nullptr;
  std::string topology;
  std::string tp = "1", pp, dp, cp, ep, order;
  int gpus_per_node = 8;
  std::string free, busy;
  std::string mode = "prefer";
  double comm_fraction = 0.3;
  std::string format = "text";
};
void add_plan_command(CLI::App &app, PlanOptions &options);
// Exit status: 0 placed (ideal or not), 4 no nodes free for it now.
int run_plan(const PlanOptions &options);

}  // namespace topoaware
