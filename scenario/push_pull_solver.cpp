#include "scenario/push_pull_solver.hpp"

#include "scenario/run_plan.hpp"

namespace ddlsim::sim {

std::string push_pull_fluid_refusal(const Scenario& sc) {
  const auto traits = sc.training.sync_model->traits();
  if (!traits.uses_servers) return "no parameter servers";
  if (sc.network.push_pull_simgrid) return "network.push_pull_solver is \"simgrid\"";
  if (traits.uses_collective || traits.uses_subgroup_collectives || (sc.plan && sc.plan->collective_servers))
    return "the run also all-reduces";
  if (sc.network.model == NetworkModel::TCP)
    return "network.model \"tcp\" (LV08 weighs flows by their links' bandwidths and adds cross traffic)";
  if (!sc.network.link_traces.empty()) return "link traces";
  return {};
}

}  // namespace ddlsim::sim
