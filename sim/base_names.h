#pragma once

// sim/ implements base/'s interfaces (CorePort, Engine) and uses base/'s names (ChipId,
// Picoseconds, BufferHandle, ...) unqualified.

#include "base/core_port.h"
#include "base/device_grid.h"
#include "base/errors.h"
#include "base/time.h"

namespace tpusim::sim {
using namespace tpusim::base;  // NOLINT(google-build-using-namespace)
}  // namespace tpusim::sim
