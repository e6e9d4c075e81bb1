#pragma once

// Collectives across the devices the interpreter evaluates in lockstep: all-reduce,
// all-gather, reduce-scatter, all-to-all, collective-permute, collective-broadcast and the
// -start forms of all-reduce, all-gather and collective-permute. Device groups follow XLA's
// CollectiveOpGroupMode: no channel_id, replica_groups name replicas (a group per
// partition); channel_id alone, partitions (a group per replica); channel_id with
// use_global_device_ids=false, replicas whose every partition takes part; with
// use_global_device_ids=true, global device ids (replica * num_partitions + partition).

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hlo/reference/value.h"

namespace tpusim::hlo::reference {

enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

// The group mode of a collective instruction (fails on use_global_device_ids=true without
// a channel_id, which XLA rejects).
GroupMode GroupModeOf(const Instruction& instruction);

// The groups of global device ids the instruction's replica_groups form (absent or {}:
// everyone), each in group order.
std::vector<std::vector<int64_t>> DeviceGroups(const Module& module,
                                               const Instruction& instruction);

struct CollectiveInput {
  const Module& module;
  const Instruction& instruction;
  const std::vector<int64_t>& devices;              // the global id of each slot
  std::vector<std::vector<const Value*>> operands;  // [slot][operand]
  // Runs a computation (a reducer) on a device.
  std::function<Value(int64_t device, int computation, std::vector<Value> arguments)> call;
};

bool IsCollective(const std::string& opcode);
// The result on every slot.
std::vector<Value> EvaluateCollective(const CollectiveInput& in);

}  // namespace tpusim::hlo::reference
