#include "hlo/run/analysis.h"

#include <algorithm>
#include <set>

#include "base/text.h"
#include "base/work.h"
#include "dsl/program/op_registry.h"
#include "hlo/run/hlo_computation.h"
#include "hlo/run/types.h"

namespace tpusim::hlo::run {

namespace {

// The scalar a constant instruction holds, when it is one.
std::optional<double> ConstantValue(const Computation& c, int index) {
  const Instruction& i = c.instructions.at(static_cast<size_t>(index));
  if (i.opcode != "constant" || i.literal_values.size() != 1) return std::nullopt;
  return i.literal_values[0];
}

// The tuple element `k` of the loop state that `value` (in `c`) reads, or -1.
int64_t StateElement(const Computation& c, int value) {
  const Instruction& i = c.instructions.at(static_cast<size_t>(value));
  if (i.opcode != "get-tuple-element") return -1;
  const Instruction& tuple = c.instructions.at(static_cast<size_t>(i.operands.at(0)));
  return tuple.opcode == "parameter" ? i.tuple_index : -1;
}

// A loop XLA's own analysis would count: the condition compares state element k with a
// constant, the body adds a constant step to element k, and element k starts as a constant.
int64_t EvidentTripCount(const Module& m, const Computation& caller, const Instruction& loop) {
  const Computation& cond = m.computations.at(static_cast<size_t>(loop.Called("condition")));
  const Computation& body = m.computations.at(static_cast<size_t>(loop.Called("body")));
  const Instruction& compare = cond.root_instruction();
  if (compare.opcode != "compare" || compare.operands.size() != 2) return -1;
  const Attribute* direction = compare.FindAttribute("direction");
  if (!direction) return -1;
  int64_t k = StateElement(cond, compare.operands[0]);
  std::optional<double> limit = ConstantValue(cond, compare.operands[1]);
  std::string dir = direction->text();
  if (k < 0 || !limit) {  // constant on the left: flip the comparison
    k = StateElement(cond, compare.operands[1]);
    limit = ConstantValue(cond, compare.operands[0]);
    if (dir == "LT")
      dir = "GT";
    else if (dir == "GT")
      dir = "LT";
    else if (dir == "LE")
      dir = "GE";
    else if (dir == "GE")
      dir = "LE";
  }
  if (k < 0 || !limit) return -1;
  const Instruction& next = body.root_instruction();
  if (next.opcode != "tuple" || k >= static_cast<int64_t>(next.operands.size())) return -1;
  const Instruction& add = body.instructions.at(static_cast<size_t>(next.operands[k]));
  if (add.opcode != "add" || add.operands.size() != 2) return -1;
  std::optional<double> step;
  if (StateElement(body, add.operands[0]) == k) step = ConstantValue(body, add.operands[1]);
  if (StateElement(body, add.operands[1]) == k) step = ConstantValue(body, add.operands[0]);
  const Instruction& init = caller.instructions.at(static_cast<size_t>(loop.operands.at(0)));
  if (!step || *step == 0 || init.opcode != "tuple") return -1;
  const std::optional<double> start = ConstantValue(caller, init.operands.at(k));
  if (!start) return -1;
  const double s = *start, l = *limit, d = *step;
  double trips = -1;
  if (dir == "LT" && d > 0) trips = std::ceil((l - s) / d);
  if (dir == "LE" && d > 0) trips = std::floor((l - s) / d) + 1;
  if (dir == "GT" && d < 0) trips = std::ceil((s - l) / -d);
  if (dir == "GE" && d < 0) trips = std::floor((s - l) / -d) + 1;
  if (dir == "NE" && std::fmod(l - s, d) == 0 && (l - s) / d >= 0) trips = (l - s) / d;
  return trips < 0 ? (dir == "NE" ? -1 : 0) : static_cast<int64_t>(trips);
}

int64_t KnownTripCount(const Instruction& loop) {
  if (!loop.backend_config) return -1;
  auto it = loop.backend_config->find("known_trip_count");
  if (it == loop.backend_config->end() || !it->is_object()) return -1;
  auto n = it->find("n");
  if (n == it->end()) return -1;
  if (n->is_number_integer()) return n->get<int64_t>();
  if (n->is_string()) {
    try {
      return std::stoll(n->get<std::string>());
    } catch (const std::exception&) {
      return -1;
    }
  }
  return -1;
}

class Analyser {
 public:
  Analyser(ModulePlan& plan, const dsl::Mesh& mesh)
      : plan_(plan),
        module_(*plan.module),
        mesh_(mesh),
        context_{module_, *plan.devices, [this](int index) { return Adapter(index); },
                 plan.kernel_map} {}

  ModuleAnalysis Run() {
    Walk(module_.entry, 1);
    for (auto& [opcode, use] : ops_)
      result_.ops.push_back(use);
    return result_;
  }

  // The time a computation's steps take at the chip's peak rates (collectives and launches
  // left out): how a timing-only run picks the slowest branch of a conditional. A ranking,
  // not the model's time.
  double Estimate(int index) {
    const Computation& c = module_.computations.at(static_cast<size_t>(index));
    double seconds = 0;
    for (const Instruction& i : c.instructions) {
      if (i.opcode == "call") seconds += Estimate(i.Called("to_apply"));
      if (i.opcode == "while") {
        const auto trips = plan_.trip_counts.find({index, Index(c, i)});
        const double n = trips == plan_.trip_counts.end()
                             ? 1
                             : static_cast<double>(std::max<int64_t>(trips->second, 1));
        seconds += n * (Estimate(i.Called("body")) + Estimate(i.Called("condition")));
      }
      if (IsStructural(i.opcode) || IsCollective(i.opcode)) continue;
      try {
        const LoweredOp lowered = Lower(i, context_);
        const dsl::OpDef& def = dsl::OpRegistry::Get().Find(lowered.op);
        if (def.run) continue;
        std::vector<dsl::ShapeDtype> operands;
        for (int o : i.operands)
          operands.push_back(TypeOf(c.instructions[static_cast<size_t>(o)].shape, "operand"));
        const dsl::Attributes attrs = dsl::ResolveAttributes(def, lowered.attrs);
        const dsl::OpTyping typing{lowered.op, mesh_, operands, attrs};
        const auto results = def.shape(typing);
        seconds += base::PeakSeconds(
            mesh_.topology().chip(),
            def.work ? def.work(typing, results) : dsl::MemoryBoundWork(typing, results));
      } catch (const Error&) {
        continue;  // unknown ops cost nothing here; the walk reports them
      }
    }
    return seconds;
  }

 private:
  static int Index(const Computation& c, const Instruction& i) {
    return static_cast<int>(&i - c.instructions.data());
  }

  dsl::ComputationPtr Adapter(int index) {
    auto it = adapters_.find(index);
    if (it != adapters_.end()) return it->second;
    auto adapter = std::make_shared<HloComputation>(module_, index, context_, mesh_, 0);
    adapters_.emplace(index, adapter);
    return adapter;
  }

  void NoNumerics(const std::string& why) {
    if (result_.missing_numerics.empty()) result_.missing_numerics = why;
  }

  void Note(const std::string& note) {
    if (std::find(result_.notes.begin(), result_.notes.end(), note) == result_.notes.end())
      result_.notes.push_back(note);
  }

  void Count(const Instruction& i, const std::string& charged) {
    OpUse& use = ops_[i.opcode];
    use.opcode = i.opcode;
    use.charged = charged;
    ++use.count;
    ++result_.instructions;
  }

  void Collective(const Instruction& i) {
    const std::string base = BaseOpcode(i.opcode);
    if (i.opcode != base && i.opcode.ends_with("-done")) return;
    CollectiveUse use{i.name, i.opcode, "", "", i.location.ToString()};
    if (base == "collective-permute") {
      const auto pairs = plan_.devices->Pairs(i);
      use.groups = std::to_string(pairs.size()) + " (source, target) pairs";
      std::set<std::string> places;
      for (const auto& [s, t] : pairs)
        places.insert(plan_.devices->DescribePair(s, t));
      for (const std::string& p : places)
        base::AppendListItem(use.placement, "; ", p);
    } else {
      const auto groups = plan_.devices->Groups(i);
      use.groups = std::to_string(groups.size()) +
                   (groups.size() == 1 ? " group of " : " groups of ") +
                   std::to_string(groups.empty() ? 0 : groups[0].size());
      std::string listed;
      for (size_t g = 0; g < groups.size() && g < 4; ++g)
        base::AppendListItem(listed, ", ", base::JoinInts(groups[g]));
      if (groups.size() > 4) listed += ", ...";
      use.groups += ": " + listed;
      if (!groups.empty()) use.placement = plan_.devices->DescribeGroup(groups[0]);
    }
    result_.collectives.push_back(use);
  }

  void Walk(int index, int depth) {
    if (depth > 64) return;
    const Computation& c = module_.computations.at(static_cast<size_t>(index));
    for (const Instruction& i : c.instructions) {
      if (i.shape.IsArray() && !HasNumerics(i.shape.element_type)) {
        NoNumerics("'" + i.name + "' is " + i.shape.ToString(false) +
                   ", an element type whose values tpusim does not model");
      }
      if (i.opcode == "while") {
        int64_t trips = KnownTripCount(i);
        if (trips < 0) trips = EvidentTripCount(module_, c, i);
        plan_.trip_counts[{index, Index(c, i)}] = trips;
        if (trips < 0) {
          NoNumerics("");  // keeps functional: the data decides
          Note("while '" + i.name + "': trip count not stated or evident; the data decides");
        }
        Count(i, trips >= 0 ? "runs its body " + std::to_string(trips) + " times"
                            : "runs while its condition holds");
        Walk(i.Called("condition"), depth + 1);
        Walk(i.Called("body"), depth + 1);
        continue;
      }
      if (i.opcode == "call") {
        Count(i, "runs its computation inline");
        Walk(i.Called("to_apply"), depth + 1);
        continue;
      }
      if (i.opcode == "conditional") {
        Conditional(c, i, depth);
        continue;
      }
      if (IsCollective(i.opcode)) Collective(i);
      if (IsStructural(i.opcode) && !(IsCollective(i.opcode) && i.opcode.ends_with("-done"))) {
        if (i.opcode == "send" || i.opcode == "recv" || i.opcode == "send-done" ||
            i.opcode == "recv-done") {
          Unknown(i);
          continue;
        }
        Count(i, i.opcode.starts_with("async") || i.opcode.starts_with("copy-")
                     ? "the async op it wraps, beside the ops up to its done"
                     : "free (bookkeeping)");
        continue;
      }
      if (IsStructural(i.opcode)) {
        Count(i, "waits for its start: the exposed part of the async op");
        continue;
      }
      try {
        const LoweredOp lowered = Lower(i, context_);
        const dsl::OpDef& def = dsl::OpRegistry::Get().Find(lowered.op);
        if (!def.compute && !def.run)
          NoNumerics("'" + i.name + "' (" + i.opcode + ") has no host numerics");
        if (lowered.op == "constant" && lowered.attrs.count("values") == 0)
          NoNumerics("the constant '" + i.name + "' was printed without its values");
        for (const auto& [name, attr] : lowered.attrs) {
          if (attr.type() == dsl::AttrType::kComputation)
            NoNumerics(attr.AsComputation().missing_numerics());
        }
        if (lowered.op == "pallas_call" || lowered.op == "cost_estimate")
          Note("'" + i.name + "' (custom-call) is charged as " + lowered.charged);
        Count(i, lowered.charged);
      } catch (const HloError&) {
        if (!plan_.unknown_ops_free || IsKnownOpcode(i.opcode)) throw;
        Unknown(i);
      }
    }
  }

  void Unknown(const Instruction& i) {
    if (!plan_.unknown_ops_free) {
      FailAt(i.location, "'" + i.name + "' (" + i.opcode +
                             "): this op is not modelled. Set unknown_ops to free to charge it "
                             "nothing (it is then listed in the report).");
    }
    result_.unknown.push_back(i.name + " (" + i.opcode + ") at " + i.location.ToString());
    NoNumerics("'" + i.name + "' (" + i.opcode + ") is not modelled");
    Count(i, "unknown: free (unknown_ops=free)");
  }

  void Conditional(const Computation& c, const Instruction& i, int depth) {
    std::vector<int> branches;
    if (i.Called("true_computation") >= 0) {
      branches = {i.Called("true_computation"), i.Called("false_computation")};
    } else {
      for (const CalledComputation& called : i.called_computations)
        branches.push_back(called.computation);
    }
    for (int b : branches)
      Walk(b, depth + 1);
    int taken = -1;
    if (const auto v = ConstantValue(c, i.operands.at(0))) {
      const bool pred = c.instructions[static_cast<size_t>(i.operands[0])].shape.element_type ==
                        PrimitiveType::kPred;
      taken = pred ? (*v != 0 ? 0 : 1)
                   : (*v >= 0 && *v < static_cast<double>(branches.size())
                          ? static_cast<int>(*v)
                          : static_cast<int>(branches.size()) - 1);
      Count(i, "the branch its constant selector picks");
    } else {
      double slowest = -1;
      for (size_t b = 0; b < branches.size(); ++b) {
        const double t = Estimate(branches[b]);
        if (t > slowest) {
          slowest = t;
          taken = static_cast<int>(b);
        }
      }
      Note("conditional '" + i.name + "': a timing-only run takes its slowest branch, %" +
           module_.computations[static_cast<size_t>(branches[static_cast<size_t>(taken)])].name +
           " (a functional run takes the one the data selects)");
      Count(i, "the branch the data selects (timing-only: the slowest)");
    }
    plan_.branch_taken[&i] = taken;
  }

  ModulePlan& plan_;
  const Module& module_;
  const dsl::Mesh& mesh_;
  LoweringContext context_;
  std::map<int, dsl::ComputationPtr> adapters_;
  std::map<std::string, OpUse> ops_;
  ModuleAnalysis result_;
};

}  // namespace

void CheckPartitioned(const Module& module) {
  const std::string fix =
      " Dump the module after SPMD partitioning: print jax.jit(f).lower(*args).compile()"
      ".as_text(), not lowered.as_text().";
  for (const Computation& c : module.computations) {
    for (const Instruction& i : c.instructions) {
      if (i.opcode == "custom-call") {
        const Attribute* target = i.FindAttribute("custom_call_target");
        const std::string name = target ? DecodeString(*target) : "";
        if (name == "Sharding" || name == "SPMDFullToShardShape" ||
            name == "SPMDShardToFullShape") {
          FailAt(i.location, "'" + i.name + "' is a '" + name +
                                 "' custom call: this module has not been through SPMD "
                                 "partitioning, so its shapes are global, not per device." +
                                 fix);
        }
      }
      const bool boundary = c.is_entry && (i.opcode == "parameter" || i.is_root);
      if (i.sharding && !boundary && module.num_partitions > 1) {
        FailAt(i.location, "'" + i.name +
                               "' carries a sharding annotation, which only a module "
                               "before SPMD partitioning has on an op inside it." +
                               fix);
      }
    }
  }
}

ModuleAnalysis Analyse(ModulePlan& plan, const dsl::Mesh& mesh) {
  CheckPartitioned(*plan.module);
  Analyser analyser(plan, mesh);
  return analyser.Run();
}

}  // namespace tpusim::hlo::run
