#pragma once

// What a lax collective's algorithm costs on a slice, estimated from the model's own link
// parameters. The planner (kernels/lax/plan.h) picks the cheapest algorithm with it, as an
// autotuner would, and run reports split each collective's time into its latency part and
// its bandwidth part with it.
//
// An algorithm is a sequence of steps. In a step, transfers between devices run at once; a
// device sends what it holds once its previous step is over, and its step is over when what
// it receives has landed and what it sends has left. A transfer takes the latency of its
// route (hops x per-hop latency: chunks are forwarded cut-through, so a route's latency is
// paid once, not per chunk) plus its bytes over the bandwidth its busiest link gives it in
// that step (transfers that share a link direction share its bandwidth). The collective ends
// when the last device's last step does; its latency part and bandwidth part are those of
// the chain of transfers that ends last. Routes are the model's (base::DimensionOrderedRoute).
// Per-device work (HBM copies, VPU adds) and the DMA engines' queueing are left out: the
// estimate ranks algorithms, the simulation times them.

#include <cstdint>
#include <utility>
#include <vector>

#include "dsl/mesh.h"

namespace tpusim::kernels::lax {

// The parameters every estimate reads, taken from the topology here and nowhere else.
struct LinkModel {
  double hop_latency_s = 0;     // per link a route crosses (ici.hop_latency_ns)
  double link_bytes_per_s = 1;  // one direction of one link (ici.link_bandwidth_bytes_per_s)
  static LinkModel Of(const dsl::Mesh& mesh);
};

// Bytes from one device to another (logical ids), within one step.
struct Transfer {
  int from;
  int to;
  double bytes;
};

struct CollectiveCost {
  double latency_s = 0;           // the steps' route latencies
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
  // Links a route from `from` to `to` crosses.
  int Hops(int from, int to) const;

  CollectiveCost cost() const;

 private:
  // When a device's steps so far are over, split into latency and bandwidth.
  struct Clock {
    double latency_s = 0;
    double bandwidth_s = 0;
    double t() const { return latency_s + bandwidth_s; }
  };
  // The link directions (indices into total_) of the route from `from` to `to`.
  void Route(int from, int to, std::vector<size_t>& links) const;
  // Step with each transfer starting no earlier than `not_before` (by transfer) allows.
  void StepAfter(const std::vector<Transfer>& transfers, const std::vector<Clock>& not_before);

  const dsl::Mesh& mesh_;
  LinkModel links_;
  std::vector<bool> wraparound_;
  std::vector<Clock> ready_;   // by device
  std::vector<double> total_;  // bytes per link direction over the whole call
  std::vector<double> step_;   // the same within the current step
  int steps_ = 0;
};

}  // namespace tpusim::kernels::lax
