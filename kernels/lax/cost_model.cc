#include "kernels/lax/cost_model.h"

#include <algorithm>
#include <cstdio>

#include "base/device_grid.h"

namespace tpusim::kernels::lax {

LinkModel LinkModel::Of(const dsl::Mesh& mesh) {
  const auto& topology = mesh.topology();
  const auto& ici = topology.ici();
  LinkModel links;
  links.hop_latency_s = ici.hop_latency_ns() * 1e-9;
  links.signal_latency_s = ici.signal_latency_ns() * 1e-9;
  links.issue_latency_s = topology.chip().dma().issue_latency_ns() * 1e-9;
  links.launch_s = topology.chip().cost().op_launch_ns() * 1e-9;
  links.link_bytes_per_s = ici.link_bandwidth_bytes_per_s();
  links.store_and_forward = ici.forwarding() == config::IciConfig::STORE_AND_FORWARD;
  links.chunk_bytes = static_cast<double>(topology.chip().dma().chunk_bytes());
  return links;
}

std::string LinkModel::Key() const {
  std::string key;
  for (double value : {hop_latency_s, signal_latency_s, issue_latency_s, launch_s, link_bytes_per_s,
                       store_and_forward ? 1.0 : 0.0, chunk_bytes}) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g,", value);
    key += text;
  }
  return key;
}

CostModel::CostModel(const dsl::Mesh& mesh) : mesh_(mesh), links_(LinkModel::Of(mesh)) {
  const auto& flags = mesh.topology().mesh().wraparound();
  for (int a = 0; a < static_cast<int>(mesh.shape().size()); ++a)
    wraparound_.push_back(a < flags.size() && flags[a]);
  const size_t links = static_cast<size_t>(mesh.devices()) * mesh.shape().size() * 2;
  total_.assign(links, 0);
  step_.assign(links, 0);
  ready_.assign(static_cast<size_t>(mesh.devices()), Clock{});
}

int CostModel::Hops(int from, int to) const {
  int hops = 0;
  for (const base::RouteLeg& leg :
       base::DimensionOrderedRoute(mesh_.grid(), wraparound_, static_cast<base::ChipId>(from),
                                   static_cast<base::ChipId>(to)))
    hops += leg.hops;
  return hops;
}

double CostModel::SignalLatency(int from, int to) const {
  return Hops(from, to) * links_.hop_latency_s + links_.signal_latency_s;
}

void CostModel::Route(int from, int to, std::vector<size_t>& links) const {
  links.clear();
  const size_t axes = mesh_.shape().size();
  std::vector<int> at = mesh_.CoordsOf(from);
  for (const base::RouteLeg& leg :
       base::DimensionOrderedRoute(mesh_.grid(), wraparound_, static_cast<base::ChipId>(from),
                                   static_cast<base::ChipId>(to))) {
    const int n = mesh_.shape()[leg.axis];
    for (int h = 0; h < leg.hops; ++h) {
      const size_t chip = static_cast<size_t>(mesh_.DeviceAt(at));
      links.push_back((chip * axes + static_cast<size_t>(leg.axis)) * 2 +
                      (leg.direction > 0 ? 0 : 1));
      at[leg.axis] = ((at[leg.axis] + leg.direction) % n + n) % n;
    }
  }
}

void CostModel::Step(const std::vector<Transfer>& transfers) {
  StepAfter(transfers, {});
}

void CostModel::CreditedSteps(const std::vector<Transfer>& transfers, int steps) {
  std::vector<std::vector<Clock>> after;  // ready_ after each step
  for (int s = 0; s < steps; ++s) {
    std::vector<Clock> credit;
    if (s >= 2) {
      for (const Transfer& t : transfers) {
        const Clock& freed = after[static_cast<size_t>(s - 2)][t.to];
        credit.push_back({freed.latency_s + SignalLatency(t.to, t.from), freed.bandwidth_s});
      }
    }
    StepAfter(transfers, credit);
    after.push_back(ready_);
  }
}

void CostModel::StepAfter(const std::vector<Transfer>& transfers,
                          const std::vector<Clock>& not_before) {
  std::vector<std::vector<size_t>> routes(transfers.size());
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    if (t.from == t.to) continue;
    Route(t.from, t.to, routes[i]);
    for (size_t link : routes[i])
      step_[link] += t.bytes;
  }
  std::vector<Clock> next = ready_;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const Transfer& t = transfers[i];
    if (routes[i].empty()) continue;
    double shared = 0;  // the bytes of the busiest link on the route, this transfer's included
    for (size_t link : routes[i])
      shared = std::max(shared, step_[link]);
    Clock start = ready_[t.from];
    if (!not_before.empty() && not_before[i].t() > start.t()) start = not_before[i];
    const double stream = shared / links_.link_bytes_per_s;
    const double hops = static_cast<double>(routes[i].size());
    const double issued = start.latency_s + links_.issue_latency_s;
    // Held whole at each router after the first link: one chunk's time on a link.
    const double stored =
        links_.store_and_forward
            ? (hops - 1) * std::min(t.bytes, links_.chunk_bytes) / links_.link_bytes_per_s
            : 0;
    const Clock sent{issued, start.bandwidth_s + stream};
    const Clock landed{issued + hops * links_.hop_latency_s + stored + links_.signal_latency_s,
                       start.bandwidth_s + stream};
    if (sent.t() > next[t.from].t()) next[t.from] = sent;
    if (landed.t() > next[t.to].t()) next[t.to] = landed;
  }
  ready_ = std::move(next);
  for (size_t link = 0; link < step_.size(); ++link) {
    total_[link] += step_[link];
    step_[link] = 0;
  }
  ++steps_;
}

void CostModel::Barrier(const std::vector<std::pair<int, int>>& pairs) {
  std::vector<Clock> next = ready_;
  for (const auto& [a, b] : pairs) {
    const double latency = SignalLatency(a, b);
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      const Clock signalled{ready_[from].latency_s + latency, ready_[from].bandwidth_s};
      if (signalled.t() > next[to].t()) next[to] = signalled;
    }
  }
  ready_ = std::move(next);
}

CollectiveCost CostModel::cost() const {
  CollectiveCost cost;
  Clock last;
  for (const Clock& c : ready_) {
    if (c.t() > last.t()) last = c;
  }
  cost.latency_s = links_.launch_s + last.latency_s;
  cost.bandwidth_s = last.bandwidth_s;
  cost.busiest_link_bytes = total_.empty() ? 0 : *std::max_element(total_.begin(), total_.end());
  cost.steps = steps_;
  return cost;
}

}  // namespace tpusim::kernels::lax
