#include "kernels/lax/plan.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "base/errors.h"
#include "kernels/lax/calls.h"
#include "kernels/lax/gather.h"

namespace tpusim::kernels::lax {

using namespace dsl;

namespace {

bool PowerOfTwo(int n) {
  return n > 0 && (n & (n - 1)) == 0;
}

bool Bandwidth(Algorithm a) {
  return a == Algorithm::kRing || a == Algorithm::kBidiRing;
}

// The mesh axes along which the members of every group differ, when each group is a box (the
// product of a set of coordinates on each of those axes) and all groups span the same axes;
// empty otherwise.
std::vector<int> BoxAxes(const Mesh& mesh, const DeviceGroups& groups) {
  const int axes = static_cast<int>(mesh.shape().size());
  std::vector<int> spanned;
  for (size_t g = 0; g < groups.count(); ++g) {
    std::vector<std::set<int>> values(static_cast<size_t>(axes));
    for (int device : groups.group(g)) {
      const std::vector<int> coords = mesh.CoordsOf(device);
      for (int a = 0; a < axes; ++a)
        values[a].insert(coords[a]);
    }
    std::vector<int> these;
    size_t box = 1;
    for (int a = 0; a < axes; ++a) {
      if (values[a].size() > 1) these.push_back(a);
      box *= values[a].size();
    }
    if (box != groups.group(g).size()) return {};
    if (g == 0) spanned = these;
    if (these != spanned) return {};
  }
  return spanned;
}

// Within each group of `groups`, the lines along mesh axis `axis`, each ordered by its
// coordinate on that axis (the physical ring order).
DeviceGroups LinesAlong(const Mesh& mesh, const DeviceGroups& groups, int axis,
                        const std::string& what) {
  std::vector<std::vector<int>> lines;
  for (size_t g = 0; g < groups.count(); ++g) {
    std::map<std::vector<int>, std::vector<std::pair<int, int>>> by_rest;
    for (int device : groups.group(g)) {
      std::vector<int> rest = mesh.CoordsOf(device);
      const int along = rest[axis];
      rest[axis] = 0;
      by_rest[rest].emplace_back(along, device);
    }
    for (auto& [rest, members] : by_rest) {
      std::sort(members.begin(), members.end());
      std::vector<int> line;
      for (const auto& [along, device] : members)
        line.push_back(device);
      lines.push_back(std::move(line));
    }
  }
  return DeviceGroups::Explicit(mesh, lines, what);
}

bool Closed(const CostModel& cm, const DeviceGroups& groups) {
  if (groups.group_size() < 3) return true;
  for (size_t g = 0; g < groups.count(); ++g) {
    const std::vector<int>& m = groups.group(g);
    int others = 0;
    for (size_t i = 0; i + 1 < m.size(); ++i)
      others = std::max(others, cm.Hops(m[i], m[i + 1]));
    if (cm.Hops(m.back(), m.front()) > others) return false;
  }
  return true;
}

std::vector<Stage> StagesOf(const Mesh& mesh, const CollectiveSpec& spec) {
  const bool nests = spec.kind == Collective::kPsum || spec.kind == Collective::kAllGather;
  std::vector<Stage> stages;
  auto add = [&](DeviceGroups groups, const std::string& over) {
    stages.push_back(Stage{std::make_shared<const DeviceGroups>(std::move(groups)),
                           Algorithm::kBidiRing, over, true});
  };
  if (spec.groups.empty()) {
    if (spec.kind == Collective::kPsum) {
      for (const std::string& axis : spec.axes)
        add(DeviceGroups::OfAxes(mesh, {axis}), axis);
    } else {
      add(DeviceGroups::OfAxes(mesh, spec.axes), spec.axes[0]);
    }
  } else {
    DeviceGroups groups = DeviceGroups::Explicit(mesh, spec.groups, Describe(spec));
    const std::vector<int> axes = nests ? BoxAxes(mesh, groups) : std::vector<int>{};
    if (axes.size() >= 2) {
      for (int a : axes) {
        const std::string over = mesh.axis_names()[a] + " of the replica groups";
        add(LinesAlong(mesh, groups, a, Describe(spec)), over);
      }
    } else {
      add(std::move(groups), "replica groups");
    }
  }
  const CostModel cm(mesh);
  for (Stage& st : stages)
    st.closed = Closed(cm, *st.groups);
  return stages;
}

// Every pair of devices that meet before the stage's algorithm runs (PeersOf).
std::vector<std::pair<int, int>> MeetingPairs(const Stage& st) {
  std::vector<std::pair<int, int>> pairs;
  for (size_t g = 0; g < st.groups->count(); ++g) {
    const Ring ring = st.groups->RingOf(st.groups->group(g)[0]);
    for (int i = 0; i < ring.size; ++i) {
      Ring at = ring;
      at.index = i;
      for (int j : PeersOf(st.algorithm, at, st.closed).senders) {
        if (i < j) pairs.emplace_back(ring.device_at(i), ring.device_at(j));
      }
    }
  }
  return pairs;
}

// Calls f(members, index) for every device of every group of `st`.
template <typename F>
void ForEachMember(const Stage& st, F f) {
  for (size_t g = 0; g < st.groups->count(); ++g) {
    const std::vector<int>& m = st.groups->group(g);
    for (int i = 0; i < static_cast<int>(m.size()); ++i)
      f(m, i);
  }
}

int At(const std::vector<int>& m, int i) {
  const int n = static_cast<int>(m.size());
  return m[static_cast<size_t>(((i % n) + n) % n)];
}

// The steps of a gather of `unit` bytes per member (kernels/lax/gather.h).
void GatherCost(CostModel& cm, const Stage& st, double unit) {
  const int n = st.groups->group_size();
  if (n < 2) return;
  std::vector<Transfer> step;
  switch (st.algorithm) {
    case Algorithm::kRing:
      ForEachMember(st, [&](const auto& m, int i) { step.push_back({m[i], At(m, i + 1), unit}); });
      for (int s = 0; s < n - 1; ++s)
        cm.Step(step);
      break;
    case Algorithm::kBidiRing:
      if (st.closed) {
        for (int s = 1; s <= n / 2; ++s) {
          const double bytes = n % 2 == 0 && s == n / 2 ? unit / 2 : unit;
          step.clear();
          ForEachMember(st, [&](const auto& m, int i) {
            step.push_back({m[i], At(m, i + 1), bytes});
            step.push_back({m[i], At(m, i - 1), bytes});
          });
          cm.Step(step);
        }
      } else {
        for (int s = 1; s <= n - 1; ++s) {
          step.clear();
          ForEachMember(st, [&](const auto& m, int i) {
            if (i >= s - 1 && i <= n - 2) step.push_back({m[i], m[i + 1], unit});
            if (i + s - 1 <= n - 1 && i >= 1) step.push_back({m[i], m[i - 1], unit});
          });
          cm.Step(step);
        }
      }
      break;
    case Algorithm::kDirect:
      ForEachMember(st, [&](const auto& m, int i) {
        for (int j = 0; j < n; ++j) {
          if (j != i) step.push_back({m[i], m[j], unit});
        }
      });
      cm.Step(step);
      break;
    case Algorithm::kRecursiveDoubling:
      for (int bit = 0; (1 << bit) < n; ++bit) {
        step.clear();
        ForEachMember(st, [&](const auto& m, int i) {
          step.push_back({m[i], m[i ^ (1 << bit)], unit * (1 << bit)});
        });
        cm.Step(step);
      }
      break;
  }
}

// The steps of a reduce-scatter of `block` bytes per member: partial sums travel.
void ReduceScatterCost(CostModel& cm, const Stage& st, double block) {
  const int n = st.groups->group_size();
  if (n < 2) return;
  std::vector<Transfer> step;
  if (st.algorithm == Algorithm::kDirect) {
    ForEachMember(st, [&](const auto& m, int i) {
      for (int j = 0; j < n; ++j) {
        if (j != i) step.push_back({m[i], m[j], block});
      }
    });
    cm.Step(step);
    return;
  }
  const bool both = st.algorithm == Algorithm::kBidiRing;
  ForEachMember(st, [&](const auto& m, int i) {
    step.push_back({m[i], At(m, i + 1), both ? block / 2 : block});
    if (both) step.push_back({m[i], At(m, i - 1), block / 2});
  });
  cm.CreditedSteps(step, n - 1);
}

// The steps of an all-reduce of `bytes` by a latency algorithm (kernels/lax/staged.h).
void AllReduceCost(CostModel& cm, const Stage& st, double bytes) {
  const int n = st.groups->group_size();
  if (n < 2) return;
  if (st.algorithm == Algorithm::kDirect) {
    ReduceScatterCost(cm, st, bytes);  // every member gets the whole operand
    return;
  }
  for (int bit = 0; (1 << bit) < n; ++bit) {
    std::vector<Transfer> step;
    ForEachMember(st, [&](const auto& m, int i) {
      step.push_back({m[i], m[i ^ (1 << bit)], bytes});
    });
    cm.Step(step);
  }
}

void PsumCost(CostModel& cm, const std::vector<Stage>& stages, int64_t n, double esize) {
  int64_t product = 1;
  for (const Stage& st : stages) {
    if (Bandwidth(st.algorithm)) product *= st.groups->group_size();
  }
  const int64_t tail = n % product;
  double region = static_cast<double>(n - tail) * esize;
  for (size_t t = 0; t < stages.size(); ++t) {
    const Stage& st = stages[t];
    if (region <= 0) break;
    if (!Bandwidth(st.algorithm)) {
      AllReduceCost(cm, st, region);
      continue;
    }
    if (t > 0) cm.Barrier(MeetingPairs(st));
    region /= st.groups->group_size();
    ReduceScatterCost(cm, st, region);
  }
  for (size_t t = stages.size(); t-- > 0;) {
    const Stage& st = stages[t];
    if (region <= 0 || !Bandwidth(st.algorithm)) continue;
    cm.Barrier(MeetingPairs(st));
    GatherCost(cm, st, region);
    region *= st.groups->group_size();
  }
  for (const Stage& st : stages) {
    if (tail == 0) break;
    Stage direct = st;
    direct.algorithm = Algorithm::kDirect;
    AllReduceCost(cm, direct, static_cast<double>(tail) * esize);
  }
}

// The steps of a broadcast of `bytes` from each group's first member (kernels/lax/
// broadcast.cc), after the barrier with the devices each one sends to.
void BroadcastCost(CostModel& cm, const Stage& st, double bytes) {
  const int n = st.groups->group_size();
  if (n < 2) return;
  std::vector<std::pair<int, int>> meet;
  std::vector<Transfer> step;
  if (st.algorithm == Algorithm::kRecursiveDoubling) {
    ForEachMember(st, [&](const auto& m, int i) {
      if (i > 0) meet.emplace_back(m[static_cast<size_t>(i & (i - 1))], m[i]);
    });
    cm.Barrier(meet);
    for (int d = n / 2; d >= 1; d /= 2) {
      step.clear();
      ForEachMember(st, [&](const auto& m, int i) {
        if (i % (2 * d) == 0) step.push_back({m[i], m[i + d], bytes});
      });
      cm.Step(step);
    }
    return;
  }
  const bool direct = st.algorithm == Algorithm::kDirect;
  ForEachMember(st, [&](const auto& m, int i) {
    if (i > 0) meet.emplace_back(m[0], m[i]);
    if (i > 0) step.push_back({m[0], m[i], direct ? bytes : bytes / n});
  });
  if (!direct) {
    for (const auto& pair : MeetingPairs(st))
      meet.push_back(pair);
  }
  cm.Barrier(meet);
  cm.Step(step);
  if (!direct) GatherCost(cm, st, bytes / n);
}

CollectiveCost Estimate(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x,
                        const std::vector<Stage>& stages) {
  CostModel cm(mesh);
  // Who meets before the steps: a ppermute only its pairs, each destination signalling its
  // source (kernels/lax/direct.cc); a broadcast only whom it sends to (BroadcastCost).
  std::vector<std::pair<int, int>> meet;
  if (spec.kind == Collective::kPpermute) {
    for (size_t g = 0; g < stages[0].groups->count(); ++g) {
      const std::vector<int>& m = stages[0].groups->group(g);
      for (const auto& [s, d] : spec.perm)
        if (s != d) meet.emplace_back(m[static_cast<size_t>(s)], m[static_cast<size_t>(d)]);
    }
  } else if (spec.kind != Collective::kBroadcast) {
    for (const Stage& st : stages) {
      const std::vector<std::pair<int, int>> pairs = MeetingPairs(st);
      meet.insert(meet.end(), pairs.begin(), pairs.end());
    }
  }
  cm.Barrier(meet);
  const int64_t n = NumElements(x.shape);
  const double esize = static_cast<double>(SizeOf(x.dtype));
  const double bytes = static_cast<double>(n) * esize;
  const Stage& first = stages[0];
  const int size = first.groups->group_size();
  switch (spec.kind) {
    case Collective::kAllGather: {
      double unit = bytes;
      for (size_t t = 0; t < stages.size(); ++t) {
        if (t > 0) cm.Barrier(MeetingPairs(stages[t]));
        GatherCost(cm, stages[t], unit);
        unit *= stages[t].groups->group_size();
      }
      break;
    }
    case Collective::kPsum:
      PsumCost(cm, stages, n, esize);
      break;
    case Collective::kPsumScatter:
      ReduceScatterCost(cm, first, bytes / size);
      break;
    case Collective::kPpermute: {
      std::vector<Transfer> step;
      for (size_t g = 0; g < first.groups->count(); ++g) {
        const std::vector<int>& m = first.groups->group(g);
        for (const auto& [s, d] : spec.perm)
          step.push_back({m[static_cast<size_t>(s)], m[static_cast<size_t>(d)], bytes});
      }
      cm.Step(step);
      break;
    }
    case Collective::kAllToAll:
      ReduceScatterCost(cm, first, bytes / size);  // chunk j to device j: the same traffic
      break;
    case Collective::kBroadcast:
      BroadcastCost(cm, first, bytes);
      break;
  }
  return cm.cost();
}

[[noreturn]] void Refuse(const CollectiveSpec& spec, const std::string& what) {
  throw Error(ErrorKind::kInvalidArgument, Describe(spec) + ": " + what);
}

std::vector<Algorithm> Candidates(const CollectiveSpec& spec, const Stage& st) {
  const int n = st.groups->group_size();
  std::vector<Algorithm> candidates;
  for (Algorithm a : AllAlgorithms()) {
    if (!Implements(spec.kind, a)) continue;
    if (a == Algorithm::kRecursiveDoubling && !PowerOfTwo(n)) continue;
    candidates.push_back(a);
    if (n < 2) break;  // nothing moves: any algorithm will do
  }
  return candidates;
}

std::string Implemented(Collective kind) {
  std::string names;
  for (Algorithm a : AllAlgorithms()) {
    if (Implements(kind, a)) names += (names.empty() ? "" : ", ") + std::string(AlgorithmName(a));
  }
  return names;
}

CollectivePlan Make(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x) {
  CollectivePlan plan;
  plan.stages = StagesOf(mesh, spec);
  if (spec.algorithm) {
    const Algorithm a = *spec.algorithm;
    if (!Implements(spec.kind, a)) {
      Refuse(spec, std::string("it does not implement the ") + AlgorithmName(a) +
                       " algorithm; it runs " + Implemented(spec.kind) + ". Choose one of those.");
    }
    for (Stage& st : plan.stages) {
      const int n = st.groups->group_size();
      if (a == Algorithm::kRecursiveDoubling && !PowerOfTwo(n)) {
        Refuse(spec, "recursive_doubling needs a power-of-two number of devices per group, and " +
                         st.over + " has " + std::to_string(n) +
                         ". Choose ring, bidi_ring or direct for it.");
      }
      st.algorithm = a;
    }
    plan.forced = true;
    plan.cost = Estimate(mesh, spec, x, plan.stages);
    return plan;
  }
  // Every combination of the stages' candidates; the first cheapest wins.
  std::vector<std::vector<Algorithm>> candidates;
  for (const Stage& st : plan.stages)
    candidates.push_back(Candidates(spec, st));
  std::vector<size_t> pick(plan.stages.size(), 0);
  std::optional<CollectivePlan> best;
  while (true) {
    CollectivePlan trial = plan;
    for (size_t t = 0; t < pick.size(); ++t)
      trial.stages[t].algorithm = candidates[t][pick[t]];
    trial.cost = Estimate(mesh, spec, x, trial.stages);
    if (!best || trial.cost.seconds() < best->cost.seconds()) best = std::move(trial);
    size_t t = pick.size();
    while (t > 0 && ++pick[t - 1] == candidates[t - 1].size())
      pick[--t] = 0;
    if (t == 0) break;
  }
  return *best;
}

std::string KeyOf(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x) {
  std::string key = mesh.Describe() + mesh.topology().mesh().ShortDebugString() + "|" +
                    LinkModel::Of(mesh).Key() + "|" + Describe(spec) + "|" +
                    std::to_string(static_cast<int>(spec.kind)) + "|";
  for (const std::string& a : spec.axes)
    key += a + ",";
  for (const auto& group : spec.groups) {
    for (int d : group)
      key += std::to_string(d) + ",";
    key += ";";
  }
  for (const auto& [s, d] : spec.perm)
    key += std::to_string(s) + ">" + std::to_string(d) + ",";
  // One piece at a time: GCC 12 at -O3 misreads "literal" + std::string as an overlapping
  // copy (-Wrestrict).
  for (const std::string& piece :
       {std::to_string(spec.axis), std::to_string(spec.concat_axis), std::to_string(spec.tiled),
        std::string(spec.algorithm ? AlgorithmName(*spec.algorithm) : ""),
        TypeString(x.dtype, x.shape)}) {
    key += '|';
    key += piece;
  }
  return key;
}

}  // namespace

std::string StagePrefix(size_t stage) {
  std::string prefix = "s";
  prefix += std::to_string(stage);
  prefix += '_';
  return prefix;
}

std::string CollectivePlan::Describe() const {
  if (stages.size() == 1) return AlgorithmName(stages[0].algorithm);
  std::string d;
  for (const Stage& st : stages)
    d += (d.empty() ? "" : ", ") + std::string(AlgorithmName(st.algorithm)) + " over " + st.over;
  return d;
}

base::CorePort::ScopeDetails PlanDetails(const CollectivePlan& plan) {
  auto ns = [](double seconds) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", seconds * 1e9);
    return std::string(text);
  };
  return {
      {"algorithm", plan.Describe()},
      {"chosen", plan.forced ? "forced" : "by the cost estimate"},
      {"estimated latency ns", ns(plan.cost.latency_s)},
      {"estimated bandwidth ns", ns(plan.cost.bandwidth_s)},
      {"busiest link bytes", std::to_string(static_cast<uint64_t>(plan.cost.busiest_link_bytes))}};
}

CollectivePlan PlanCollective(const Mesh& mesh, const CollectiveSpec& spec, const ShapeDtype& x) {
  static std::mutex mutex;
  static std::map<std::string, CollectivePlan> cache;
  const std::string key = KeyOf(mesh, spec, x);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  CollectivePlan plan = Make(mesh, spec, x);
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, std::move(plan)).first->second;
}

}  // namespace tpusim::kernels::lax
