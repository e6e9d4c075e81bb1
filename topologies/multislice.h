#pragma once

// Multi-slice topologies (config::MultisliceConfig): the loader's part. ValidateTopology calls
// these; their messages name the field and the fix, as the loader's own do.

#include <cstdint>
#include <string>
#include <vector>

#include "topologies/topology.pb.h"

namespace tpusim::topologies {

// The loader's field checks (topologies/topology_loader.cc), for the checks here: throw
// TopologyError "topology SOURCE: field 'FIELD' REASON", or the range declared as `range` in
// FieldRanges().
[[noreturn]] void FailField(const std::string& source, const std::string& field,
                            const std::string& reason);
void RequireFieldInRange(const std::string& source, const std::string& field, bool present,
                         double value, const std::string& range);
void RequireFieldInRange(const std::string& source, const std::string& field, bool present,
                         uint64_t value, const std::string& range);

// Each field of `dcn` in its range.
void ValidateDcn(const std::string& source, const config::DcnConfig& dcn);
// A loaded multi-slice topology's mesh starts with the slice axis: taken off, so that the
// slice's own mesh is validated as a file gives it.
void RemoveSliceAxis(const std::string& source, config::Topology& topology);
// `multislice.slices` copies of the validated slice mesh: the slice axis goes in front.
void AddSliceAxis(const std::string& source, config::Topology& topology);
// Overrides name a chip within one slice and hold in every slice: coordinates of a loaded
// multi-slice mesh without the slice axis's.
std::vector<int> InSlice(const config::Topology& topology, const std::vector<int>& coords);

}  // namespace tpusim::topologies
