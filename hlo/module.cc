#include "hlo/module.h"

namespace tpusim::hlo {

namespace {

std::string_view WithoutPercent(std::string_view name) {
  return !name.empty() && name[0] == '%' ? name.substr(1) : name;
}

int Lookup(const NameIndex& index, std::string_view name) {
  const auto found = index.find(WithoutPercent(name));
  return found == index.end() ? -1 : found->second;
}

}  // namespace

const Attribute* Instruction::FindAttribute(std::string_view attribute_name) const {
  for (const Attribute& attribute : attributes) {
    if (attribute.name == attribute_name) return &attribute;
  }
  return nullptr;
}

const Attribute& Instruction::GetAttribute(std::string_view attribute_name) const {
  if (const Attribute* attribute = FindAttribute(attribute_name)) return *attribute;
  FailAt(location, "The " + opcode + " %" + name + " has no attribute " +
                       std::string(attribute_name) + "; add " + std::string(attribute_name) +
                       "=... after its operands.");
}

int Instruction::Called(std::string_view attribute) const {
  for (const CalledComputation& called : called_computations) {
    if (called.attribute == attribute) return called.computation;
  }
  return -1;
}

int Computation::FindInstruction(std::string_view instruction_name) const {
  return Lookup(instruction_index, instruction_name);
}

int Module::FindComputationIndex(std::string_view computation_name) const {
  return Lookup(computation_index, computation_name);
}

const Computation* Module::FindComputation(std::string_view computation_name) const {
  const int index = FindComputationIndex(computation_name);
  return index < 0 ? nullptr : &computations[static_cast<size_t>(index)];
}

const Attribute* Module::FindHeaderAttribute(std::string_view attribute_name) const {
  for (const Attribute& attribute : header_attributes) {
    if (attribute.name == attribute_name) return &attribute;
  }
  return nullptr;
}

}  // namespace tpusim::hlo
