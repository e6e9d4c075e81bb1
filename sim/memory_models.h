#pragma once

// Timing models a memory's port can use, by name, as a topology selects them
// (`hbm { model: "row_buffer" parameter { name: "banks" value: 64 } }`). Like a kernel, a
// model registers itself (a plugin may add its own); each declares its parameters with a
// default, a range, a unit and a description, and an unknown parameter is an error.
//
// A model is a TLM-2.0 target module that the chip's router sends the memory's DMA chunks to
// instead of the Memory itself. It books time by the loosely-timed rules (sim/chunk.h): the
// annotated delay says when a chunk reaches it and, on return, when it is done. For the bytes
// it binds `storage`'s socket (DMI and debug transport), or keeps its own.
//
// "bandwidth", the default, is the Memory's own target: a chunk holds the port for
// bytes / bandwidth.

#include <functional>
#include <memory>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "sim/model_registry.h"
#include "topologies/topology.pb.h"

namespace tpusim::sim {

class Memory;

// What a factory returns: the module (a child of the chip) and the socket the router binds.
struct MemoryTarget {
  std::unique_ptr<sc_core::sc_module> module;
  tlm::tlm_base_target_socket_b<>* socket = nullptr;
};

struct MemoryModel {
  std::string name;
  std::string summary;  // one line, for `tpusim describe --models`
  std::vector<base::Param> parameters;
  // Builds the model as `module_name` in front of `storage`. Null for "bandwidth", which is
  // the Memory's own target.
  std::function<MemoryTarget(const char* module_name, Memory& storage,
                             const ModelParameters& parameters)>
      build;
};

class MemoryModels {
 public:
  // A taken name keeps its first model; the clash is an Error when the models are next used
  // (and fails the load of a plugin that made it).
  static void Register(MemoryModel model);
  static const MemoryModel* Find(const std::string& name);
  static std::vector<const MemoryModel*> All();  // by name

  // The model a memory config selects, with its parameters checked against the model's
  // declarations and defaults filled in. `what` names the memory in errors ("the HBM of
  // chip 3 (x=1, y=1)").
  static const MemoryModel& Resolve(const config::MemoryConfig& config, const std::string& what,
                                    ModelParameters& parameters);
};

// Registers a model from a static initialiser: `static MemoryModelRegistration r{{...}};`.
struct MemoryModelRegistration {
  explicit MemoryModelRegistration(MemoryModel model) { MemoryModels::Register(std::move(model)); }
};

}  // namespace tpusim::sim
