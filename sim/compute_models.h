#pragma once

// Compute models: what turns the work a kernel or program describes (base/work.h: a kernel's
// dot or vector op, a grid step, a pallas_call's launch, an XLA op) into time on a core and
// traffic on its chip's HBM port. A chip's topology selects one by name
// (`cost { model: "..." parameter { name: ... value: ... } }`); like the memory timing models
// (sim/memory_models.h) each registers itself, a plugin may add its own, and each declares
// its parameters with a default, a range, a unit and a description.
//
// "roofline", the default, is tpusim's calibrated model (docs/time-model.md), from the
// chip's peak rates and its `cost` fields.

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/core_port.h"
#include "base/work.h"
#include "sim/base_names.h"
#include "sim/model_registry.h"
#include "sim/parameters.h"
#include "topologies/topology.pb.h"

namespace tpusim::sim {

// What the core does for one piece of work, in order: `launch` on its own; then `unit` for
// `cycles` while `hbm_bytes` stream through the chip's HBM port at `hbm_bytes_per_second`
// (the rate the work reaches: the port is held for bytes / rate, and DMAs in flight share it
// chunk by chunk); then, once both are done, `exposed` (what the work's pipeline does not
// overlap: its first loads and last stores).
struct ComputePlan {
  Picoseconds launch = 0;
  ComputeUnit unit = ComputeUnit::kScalar;
  uint64_t cycles = 0;
  uint64_t hbm_bytes = 0;
  double hbm_bytes_per_second = 0;
  Picoseconds exposed = 0;

  // The plan's time when nothing contends: launch + max(unit, HBM) + exposed.
  Picoseconds Alone(double clock_hz) const;
};

// The most simulated time one piece of work may take: simulated time counts picoseconds in 64
// bits (about 213 days), and a run adds up many pieces.
inline constexpr double kMaxWorkSeconds = 1e6;

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  // `what` names the work in errors (the op's label). Work that would take more than
  // kMaxWorkSeconds is Error(kInvalidArgument) naming it and the topology values its time
  // comes from.
  virtual ComputePlan Plan(const base::Work& work, std::string_view what) const = 0;
  // What `tpusim describe` shows of it, with units.
  virtual std::vector<Parameter> parameters() const = 0;
};

struct ComputeModelInfo {
  std::string name;
  std::string summary;  // one line, for `tpusim describe --models`
  std::vector<base::Param> parameters;
  // `chip` outlives the model it builds (ComputeModels::Build).
  std::function<std::unique_ptr<ComputeModel>(const config::ChipConfig& chip,
                                              const ModelParameters& parameters)>
      build;
};

class ComputeModels {
 public:
  // A taken name keeps its first model; the clash is an Error when the models are next used
  // (and fails the load of a plugin that made it).
  static void Register(ComputeModelInfo model);
  static const ComputeModelInfo* Find(const std::string& name);
  static std::vector<const ComputeModelInfo*> All();  // by name

  // The model `chip.cost` selects ("roofline" when it names none), built for `chip` with its
  // parameters checked. `what` names the chip in errors ("chip 3 (x=1, y=1)"). `chip` outlives
  // the model (a TensorCore's is its Chip's): a model may keep a reference to it.
  static std::unique_ptr<ComputeModel> Build(const config::ChipConfig& chip,
                                             const std::string& what);
};

// Registers a model from a static initialiser: `static ComputeModelRegistration r{{...}};`.
struct ComputeModelRegistration {
  explicit ComputeModelRegistration(ComputeModelInfo model) {
    ComputeModels::Register(std::move(model));
  }
};

}  // namespace tpusim::sim
