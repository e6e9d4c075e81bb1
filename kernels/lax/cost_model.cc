#include "kernels/lax/cost_model.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <mutex>

#include "base/device_grid.h"
#include "topologies/twist.h"

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
  if (topology.has_chiplets()) {  // the loaded mesh ends with the chiplet axis
    links.d2d_axis = static_cast<int>(mesh.shape().size()) - 1;
    links.d2d_bytes_per_s = topology.chiplets().d2d_bandwidth_bytes_per_s();
    links.d2d_latency_s = topology.chiplets().d2d_latency_ns() * 1e-9;
  }
  if (topology.has_multislice()) {  // and a multi-slice one starts with the slice axis
    links.dcn = true;
    links.chips_per_host = static_cast<int>(topology.dcn().chips_per_host());
    links.nic_bytes_per_s = topology.dcn().nic_bandwidth_bytes_per_s();
    links.dcn_latency_s = topology.dcn().latency_ns() * 1e-9;
  }
  links.twisted = topology.mesh().twisted();
  return links;
}

std::string LinkModel::Key() const {
  std::string key;
  for (double value :
       {hop_latency_s, signal_latency_s, issue_latency_s, launch_s, link_bytes_per_s,
        store_and_forward ? 1.0 : 0.0, chunk_bytes, static_cast<double>(d2d_axis), d2d_bytes_per_s,
        d2d_latency_s, dcn ? 1.0 : 0.0, static_cast<double>(chips_per_host), nic_bytes_per_s,
        dcn_latency_s, twisted ? 1.0 : 0.0}) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g,", value);
    key += text;
  }
  return key;
}

namespace {

// A twisted torus's routes, planned once per shape (the plan is the costly part), as the
// model's Torus plans them.
std::shared_ptr<const base::TwistedRoutes> TwistedRoutesOf(const dsl::Mesh& mesh) {
  static std::mutex mutex;
  static std::map<std::vector<int>, std::shared_ptr<const base::TwistedRoutes>> planned;
  std::lock_guard<std::mutex> lock(mutex);
  auto& routes = planned[mesh.shape()];
  if (!routes) {
    routes = std::make_shared<const base::TwistedRoutes>(mesh.grid(),
                                                         topologies::TwistShifts(mesh.shape()));
  }
  return routes;
}

}  // namespace

CostModel::CostModel(const dsl::Mesh& mesh) : mesh_(mesh), links_(LinkModel::Of(mesh)) {
  const auto& flags = mesh.topology().mesh().wraparound();
  for (int a = 0; a < static_cast<int>(mesh.shape().size()); ++a)
    wraparound_.push_back(a < flags.size() && flags[a]);
  if (links_.twisted) twisted_ = TwistedRoutesOf(mesh);
  ici_links_ = static_cast<size_t>(mesh.devices()) * mesh.shape().size() * 2;
  const size_t hosts = links_.dcn ? static_cast<size_t>(mesh.devices() / links_.chips_per_host) : 0;
  total_.assign(ici_links_ + 2 * hosts, 0);
  step_.assign(total_.size(), 0);
  ready_.assign(static_cast<size_t>(mesh.devices()), Clock{});
}

size_t CostModel::NicOut(int device) const {
  return ici_links_ + 2 * static_cast<size_t>(device / links_.chips_per_host);
}

int CostModel::KindOf(size_t link) const {
  if (link >= ici_links_) return (link - ici_links_) % 2 == 0 ? kNicOut : kNicIn;
  const int axis = static_cast<int>(link / 2 % mesh_.shape().size());
  return axis == links_.d2d_axis ? kD2d : kIci;
}

double CostModel::Bandwidth(int kind) const {
  switch (kind) {
    case kD2d:
      return links_.d2d_bytes_per_s;
    case kNicOut:
    case kNicIn:
      return links_.nic_bytes_per_s;
    default:
      return links_.link_bytes_per_s;
  }
}

double CostModel::Latency(int kind) const {
  switch (kind) {
    case kD2d:
      return links_.d2d_latency_s;
    case kNicOut:  // the DCN's latency rides on the NIC out, as in the model (sim/dcn.h)
      return links_.dcn_latency_s;
    case kNicIn:
      return 0;
    default:
      return links_.hop_latency_s;
  }
}

double CostModel::LatencyOf(const std::vector<size_t>& route, size_t end) const {
  // Counted by kind and multiplied, so a torus of one kind of link gets hops x latency exactly.
  std::array<int, kKinds> count{};
  for (size_t h = 0; h < end; ++h)
    ++count[static_cast<size_t>(KindOf(route[h]))];
  double latency = 0;
  for (int kind = 0; kind < kKinds; ++kind) {
    if (count[static_cast<size_t>(kind)] > 0)
      latency += count[static_cast<size_t>(kind)] * Latency(kind);
  }
  return latency;
}

int CostModel::Hops(int from, int to) const {
  std::vector<size_t> links;
  Route(from, to, links);
  int hops = 0;
  for (size_t link : links)
    hops += KindOf(link) == kNicIn ? 0 : 1;  // a NIC in is the DCN crossing's second half
  return hops;
}

double CostModel::RouteLatency(int from, int to) const {
  std::vector<size_t> links;
  Route(from, to, links);
  return LatencyOf(links, links.size());
}

double CostModel::SignalLatency(int from, int to) const {
  return RouteLatency(from, to) + links_.signal_latency_s;
}

void CostModel::Route(int from, int to, std::vector<size_t>& links) const {
  links.clear();
  const size_t axes = mesh_.shape().size();
  auto link_of = [&](int device, int axis, int direction) {
    return (static_cast<size_t>(device) * axes + static_cast<size_t>(axis)) * 2 +
           (direction > 0 ? 0 : 1);
  };
  if (twisted_) {
    for (int at = from; at != to;) {
      const int hop =
          twisted_->NextHop(static_cast<base::ChipId>(at), static_cast<base::ChipId>(to));
      const int axis = hop / 2, direction = hop % 2 ? -1 : +1;
      links.push_back(link_of(at, axis, direction));
      std::vector<int> coords = mesh_.CoordsOf(at);
      const int n = mesh_.shape()[static_cast<size_t>(axis)];
      coords[axis] += direction;
      if (coords[axis] < 0 || coords[axis] >= n) {  // the wraparound link, twisted
        coords[axis] = (coords[axis] + n) % n;
        twisted_->AddTwist(coords, axis, direction);
      }
      at = mesh_.DeviceAt(coords);
    }
    return;
  }
  std::vector<int> at = mesh_.CoordsOf(from);
  for (const base::RouteLeg& leg :
       base::DimensionOrderedRoute(mesh_.grid(), wraparound_, static_cast<base::ChipId>(from),
                                   static_cast<base::ChipId>(to))) {
    const int n = mesh_.shape()[leg.axis];
    if (links_.dcn && leg.axis == 0) {  // one crossing of the DCN to the destination's slice
      links.push_back(NicOut(mesh_.DeviceAt(at)));
      at[0] += leg.direction * leg.hops;
      links.push_back(NicIn(mesh_.DeviceAt(at)));
      continue;
    }
    for (int h = 0; h < leg.hops; ++h) {
      links.push_back(link_of(mesh_.DeviceAt(at), leg.axis, leg.direction));
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
    double stream = 0;  // the busiest link's time on the route, this transfer's bytes included
    for (size_t link : routes[i])
      stream = std::max(stream, step_[link] / Bandwidth(KindOf(link)));
    const double latency = LatencyOf(routes[i], routes[i].size());
    // Held whole at each router after the first link: the chunk's time on the link it came in
    // by, counted by kind as LatencyOf counts.
    double stored = 0;
    if (links_.store_and_forward) {
      std::array<int, kKinds> count{};
      for (size_t h = 0; h + 1 < routes[i].size(); ++h)
        ++count[static_cast<size_t>(KindOf(routes[i][h]))];
      for (int kind = 0; kind < kKinds; ++kind) {
        if (count[static_cast<size_t>(kind)] > 0)
          stored += count[static_cast<size_t>(kind)] * std::min(t.bytes, links_.chunk_bytes) /
                    Bandwidth(kind);
      }
    }
    Clock start = ready_[t.from];
    if (!not_before.empty() && not_before[i].t() > start.t()) start = not_before[i];
    const double issued = start.latency_s + links_.issue_latency_s;
    const Clock sent{issued, start.bandwidth_s + stream};
    const Clock landed{issued + latency + stored + links_.signal_latency_s,
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
