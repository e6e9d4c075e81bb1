// Named operands and ring neighbours: what lets a kernel body say k.ref("x") and
// k.ring("x") instead of refs[7] and (me + n - 1) % n.

#include <algorithm>

#include "base/errors.h"
#include "base/text.h"
#include "dsl/kernel.h"

namespace tpusim::dsl {

const Refs& Kernel::Operands() const {
  if (!operands_) {
    throw Error(ErrorKind::kKernelMisuse,
                "the kernel binds its operands outside a pallas_call step; call k.operands() "
                "or k.ref() from the kernel body.");
  }
  return *operands_;
}

std::string Kernel::DescribeOperands() const {
  std::string names;
  for (const Ref& r : *operands_)
    base::AppendListItem(names, ", ", r.name());
  return std::to_string(operands_->size()) + " (" + names + ")";
}

void Kernel::CheckOperandCount(size_t bound) const {
  if (Operands().size() == bound) return;
  throw Error(ErrorKind::kKernelMisuse,
              "pallas_call '" + call_name_ + "': the kernel binds " + std::to_string(bound) +
                  " operands, but the call passes " + DescribeOperands() +
                  ": its inputs, outputs, then its GridSpec's scratch_shapes. Bind all of them "
                  "in that order, or change the GridSpec.");
}

const Ref& Kernel::ref(std::string_view name) const {
  const Ref* found = nullptr;
  for (const Ref& r : Operands()) {
    if (r.name() != name) continue;
    if (found) {
      throw Error(ErrorKind::kKernelMisuse,
                  "pallas_call '" + call_name_ + "': the kernel asks for operand '" +
                      std::string(name) + "', but the call names two operands '" +
                      std::string(name) + "' among its " + DescribeOperands() +
                      "; give each input, output and scratch a name of its own.");
    }
    found = &r;
  }
  if (!found) {
    throw Error(ErrorKind::kKernelMisuse,
                "pallas_call '" + call_name_ + "': the kernel asks for operand '" +
                    std::string(name) + "', but the call has no operand of that name; its " +
                    DescribeOperands() +
                    " operands are named by in_names, out_names and the scratch_shapes' names. "
                    "Fix the name in the kernel or in the call.");
  }
  return *found;
}

Ring Ring::Of(std::shared_ptr<const std::vector<int>> members, int device) {
  const auto it = std::find(members->begin(), members->end(), device);
  if (it == members->end()) {
    throw Error(ErrorKind::kInvalidArgument,
                "device " + std::to_string(device) + " is not in the group " +
                    base::JoinInts(*members) + " it was asked to communicate in.");
  }
  Ring r;
  r.size = static_cast<int>(members->size());
  r.index = static_cast<int>(it - members->begin());
  r.members = std::move(members);
  r.left = r.device_at(r.index_at(-1));
  r.right = r.device_at(r.index_at(1));
  return r;
}

Ring Kernel::ring(const std::string& axis) const {
  const Mesh& m = mesh();
  const int a = m.AxisIndex(axis);
  std::vector<int> coords = m.CoordsOf(device_id());
  auto members = std::make_shared<std::vector<int>>();
  members->reserve(static_cast<size_t>(m.shape()[a]));
  for (int i = 0; i < m.shape()[a]; ++i) {
    coords[a] = i;
    members->push_back(m.DeviceAt(coords));
  }
  return Ring::Of(std::move(members), device_id());
}

}  // namespace tpusim::dsl
