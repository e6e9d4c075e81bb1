#pragma once

// What a lax collective's algorithm costs on a slice, estimated from the model's own link
// parameters. The planner (kernels/lax/plan.h) picks the cheapest algorithm with it, as an
// autotuner would, and run reports split each collective's time into its latency part and
// its bandwidth part with it.
//
// An algorithm is a sequence of steps. In a step, transfers between devices run at once; a
// device sends what it holds once its previous step is over, and its step is over when what
// it receives has landed and what it sends has left. A transfer takes the latencies the model
// charges it (docs/time-model.md): its DMA's issue latency, its route's (each link's latency;
// cut-through routers pay a route's latency once, not per chunk, and store-and-forward ones
// add a chunk's time on the link it came in by at each link after the first) and the remote
// semaphore's signal latency by which the receiver learns that it has landed; plus its bytes
// over the bandwidth its busiest link gives it in that step (transfers that share a link
// direction share its bandwidth). A signal to another device (a barrier, a ring's credit)
// takes its route's latency and the signal latency. The call pays the kernel's launch once.
// The collective ends when the last device's last step does; its latency part and bandwidth
// part are those of the chain of transfers that ends last, the launch in the latency part.
//
// Routes and links are the model's (sim/torus.h): dimension-ordered (base::
// DimensionOrderedRoute) on a plain torus, the twisted wiring's shortest routes (base::
// TwistedRoutes) on a twisted one. An ICI link has ici's bandwidth and hop latency; the link
// along a chiplet axis is the die-to-die link, with the chiplets block's (docs/model.md,
// "Chiplets"); the slice axis of a multi-slice topology is crossed in one step over the DCN
// (docs/model.md, "Multi-slice"): out through the sending host's NIC, which carries the DCN
// latency, and in through the receiving host's, each NIC shared by its host's chips. Link
// overrides and slowed links are left out. Per-device work (HBM copies, VPU adds) and the DMA
// engines' queueing are left out too: the estimate ranks algorithms, the simulation times
// them.

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/twisted_routes.h"
#include "dsl/mesh.h"

namespace tpusim::kernels::lax {

// The parameters every estimate reads, taken from the topology here and nowhere else.
struct LinkModel {
  double hop_latency_s = 0;     // per ICI link a route crosses (ici.hop_latency_ns)
  double signal_latency_s = 0;  // a semaphore on another device, beyond the route
                                // (ici.signal_latency_ns)
  double issue_latency_s = 0;   // before a DMA's first byte (chip.dma.issue_latency_ns)
  double launch_s = 0;          // once per call: the kernel's launch (chip.cost.op_launch_ns)
  double link_bytes_per_s = 1;  // one direction of one ICI link (ici.link_bandwidth_bytes_per_s)
  // Store-and-forward routers (ici.forwarding): a chunk (chip.dma.chunk_bytes) waits whole at
  // every router on its route.
  bool store_and_forward = false;
  double chunk_bytes = 0;
  // The chiplet axis (the mesh's last) and its die-to-die link (chiplets.d2d_*); -1: none.
  int d2d_axis = -1;
  double d2d_bytes_per_s = 1;
  double d2d_latency_s = 0;
  // The slice axis (the mesh's first) over the DCN (dcn.*), when the topology is multi-slice.
  bool dcn = false;
  int chips_per_host = 1;
  double nic_bytes_per_s = 1;
  double dcn_latency_s = 0;
  bool twisted = false;  // mesh.twisted: routes follow the twisted wiring
  static LinkModel Of(const dsl::Mesh& mesh);
  // Every field, exactly: estimates made with equal keys (and equal meshes) are equal.
  std::string Key() const;
};

// Bytes from one device to another (logical ids), within one step.
struct Transfer {
  int from;
  int to;
  double bytes;
};

struct CollectiveCost {
  double latency_s = 0;           // the steps' latencies and the launch
  double bandwidth_s = 0;         // the steps' busiest-link bytes over the link bandwidth
  double busiest_link_bytes = 0;  // the most bytes one link direction carries in the call
  int steps = 0;
  double seconds() const { return latency_s + bandwidth_s; }
};

class CostModel {
 public:
  explicit CostModel(const dsl::Mesh& mesh);

  // One step in which `transfers` run at once.
  void Step(const std::vector<Transfer>& transfers);
  // `steps` steps of the same transfers through double-buffered receive slots, as a ring
  // reducer runs them (kernels/reduce_scatter.h): from the third step on a sender also waits
  // for the receiver's word that the slot it refills is free, which the receiver sends when
  // it has added the data of two steps before. Over a long link that round trip paces the
  // ring.
  void CreditedSteps(const std::vector<Transfer>& transfers, int steps);
  // A barrier: each device of a pair signals the other (a step that moves no bytes).
  void Barrier(const std::vector<std::pair<int, int>>& pairs);
  // Links a route from `from` to `to` crosses (a crossing of the DCN counts one).
  int Hops(int from, int to) const;
  // The route's latency: its links' latencies added up.
  double RouteLatency(int from, int to) const;
  // When a semaphore signal from `from` changes `to`'s semaphore: the route's latency and the
  // signal latency.
  double SignalLatency(int from, int to) const;

  CollectiveCost cost() const;

 private:
  // When a device's steps so far are over, split into latency and bandwidth.
  struct Clock {
    double latency_s = 0;
    double bandwidth_s = 0;
    double t() const { return latency_s + bandwidth_s; }
  };
  // The link directions (indices into total_) of the route from `from` to `to`: an ICI or D2D
  // link direction is (device * axes + axis) * 2 + (the - way ? 1 : 0); after those come the
  // hosts' NICs, out then in (NicOut, NicIn).
  void Route(int from, int to, std::vector<size_t>& links) const;
  size_t NicOut(int device) const;
  size_t NicIn(int device) const { return NicOut(device) + 1; }
  // What a link direction is, and each kind's bandwidth and latency (LinkModel's).
  enum Kind { kIci, kD2d, kNicOut, kNicIn, kKinds };
  int KindOf(size_t link) const;
  double Bandwidth(int kind) const;
  double Latency(int kind) const;
  // The latency of the first `end` links of `route`.
  double LatencyOf(const std::vector<size_t>& route, size_t end) const;
  // Step with each transfer starting no earlier than `not_before` (by transfer) allows.
  void StepAfter(const std::vector<Transfer>& transfers, const std::vector<Clock>& not_before);

  const dsl::Mesh& mesh_;
  LinkModel links_;
  std::vector<bool> wraparound_;
  std::shared_ptr<const base::TwistedRoutes> twisted_;  // on a twisted torus only
  size_t ici_links_ = 0;                                // link directions before the NICs
  std::vector<Clock> ready_;                            // by device
  std::vector<double> total_;  // bytes per link direction over the whole call
  std::vector<double> step_;   // the same within the current step
  int steps_ = 0;
};

}  // namespace tpusim::kernels::lax
