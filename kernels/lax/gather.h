#pragma once

// The all-gather algorithms of the lax collectives, as pieces of a kernel body: all_gather
// runs them, and psum runs them after its reduce-scatter. They move "units": the data of
// one ring member, as views into an HBM operand that are the same on every device (so a
// unit can be copied to the same place on another device). Every device starts with its
// own unit in place and ends with every member's. On X devices (docs/references.md §3):
//
// - ring: X-1 steps; at step s each device passes the unit it got at step s-1 (its own at
//   step 0) to its right neighbour. T ~ (X-1)(T_hop + U/W_oneway).
// - bidi_ring on a closed ring: each unit goes both ways, floor((X-1)/2) hops each way; on
//   an even ring the unit opposite is split in two halves, one each way. floor(X/2) steps,
//   both link directions busy: T ~ (X/2) T_hop + (V/W_ici)(X-1)/X, [SB]'s bidirectional
//   all-gather.
// - bidi_ring on a line (an axis without wraparound, where the ring's last device is many
//   hops from its first): each unit goes both ways to the two ends of the line, X-1 steps of
//   one hop: T ~ (X-1)(T_hop + U/W_oneway), the one-direction figure with no long hop.
// - direct: one step: every device sends its unit to every other device at once, routed
//   through the devices between (farthest first, alternating directions). T ~ the farthest
//   route's hops x T_hop + its busiest link's bytes / W.
// - recursive_doubling (X a power of two): log2 X steps; at step k each device swaps all
//   it holds (2^k units) with the device whose ring index differs in bit k.

#include <functional>
#include <string>
#include <vector>

#include "dsl/kernel.h"
#include "dsl/pallas_call.h"
#include "kernels/lax/algorithm.h"

namespace tpusim::kernels::lax {

// The views of member `index`'s unit (one or several regions of an HBM operand).
using Unit = std::function<std::vector<dsl::Ref>(int index)>;

// The semaphores a gather takes: a DMA array of sends and one of receives ("<prefix>send",
// "<prefix>recv"), in that order. Ring steps alternate kStepSemaphores per direction, so a
// device's semaphores do not grow with the ring (kernels/ring.h).
std::vector<dsl::ScratchSpec> GatherScratch(Algorithm algorithm, int ring_size,
                                            const std::string& prefix);

// The devices (ring indices) that send to this one in the algorithm, and those it sends to:
// whom it tells it is ready, and whose word it waits for, before any DMA.
struct Peers {
  std::vector<int> senders;
  std::vector<int> receivers;
};
Peers PeersOf(Algorithm algorithm, const dsl::Ring& ring, bool closed);
// Signals every sender of `peers` on `sem`; with `wait`, waits for every receiver's signal.
void SignalPeers(dsl::Kernel& k, const dsl::Ring& ring, const Peers& peers, const dsl::Ref& sem);
void WaitForPeers(dsl::Kernel& k, const Peers& peers, const dsl::Ref& sem);

// Every other ring index, farthest first and alternating directions: the order direct
// algorithms start their sends in, so the long routes get the DMA engines while every link
// is still free and the short ones fill in behind them.
std::vector<int> FarthestFirst(const dsl::Ring& ring);

// Runs the gather. `closed`: the ring is closed (plan.h's Stage::closed); only bidi_ring
// looks at it. The caller has met the peers (PeersOf) already.
void Gather(dsl::Kernel& k, Algorithm algorithm, const dsl::Ring& ring, bool closed,
            const Unit& unit, const dsl::Ref& send_sems, const dsl::Ref& recv_sems);

}  // namespace tpusim::kernels::lax
