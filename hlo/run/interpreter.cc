#include "hlo/run/interpreter.h"

#include <algorithm>

#include "dsl/program/op_registry.h"
#include "hlo/run/hlo_computation.h"
#include "hlo/run/types.h"

namespace tpusim::hlo::run {

namespace {

// One device's value of an instruction: an array, a tuple of values, or the pending half
// of an async pair.
struct HloValue {
  dsl::Value array;
  std::vector<HloValue> elements;
  bool tuple = false;
  // The pending half of an async pair: one op per operand (XLA combines collectives).
  std::vector<std::shared_ptr<dsl::AsyncValues>> started;
};

void Flatten(const HloValue& v, std::vector<dsl::Value>& out) {
  if (!v.tuple) {
    out.push_back(v.array);
    return;
  }
  for (const HloValue& e : v.elements)
    Flatten(e, out);
}

class DeviceInterpreter {
 public:
  DeviceInterpreter(const ModulePlan& plan, dsl::ProgramContext& ctx)
      : plan_(plan),
        module_(*plan.module),
        ctx_(ctx),
        context_{module_, *plan.devices, [this](int index) { return Adapter(index); },
                 plan.kernel_map} {}

  // Each value is dropped after its last use, so HBM holds what XLA's buffers would: the
  // program's live ranges, not every temporary at once.
  HloValue Run(int index, const std::vector<HloValue>& args) {
    const Computation& c = module_.computations.at(static_cast<size_t>(index));
    const std::vector<size_t>& last_use = LastUses(index);
    std::vector<HloValue> values(c.instructions.size());
    for (size_t n = 0; n < c.instructions.size(); ++n) {
      values[n] = Execute(index, c, c.instructions[n], values, args);
      for (int o : c.instructions[n].operands) {
        if (last_use[static_cast<size_t>(o)] == n) values[static_cast<size_t>(o)] = HloValue{};
      }
      if (last_use[n] == n) values[n] = HloValue{};
    }
    return values[static_cast<size_t>(c.root)];
  }

 private:
  // For each instruction of computation `index`, the last instruction that reads it (itself
  // when none does; the root is read by the caller, so it is never dropped).
  const std::vector<size_t>& LastUses(int index) {
    auto [it, added] = last_uses_.try_emplace(index);
    if (!added) return it->second;
    const Computation& c = module_.computations.at(static_cast<size_t>(index));
    std::vector<size_t>& last = it->second;
    last.resize(c.instructions.size());
    for (size_t n = 0; n < c.instructions.size(); ++n) {
      last[n] = n;
      for (int o : c.instructions[n].operands)
        last[static_cast<size_t>(o)] = n;
    }
    last[static_cast<size_t>(c.root)] = c.instructions.size();
    return last;
  }

  dsl::ComputationPtr Adapter(int index) {
    auto it = adapters_.find(index);
    if (it != adapters_.end()) return it->second;
    auto adapter =
        std::make_shared<HloComputation>(module_, index, context_, ctx_.mesh(), ctx_.device_id());
    adapters_.emplace(index, adapter);
    return adapter;
  }

  dsl::StepLabel Label(const Instruction& i) const {
    dsl::StepLabel label{i.name, i.opcode, {}};
    if (i.metadata && !i.metadata->op_name.empty())
      label.details.emplace_back("op_name", i.metadata->op_name);
    if (i.metadata && !i.metadata->source_file.empty()) {
      label.details.emplace_back(
          "source", i.metadata->source_file + ":" + std::to_string(i.metadata->source_line));
    }
    return label;
  }

  std::vector<dsl::Value> Operands(const Instruction& i, const std::vector<HloValue>& values,
                                   size_t count) const {
    std::vector<dsl::Value> operands;
    for (size_t k = 0; k < count && k < i.operands.size(); ++k) {
      const HloValue& v = values[static_cast<size_t>(i.operands[k])];
      if (v.tuple || !v.array.defined()) {
        FailAt(i.location, "'" + i.name + "' (" + i.opcode + "): operand " + std::to_string(k) +
                               " is not an array; tpusim runs this op on arrays only.");
      }
      operands.push_back(v.array);
    }
    return operands;
  }

  // The results of a program op as the instruction's value (a tuple when its shape is one),
  // checked against the shapes the module states.
  HloValue Shaped(const Instruction& i, std::vector<dsl::Value> results) const {
    const std::vector<dsl::ShapeDtype> want = LeafTypes(i.shape, "'" + i.name + "'");
    if (want.size() != results.size()) {
      FailAt(i.location, "'" + i.name + "' (" + i.opcode + ") gave " +
                             std::to_string(results.size()) + " results where the module has " +
                             std::to_string(want.size()) + "; tpusim's " + i.opcode +
                             " does not match XLA's here (please report it).");
    }
    for (size_t k = 0; k < want.size(); ++k) {
      if (results[k].shape() != want[k].shape || results[k].dtype() != want[k].dtype) {
        FailAt(i.location, "'" + i.name + "' (" + i.opcode + ") computed " + results[k].Describe() +
                               " where the module states " +
                               dsl::TypeString(want[k].dtype, want[k].shape) + "; tpusim's " +
                               i.opcode + " does not match XLA's here (please report it).");
      }
    }
    HloValue v;
    if (!i.shape.IsTuple()) {
      v.array = results.at(0);
      return v;
    }
    v.tuple = true;
    for (dsl::Value& r : results)
      v.elements.push_back(HloValue{std::move(r), {}, false, {}});
    return v;
  }

  HloValue Lowered(const Instruction& i, const std::vector<HloValue>& values) {
    LoweredOp lowered;
    try {
      lowered = Lower(i, context_);
    } catch (const HloError&) {
      if (!plan_.unknown_ops_free || IsKnownOpcode(i.opcode)) throw;
      return Free(i);
    }
    if (!IsCollective(i.opcode)) {
      return Shaped(i, ctx_.CallAs(Label(i), lowered.op, Operands(i, values, i.operands.size()),
                                   lowered.attrs));
    }
    // A combined collective runs once per operand, one after the other.
    std::vector<dsl::Value> results;
    for (const dsl::Value& operand : CollectiveOperands(i, values))
      results.push_back(ctx_.CallAs(Label(i), lowered.op, {operand}, lowered.attrs).at(0));
    return Shaped(i, std::move(results));
  }

  // What a collective moves: each operand (a combined collective has several), except
  // collective-permute's extra operands, which are in-place buffers, not data it sends.
  std::vector<dsl::Value> CollectiveOperands(const Instruction& i,
                                             const std::vector<HloValue>& values) const {
    const bool permute = BaseOpcode(i.opcode) == "collective-permute";
    return Operands(i, values, permute ? 1 : i.operands.size());
  }

  // An op the model does not know, under --unknown-ops=free: results with no time.
  HloValue Free(const Instruction& i) {
    std::vector<dsl::Value> results;
    dsl::StepLabel label = Label(i);
    label.op = i.opcode + " (unknown, free)";
    for (const dsl::ShapeDtype& t : LeafTypes(i.shape, "'" + i.name + "'")) {
      results.push_back(
          ctx_.CallAs(label, "constant", {},
                      {{"shape", std::vector<int64_t>(t.shape.begin(), t.shape.end())},
                       {"dtype", t.dtype}})
              .at(0));
    }
    return Shaped(i, std::move(results));
  }

  // Starts `op` asynchronously on `in` (a collective: once per operand, side by side).
  HloValue Start(const Instruction& i, const Instruction& op, const std::vector<dsl::Value>& in,
                 bool per_operand) {
    const LoweredOp lowered = Lower(op, context_);
    HloValue v;
    if (!per_operand) {
      v.started.push_back(std::make_shared<dsl::AsyncValues>(
          ctx_.CallStartAs(Label(i), lowered.op, in, lowered.attrs)));
      return v;
    }
    for (const dsl::Value& operand : in) {
      v.started.push_back(std::make_shared<dsl::AsyncValues>(
          ctx_.CallStartAs(Label(i), lowered.op, {operand}, lowered.attrs)));
    }
    return v;
  }

  HloValue Done(const Instruction& i, const HloValue& start) {
    if (start.started.empty()) {
      FailAt(i.location, "'" + i.name + "' waits for an async op that did not start here.");
    }
    std::vector<dsl::Value> results;
    for (const auto& started : start.started) {
      for (dsl::Value& r : ctx_.CallDone(*started))
        results.push_back(std::move(r));
    }
    return Shaped(i, std::move(results));
  }

  // A computation async-start wraps: its parameters are the async-start's operands and its
  // root is the one op that runs asynchronously.
  HloValue AsyncStart(const Instruction& i, const std::vector<HloValue>& values) {
    const int called = i.Called("calls");
    if (called < 0) FailAt(i.location, "'" + i.name + "' (async-start) needs calls=%computation.");
    const Computation& wrapped = module_.computations[static_cast<size_t>(called)];
    const Instruction& root = wrapped.root_instruction();
    std::vector<dsl::Value> in;
    for (int o : root.operands) {
      const Instruction& operand = wrapped.instructions[static_cast<size_t>(o)];
      if (operand.opcode != "parameter") {
        FailAt(i.location, "'" + i.name + "' wraps %" + wrapped.name +
                               ", whose root reads more than its parameters; tpusim runs "
                               "async computations of one op.");
      }
      in.push_back(
          Operands(i, values, i.operands.size()).at(static_cast<size_t>(operand.parameter_number)));
    }
    return Start(i, root, in, IsCollective(root.opcode));
  }

  HloValue While(const Instruction& i, int computation, int index, HloValue state) {
    const int condition = i.Called("condition");
    const int body = i.Called("body");
    const auto known = plan_.trip_counts.find({computation, index});
    const int64_t trips = known == plan_.trip_counts.end() ? -1 : known->second;
    for (int64_t trip = 0;; ++trip) {
      const HloValue go = Run(condition, {state});
      bool again = trips >= 0 && trip < trips;
      if (ctx_.functional()) {
        again = ctx_.Read(go.array).GetFlat(0) != 0;
      } else if (trips < 0) {
        FailAt(i.location, "the while loop '" + i.name +
                               "' has no known trip count (no known_trip_count in its "
                               "backend_config, and its condition is not a counter compared "
                               "with a constant), so a timing-only run cannot tell how often "
                               "it runs; run it functionally.");
      }
      if (!again) return state;
      state = Run(body, {state});
    }
  }

  HloValue Conditional(const Instruction& i, const std::vector<HloValue>& values) {
    std::vector<int> branches;
    if (i.Called("true_computation") >= 0) {
      branches = {i.Called("true_computation"), i.Called("false_computation")};
    } else {
      for (const CalledComputation& c : i.called_computations)
        branches.push_back(c.computation);
    }
    const dsl::Value selector = Operands(i, values, 1).at(0);
    size_t taken = branches.size() - 1;
    if (ctx_.functional()) {
      const double v = ctx_.Read(selector).GetFlat(0);
      // pred: true runs branch 0; an index out of range runs the last branch (XLA).
      taken = selector.dtype() == dsl::DType::kBool
                  ? (v != 0 ? 0 : 1)
                  : (v >= 0 && v < static_cast<double>(branches.size()) ? static_cast<size_t>(v)
                                                                        : branches.size() - 1);
    } else {
      taken = static_cast<size_t>(plan_.branch_taken.at(&i));
    }
    std::vector<HloValue> args;
    args.push_back(values[static_cast<size_t>(i.operands.at(taken + 1))]);
    return Run(branches[taken], args);
  }

  HloValue Execute(int computation, const Computation& c, const Instruction& i,
                   const std::vector<HloValue>& values, const std::vector<HloValue>& args) {
    const std::string& op = i.opcode;
    auto operand = [&](size_t k) -> const HloValue& {
      return values[static_cast<size_t>(i.operands.at(k))];
    };
    if (op == "parameter") return args.at(static_cast<size_t>(i.parameter_number));
    if (op == "tuple") {
      HloValue v;
      v.tuple = true;
      for (size_t k = 0; k < i.operands.size(); ++k)
        v.elements.push_back(operand(k));
      return v;
    }
    if (op == "get-tuple-element") {
      const HloValue& t = operand(0);
      if (!t.tuple) FailAt(i.location, "'" + i.name + "' takes an element of a non-tuple.");
      return t.elements.at(static_cast<size_t>(i.tuple_index));
    }
    if (op == "bitcast") {
      HloValue v;
      v.array = operand(0).array.View(TypeOf(i.shape, "'" + i.name + "'"));
      return v;
    }
    if (op == "after-all") return HloValue{};
    if (op == "add-dependency" || op == "opt-barrier" || op == "domain") return operand(0);
    if (op == "while") {
      return While(i, computation, static_cast<int>(&i - c.instructions.data()), operand(0));
    }
    if (op == "call") {
      std::vector<HloValue> call_args;
      for (size_t k = 0; k < i.operands.size(); ++k)
        call_args.push_back(operand(k));
      return Run(i.Called("to_apply"), call_args);
    }
    if (op == "conditional") return Conditional(i, values);
    if (op == "copy-start") {
      HloValue v;
      v.started.push_back(std::make_shared<dsl::AsyncValues>(
          ctx_.CallStartAs(Label(i), "copy", Operands(i, values, 1), {})));
      return v;
    }
    if (op == "async-start") return AsyncStart(i, values);
    if (op == "async-update") return operand(0);
    if (op == "copy-done" || op == "async-done" ||
        (IsCollective(op) && op.size() > 5 && op.compare(op.size() - 5, 5, "-done") == 0)) {
      return Done(i, operand(0));
    }
    if (IsCollective(op) && op != BaseOpcode(op))
      return Start(i, i, CollectiveOperands(i, values), true);
    if (op == "send" || op == "recv" || op == "send-done" || op == "recv-done") {
      if (plan_.unknown_ops_free) return Free(i);
      FailAt(i.location, "'" + i.name + "' (" + op +
                             "): host transfers are not modelled. Set unknown_ops to free to "
                             "charge them nothing.");
    }
    return Lowered(i, values);
  }

  const ModulePlan& plan_;
  const Module& module_;
  dsl::ProgramContext& ctx_;
  LoweringContext context_;
  std::map<int, dsl::ComputationPtr> adapters_;
  std::map<int, std::vector<size_t>> last_uses_;
};

}  // namespace

std::vector<dsl::Value> RunEntry(const ModulePlan& plan, dsl::ProgramContext& ctx,
                                 const std::vector<dsl::Value>& parameters) {
  DeviceInterpreter interpreter(plan, ctx);
  std::vector<HloValue> args;
  for (const dsl::Value& p : parameters)
    args.push_back(HloValue{p, {}, false, {}});
  const HloValue result = interpreter.Run(plan.module->entry, args);
  std::vector<dsl::Value> out;
  Flatten(result, out);
  return out;
}

}  // namespace tpusim::hlo::run
