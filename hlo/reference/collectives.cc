#include "hlo/reference/collectives.h"

#include <map>
#include <optional>

#include "hlo/reference/ops.h"
#include "hlo/replica_groups.h"

namespace tpusim::hlo::reference {

namespace {

bool HasChannel(const Instruction& instruction) {
  return instruction.FindAttribute("channel_id") != nullptr;
}

// The collective without its asynchronous suffix: all-gather-start is an all-gather.
std::string BaseOpcode(const std::string& opcode) {
  const std::string suffix = "-start";
  if (opcode.size() > suffix.size() && opcode.ends_with(suffix))
    return opcode.substr(0, opcode.size() - suffix.size());
  return opcode;
}

// Where each device sits: its group and its index in it.
struct Placement {
  const std::vector<int64_t>* group = nullptr;
  size_t rank = 0;
};

class Collective {
 public:
  explicit Collective(const CollectiveInput& input) : in(input) {
    for (size_t s = 0; s < input.devices.size(); ++s)
      slot_of[input.devices[s]] = s;
  }

  const Instruction& instruction() const { return in.instruction; }
  size_t slots() const { return in.devices.size(); }

  // Every evaluated device's group; fails when a device is in none or a group member is not
  // evaluated here (a collective inside a branch only some devices take).
  // The placements point into `groups`, which must outlive them.
  std::vector<Placement> Place(std::vector<std::vector<int64_t>>&&) const = delete;
  std::vector<Placement> Place(const std::vector<std::vector<int64_t>>& groups) const {
    std::vector<Placement> placements(slots());
    std::vector<bool> placed(slots(), false);
    for (const std::vector<int64_t>& group : groups) {
      size_t evaluated = 0;
      for (const int64_t device : group)
        evaluated += slot_of.count(device);
      if (evaluated == 0) continue;  // devices that took another branch
      for (size_t r = 0; r < group.size(); ++r) {
        const auto found = slot_of.find(group[r]);
        if (found == slot_of.end()) {
          Fail(instruction(), "device " + std::to_string(group[r]) +
                                  " of its group does not evaluate it (every device of a group "
                                  "must reach the collective)");
        }
        placements[found->second] = {&group, r};
        placed[found->second] = true;
      }
    }
    for (size_t s = 0; s < slots(); ++s) {
      if (!placed[s])
        Fail(instruction(),
             "device " + std::to_string(in.devices[s]) + " is in none of its groups");
    }
    return placements;
  }

  size_t SlotOf(int64_t device) const { return slot_of.at(device); }

  const dsl::Array& Operand(size_t slot, size_t k) const {
    const std::vector<const Value*>& operands = in.operands[slot];
    if (k >= operands.size() || operands[k]->is_tuple)
      Fail(instruction(), "operand " + std::to_string(k) + " should be an array");
    return operands[k]->array;
  }
  size_t OperandCount() const { return in.operands.empty() ? 0 : in.operands[0].size(); }

  Reducer MakeReducer(size_t slot) const {
    const int computation = instruction().Called("to_apply");
    if (computation < 0) Fail(instruction(), "it calls no computation through to_apply");
    const int64_t device = in.devices[slot];
    return Reducer(in.module, instruction(), computation,
                   [this, device](int c, std::vector<Value> arguments) {
                     return in.call(device, c, std::move(arguments));
                   });
  }

  // The group's operand k reduced in group order: r = x0; r = f(r, x1); ...
  dsl::Array Reduce(const Reducer& reducer, const std::vector<int64_t>& group, size_t k) const {
    dsl::Array result = Operand(SlotOf(group[0]), k);
    for (size_t r = 1; r < group.size(); ++r) {
      const dsl::Array& next = Operand(SlotOf(group[r]), k);
      if (next.shape() != result.shape() || next.dtype() != result.dtype())
        Fail(instruction(), "its operands differ in shape across the group");
      result = reducer.Combine(result, next);
    }
    return result;
  }

  int64_t Dimension() const {
    const std::vector<int64_t> dims = DecodeIntList(instruction().GetAttribute("dimensions"));
    if (dims.size() != 1 || dims[0] < 0)
      Fail(instruction(), "dimensions should name one dimension");
    return dims[0];
  }

  // Values of several results: one array, or a tuple of them.
  Value Pack(std::vector<dsl::Array> arrays) const {
    if (arrays.size() == 1 && OperandCount() == 1) return Value::Of(std::move(arrays[0]));
    std::vector<Value> elements;
    for (dsl::Array& a : arrays)
      elements.push_back(Value::Of(std::move(a)));
    return Value::Tuple(std::move(elements));
  }

  // The -start forms that return (operands, result, contexts...).
  Value WrapStart(size_t slot, Value result) const {
    Value start = Zeros(instruction(), instruction().shape);
    if (!start.is_tuple || start.elements.size() < 2)
      Fail(instruction(), "its result should be a tuple (operands, result, ...)");
    std::vector<Value> operands;
    for (const Value* operand : in.operands[slot])
      operands.push_back(*operand);
    start.elements[0] = operands.size() == 1 ? operands[0] : Value::Tuple(std::move(operands));
    start.elements[1] = std::move(result);
    return start;
  }

  const CollectiveInput& in;
  std::map<int64_t, size_t> slot_of;
};

dsl::Array Concatenate(const std::vector<const dsl::Array*>& parts, size_t d,
                       const Instruction& instruction) {
  Dims dims = parts[0]->shape();
  if (d >= dims.size()) Fail(instruction, "its dimension is outside its operand");
  dims[d] = 0;
  for (const dsl::Array* part : parts) {
    bool fits = part->shape().size() == dims.size() && part->dtype() == parts[0]->dtype();
    for (size_t k = 0; fits && k < dims.size(); ++k)
      fits = k == d || part->shape()[k] == dims[k];
    if (!fits) Fail(instruction, "its operands differ in shape across the group");
    dims[d] += part->shape()[d];
  }
  dsl::Array out = NewArray(parts[0]->dtype(), dims);
  Dims offsets(dims.size(), 0);
  for (const dsl::Array* part : parts) {
    if (part->size() > 0) out.Place(*part, offsets);
    offsets[d] += part->shape()[d];
  }
  return out;
}

// Block `index` of `count` equal blocks along d.
dsl::Array Block(const dsl::Array& array, size_t d, size_t index, size_t count,
                 const Instruction& instruction) {
  if (d >= array.shape().size() || array.shape()[d] % static_cast<int64_t>(count) != 0)
    Fail(instruction, "its dimension of size " +
                          (d < array.shape().size() ? std::to_string(array.shape()[d]) : "?") +
                          " does not split into " + std::to_string(count) + " equal blocks");
  Dims offsets(array.shape().size(), 0), sizes = array.shape();
  sizes[d] /= static_cast<int64_t>(count);
  offsets[d] = sizes[d] * static_cast<int64_t>(index);
  dsl::Array out = NewArray(array.dtype(), sizes);
  if (out.size() > 0) out.bytes() = array.Slice(offsets, sizes).bytes();
  return out;
}

std::vector<Value> AllReduce(const Collective& c, bool scatter) {
  const std::vector<std::vector<int64_t>> groups = DeviceGroups(c.in.module, c.instruction());
  const std::vector<Placement> placements = c.Place(groups);
  std::vector<Value> results(c.slots());
  for (size_t s = 0; s < c.slots(); ++s) {
    const Placement& p = placements[s];
    const Reducer reducer = c.MakeReducer(s);
    std::vector<dsl::Array> arrays;
    for (size_t k = 0; k < c.OperandCount(); ++k) {
      dsl::Array reduced = c.Reduce(reducer, *p.group, k);
      arrays.push_back(scatter ? Block(reduced, static_cast<size_t>(c.Dimension()), p.rank,
                                       p.group->size(), c.instruction())
                               : std::move(reduced));
    }
    results[s] = c.Pack(std::move(arrays));
  }
  return results;
}

std::vector<Value> AllGather(const Collective& c, bool start) {
  const std::vector<std::vector<int64_t>> groups = DeviceGroups(c.in.module, c.instruction());
  const std::vector<Placement> placements = c.Place(groups);
  const auto d = static_cast<size_t>(c.Dimension());
  std::vector<Value> results(c.slots());
  for (size_t s = 0; s < c.slots(); ++s) {
    std::vector<dsl::Array> arrays;
    for (size_t k = 0; k < c.OperandCount(); ++k) {
      std::vector<const dsl::Array*> parts;
      for (const int64_t device : *placements[s].group)
        parts.push_back(&c.Operand(c.SlotOf(device), k));
      arrays.push_back(Concatenate(parts, d, c.instruction()));
    }
    results[s] = start ? c.WrapStart(s, c.Pack(std::move(arrays))) : c.Pack(std::move(arrays));
  }
  return results;
}

std::vector<Value> AllToAll(const Collective& c) {
  const std::vector<std::vector<int64_t>> groups = DeviceGroups(c.in.module, c.instruction());
  const std::vector<Placement> placements = c.Place(groups);
  std::vector<Value> results(c.slots());
  const bool split = c.instruction().FindAttribute("dimensions") != nullptr;
  for (size_t s = 0; s < c.slots(); ++s) {
    const std::vector<int64_t>& group = *placements[s].group;
    const size_t rank = placements[s].rank;
    if (split) {
      if (c.OperandCount() != 1) Fail(c.instruction(), "its split form takes one operand");
      // Chunk `rank` of every member's operand, concatenated in member order.
      const auto d = static_cast<size_t>(c.Dimension());
      std::vector<dsl::Array> chunks;
      for (const int64_t device : group)
        chunks.push_back(
            Block(c.Operand(c.SlotOf(device), 0), d, rank, group.size(), c.instruction()));
      std::vector<const dsl::Array*> parts;
      for (const dsl::Array& chunk : chunks)
        parts.push_back(&chunk);
      results[s] = Value::Of(Concatenate(parts, d, c.instruction()));
    } else {
      // Tuple form: operand j goes to member j; result element i comes from member i.
      if (c.OperandCount() != group.size())
        Fail(c.instruction(), "its tuple form needs one operand per group member");
      std::vector<Value> elements;
      for (const int64_t device : group)
        elements.push_back(Value::Of(c.Operand(c.SlotOf(device), rank)));
      results[s] = Value::Tuple(std::move(elements));
    }
  }
  return results;
}

std::vector<Value> CollectivePermute(const Collective& c, bool start) {
  const int64_t partitions = c.in.module.num_partitions, replicas = c.in.module.replica_count;
  const bool by_partition = HasChannel(c.instruction());
  const auto pairs = DecodeSourceTargetPairs(c.instruction().GetAttribute("source_target_pairs"));
  std::vector<std::optional<size_t>> source_of(c.slots());
  // A channel_id names partitions within each replica; otherwise replicas within each
  // partition.
  for (int64_t outer = 0; outer < (by_partition ? replicas : partitions); ++outer) {
    for (const auto& [source, target] : pairs) {
      const int64_t limit = by_partition ? partitions : replicas;
      if (source < 0 || target < 0 || source >= limit || target >= limit)
        Fail(c.instruction(), "the pair {" + std::to_string(source) + "," + std::to_string(target) +
                                  "} names a " + (by_partition ? "partition" : "replica") +
                                  " that does not exist");
      const int64_t from = by_partition ? outer * partitions + source : source * partitions + outer;
      const int64_t to = by_partition ? outer * partitions + target : target * partitions + outer;
      if (!c.slot_of.contains(to)) continue;
      if (!c.slot_of.contains(from))
        Fail(c.instruction(),
             "its source device " + std::to_string(from) + " does not evaluate it");
      if (source_of[c.SlotOf(to)])
        Fail(c.instruction(), "device " + std::to_string(to) + " is the target of two pairs");
      source_of[c.SlotOf(to)] = c.SlotOf(from);
    }
  }
  std::vector<Value> results(c.slots());
  for (size_t s = 0; s < c.slots(); ++s) {
    const dsl::Array& own = c.Operand(s, 0);
    Value result =
        Value::Of(source_of[s] ? c.Operand(*source_of[s], 0) : NewArray(own.dtype(), own.shape()));
    results[s] = start ? c.WrapStart(s, std::move(result)) : std::move(result);
  }
  return results;
}

std::vector<Value> CollectiveBroadcast(const Collective& c) {
  const std::vector<std::vector<int64_t>> groups = DeviceGroups(c.in.module, c.instruction());
  const std::vector<Placement> placements = c.Place(groups);
  std::vector<Value> results(c.slots());
  for (size_t s = 0; s < c.slots(); ++s)
    results[s] = Value::Of(c.Operand(c.SlotOf(placements[s].group->front()), 0));
  return results;
}

}  // namespace

GroupMode GroupModeOf(const Instruction& instruction) {
  const std::string base = BaseOpcode(instruction.opcode);
  std::optional<bool> global_ids;
  if (base == "all-reduce" || base == "all-gather" || base == "reduce-scatter") {
    if (const Attribute* attribute = instruction.FindAttribute("use_global_device_ids"))
      global_ids = DecodeBool(*attribute);
  }
  if (!HasChannel(instruction)) {
    if (global_ids.value_or(false))
      Fail(instruction, "use_global_device_ids=true needs a channel_id (XLA rejects it without)");
    return GroupMode::kCrossReplica;
  }
  if (!global_ids) return GroupMode::kCrossPartition;
  return *global_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

std::vector<std::vector<int64_t>> DeviceGroups(const Module& module,
                                               const Instruction& instruction) {
  const GroupMode mode = GroupModeOf(instruction);
  const int64_t replicas = module.replica_count, partitions = module.num_partitions;
  const int64_t count = mode == GroupMode::kCrossPartition ? partitions
                        : mode == GroupMode::kFlattenedId  ? replicas * partitions
                                                           : replicas;
  const Attribute* attribute = instruction.FindAttribute("replica_groups");
  const ReplicaGroups ids =
      attribute ? DecodeReplicaGroups(*attribute, count)
                : DecodeReplicaGroups(ParseAttribute("replica_groups", "{}"), count);
  std::vector<std::vector<int64_t>> groups;
  for (const std::vector<int64_t>& group : ids) {
    switch (mode) {
      case GroupMode::kCrossReplica:
        for (int64_t p = 0; p < partitions; ++p) {
          groups.emplace_back();
          for (const int64_t r : group)
            groups.back().push_back(r * partitions + p);
        }
        break;
      case GroupMode::kCrossPartition:
        for (int64_t r = 0; r < replicas; ++r) {
          groups.emplace_back();
          for (const int64_t p : group)
            groups.back().push_back(r * partitions + p);
        }
        break;
      case GroupMode::kCrossReplicaAndPartition:
        groups.emplace_back();
        for (const int64_t r : group)
          for (int64_t p = 0; p < partitions; ++p)
            groups.back().push_back(r * partitions + p);
        break;
      case GroupMode::kFlattenedId:
        groups.push_back(group);
        break;
    }
  }
  return groups;
}

bool IsCollective(const std::string& opcode) {
  const std::string base = BaseOpcode(opcode);
  if (base != opcode && base != "all-reduce" && base != "all-gather" &&
      base != "collective-permute")
    return false;
  return base == "all-reduce" || base == "all-gather" || base == "reduce-scatter" ||
         base == "all-to-all" || base == "collective-permute" || base == "collective-broadcast";
}

std::vector<Value> EvaluateCollective(const CollectiveInput& in) {
  const Collective c(in);
  const std::string& opcode = in.instruction.opcode;
  const bool start = opcode != BaseOpcode(opcode);
  const std::string base = BaseOpcode(opcode);
  if (base == "all-reduce") return AllReduce(c, false);  // all-reduce-start returns the result
  if (base == "reduce-scatter") return AllReduce(c, true);
  if (base == "all-gather") return AllGather(c, start);
  if (base == "all-to-all") return AllToAll(c);
  if (base == "collective-permute") return CollectivePermute(c, start);
  if (base == "collective-broadcast") return CollectiveBroadcast(c);
  Fail(in.instruction, "it is not a collective");
}

}  // namespace tpusim::hlo::reference
