#pragma once

// Stragglers (RunConfig::chip_slowdown, link_slowdown): checked once when the slice is
// built, then applied to the chip configurations and link settings the Slice builds its
// modules from, the same per-chip and per-link parameters a topology's chip_override and
// link_override set. Runs without a slowdown build from the topology's values untouched.

#include <vector>

#include "base/engine.h"
#include "sim/torus.h"
#include "topologies/topology.pb.h"

namespace tpusim::sim {

// The lowest bandwidth a slowdown may leave a memory or link with: at 1e3 B/s the largest DMA
// chunk (1 GiB) takes 1.1e6 s, inside what 64-bit picoseconds count (4.6e6 s).
constexpr double kMinSlowedBytesPerSecond = 1e3;

// Throws Error(kInvalidArgument) naming the entry, for a factor that is not finite and > 0, a
// chip past the slice, or a link direction the chip does not have.
void CheckSlowdowns(const base::EngineOptions& options, const Torus& torus);

// `chip`'s slowdown (1 when chip_slowdown does not reach it).
double ChipSlowdown(const base::EngineOptions& options, ChipId chip);

// Applies `chip`'s slowdown to its configuration: HBM, VMEM and SMEM bandwidths divided by
// the factor, the DMA issue latency multiplied by it (compute is slowed as the core runs,
// sim/core_thread.h). Throws Error(kInvalidArgument) when a memory would fall below
// kMinSlowedBytesPerSecond.
void SlowChip(const base::EngineOptions& options, const Torus& torus, ChipId chip,
              config::ChipConfig& config);

// The bandwidth of `link` after link_slowdown (`bytes_per_second` when none names it).
// Throws Error(kInvalidArgument) when it would fall below kMinSlowedBytesPerSecond.
double SlowedLinkBandwidth(const base::EngineOptions& options, const Torus& torus, LinkId link,
                           double bytes_per_second);

}  // namespace tpusim::sim
