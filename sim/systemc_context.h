#pragma once

// SystemC elaborates once per simulation context. tpusim runs many simulations in one
// process (compare, bench, tests), so each run gets a fresh context. This swaps an
// internal SystemC 2.3 global; it is the only place in tpusim that does.

namespace tpusim::sim {

// Makes a new, empty SystemC context current, with picosecond time resolution.
void StartFreshSystemCContext();

}  // namespace tpusim::sim
