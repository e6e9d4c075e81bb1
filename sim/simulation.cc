#include "sim/simulation.h"

namespace tpusim::sim {

namespace {
struct FirstModule : sc_core::sc_module {
  explicit FirstModule(sc_core::sc_module_name name) : sc_module(name) {}
};
}  // namespace

Simulation::Simulation(const config::Topology& topology, EngineOptions options)
    : first_modules_{std::make_unique<FirstModule>("tpusim_first_module_0"),
                     std::make_unique<FirstModule>("tpusim_first_module_1")},
      slice_(std::make_unique<Slice>("slice", topology, std::move(options))) {}

Simulation::~Simulation() {
  first_modules_[0].reset();
  first_modules_[1].reset();
  slice_.reset();
}

RunOutcome Simulation::Run(const CoreProgram& program, const std::string& name) {
  RunOutcome outcome = slice_->Run(program, name);
  // Only a failed run leaves threads suspended (a run that ends well ends them all), and
  // finding them walks every object of the tree.
  if (!outcome.ok) context_.EndSuspendedThreads();
  return outcome;
}

}  // namespace tpusim::sim

namespace tpusim::base {

std::unique_ptr<Engine> BuildEngine(const config::Topology& topology, EngineOptions options) {
  return std::make_unique<sim::Simulation>(topology, std::move(options));
}

}  // namespace tpusim::base
