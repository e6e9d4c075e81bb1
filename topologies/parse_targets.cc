#include "topologies/parse_targets.h"

namespace tpusim::topologies {

// Why: TextFormat sets a sub-message through reflection (Reflection::MutableMessage, and
// AddMessage for a repeated one). When the sub-message is not there yet, reflection asks the
// generated message factory for its prototype, and the factory's first answer for a file
// builds the descriptors of google/protobuf/descriptor.proto (DescriptorPool::generated_pool()
// makes sure of them, for custom options a topology never has): a million instructions, more
// than the rest of a 16-chip file's parse. A sub-message that is already there, or a cleared
// element of a repeated field, is filled in place with no prototype. The answer is the same
// either way; a file with two chip_override or link_override entries still asks for the
// second's nested messages, and only costs what it did before.

namespace {

void MakeMemory(config::MemoryConfig& memory) {
  memory.add_parameter();
}

}  // namespace

void MakeParseTargets(config::Topology& topology) {
  config::ChipConfig& chip = *topology.mutable_chip();
  MakeMemory(*chip.mutable_hbm());
  MakeMemory(*chip.mutable_vmem());
  MakeMemory(*chip.mutable_smem());
  chip.mutable_dma();
  chip.mutable_cost()->add_parameter();
  topology.mutable_ici();
  topology.mutable_mesh();
  topology.add_link_override();
  config::ChipOverride& chip_override = *topology.add_chip_override();
  MakeMemory(*chip_override.mutable_hbm());
  MakeMemory(*chip_override.mutable_vmem());
  MakeMemory(*chip_override.mutable_smem());
  chip_override.mutable_dma();
  topology.mutable_dcn();
  topology.mutable_multislice();
  topology.mutable_chiplets();
  // Clear keeps singular sub-messages and repeated elements allocated (protobuf's generated
  // Clear only clears them), so every has_ is false again and every repeated field empty.
  topology.Clear();
}

}  // namespace tpusim::topologies
