#pragma once

// Loads a slice description (a preset name or a *.textproto path), fills defaults and
// rejects what cannot describe real hardware, naming the file, the field and the reason.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/device_grid.h"
#include "base/param.h"
#include "topologies/topology.pb.h"

namespace tpusim::topologies {

class TopologyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most chips a slice may have: above the largest pods (9216 chips, docs/references.md §2),
// and small enough that per-chip host state fits in memory.
constexpr uint32_t kMaxChips = 16384;
// The most devices a slice may have: a chip of chiplets is several devices
// (config::ChipletConfig), and a TPU7x pod is 18432 of them.
constexpr uint32_t kMaxDevices = 2 * kMaxChips;
// The most bytes LoadTopology reads from a file; presets are about 2 KB.
constexpr size_t kMaxTopologyFileBytes = 1 << 20;

// The sane ranges of the numeric fields (see topology.proto), one declaration each
// (base/param.h: type, unit, range, and why the range is what it is): wide enough for any
// real or planned chip, narrow enough that every size and time computed from a field fits its
// type and a run stays within host time and memory. Several fields share one ("bandwidth").
const std::vector<base::Param>& FieldRanges();

// `name_or_path` is a preset name (see PresetNames) or a path to a .textproto file.
config::Topology LoadTopology(const std::string& name_or_path);

// Parses and validates `text`; `source` names it in error messages.
config::Topology ParseTopology(const std::string& text, const std::string& source);

// Checks every field, fills the defaults (axis names x, y, z; no wraparound) in place, and
// holds a slice of a known generation to its rules (CheckGenerationRules).
void ValidateTopology(config::Topology& topology, const std::string& source);

// `topology` (loaded) as `slices` copies joined by its `dcn` (config::MultisliceConfig),
// validated again and named "NAME-Nslices": what `tpusim run --slices N` runs. Throws
// TopologyError naming the field to fix (a topology without dcn, a host that does not fit).
config::Topology WithSlices(config::Topology topology, uint32_t slices, const std::string& source);

// The presets (topologies/generations.h): each generation's file with one of its shapes.
std::vector<std::string> PresetNames();
std::string PresetText(const std::string& name);  // throws TopologyError if unknown
bool IsPreset(const std::string& name);

// The devices of the loaded mesh (its axes' product): the chips, or on chips of chiplets
// (config::ChipletConfig) the chiplets. The simulator models each device as a chip of its own.
uint64_t DeviceCount(const config::Topology& topology);
// The mesh's devices on a grid: what the DSL's Mesh and the model's Torus hold. Throws
// Error(kInvalidArgument) for a mesh that validation would refuse (an axis of length 0, more
// devices than a slice may have, axis names that do not match the axes), as a topology built
// in code may not have been loaded.
base::DeviceGrid DeviceGridOf(const config::Topology& topology);
// The physical chips: the devices, over the devices per chip on chips of chiplets (a
// TPU7x pod is 9,216 chips and 18,432 devices).
uint64_t ChipCount(const config::Topology& topology);

// The chip at `coords` as a validated topology describes it: `chip`, with that chip's
// chip_override applied (each memory or DMA field given replaces the slice's).
config::ChipConfig ChipAt(const config::Topology& topology, const std::vector<int>& coords);

// One link direction ("x+") leaving the chip at `coords`, after its link_override; along the
// chiplet axis ("chiplet+"), the chip's die-to-die link (config::ChipletConfig).
struct LinkSettings {
  double bandwidth_bytes_per_s = 0;
  double latency_ns = 0;
};
LinkSettings LinkAt(const config::Topology& topology, const std::vector<int>& coords,
                    const std::string& direction);
std::string ShapeString(const config::Topology& topology);  // e.g. "4x4"

// Link directions as a link_override names them ("x+": mesh axis x, the + way), for every
// place that takes one (the loader, --slow-link, RunConfig::link_slowdown). The axis of
// `direction` in `mesh` (axis names filled in), or -1 when it names none.
int LinkAxis(const config::MeshConfig& mesh, const std::string& direction);
// What to write instead of a direction that names no axis: "give a mesh axis and + or -, e.g.
// 'x+', 'y+'".
std::string DirectionHint(const config::MeshConfig& mesh);
// Why the link `direction` (LinkAxis >= 0) leaving the chip at `coords` (in the mesh) does
// not exist ("axis 'x' has no wraparound and the chip is at its edge"), or "" when it does.
std::string MissingLink(const config::MeshConfig& mesh, const std::vector<int>& coords,
                        const std::string& direction);

}  // namespace tpusim::topologies
