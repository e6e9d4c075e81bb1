// After the syntax: names become indices, the common attributes are decoded, and the
// module is checked the way XLA's parser checks it. Each failure is an HloError at the
// place in the text that has to change.

#include <algorithm>
#include <string>

#include "hlo/parse_state.h"

namespace tpusim::hlo::detail {

namespace {

// Attributes whose values name computations.
bool CallsComputations(std::string_view name) {
  return name == "to_apply" || name == "calls" || name == "condition" || name == "body" ||
         name == "true_computation" || name == "false_computation" ||
         name == "branch_computations" || name == "called_computations" || name == "select" ||
         name == "scatter";
}

std::string Where(const SourceLocation& location) {
  return location.ToString();
}

class Resolver {
 public:
  Resolver(Module& module, const std::vector<ParsedComputation>& parsed)
      : module_(module), parsed_(parsed) {}

  void Run() {
    DecodeHeader();
    IndexComputations();
    for (size_t c = 0; c < module_.computations.size(); ++c)
      ResolveComputation(static_cast<int>(c));
    CheckEntryLayout();
  }

 private:
  SourceLocation At(size_t offset) const {
    return {module_.computations[0].location.source, offset};
  }

  void DecodeHeader() {
    for (const Attribute& attribute : module_.header_attributes) {
      if (attribute.name == "is_scheduled") {
        module_.is_scheduled = DecodeBool(attribute);
      } else if (attribute.name == "num_partitions" || attribute.name == "replica_count") {
        const int64_t count = DecodeInt(attribute);
        if (count < 1) attribute.Fail(attribute.value, "a count of at least 1");
        (attribute.name == "num_partitions" ? module_.num_partitions : module_.replica_count) =
            count;
      } else if (attribute.name == "entry_computation_layout") {
        module_.entry_computation_layout = DecodeComputationLayout(attribute);
      } else if (attribute.name == "input_output_alias") {
        module_.input_output_aliases = DecodeInputOutputAlias(attribute);
      }
    }
  }

  void IndexComputations() {
    for (size_t c = 0; c < module_.computations.size(); ++c) {
      Computation& computation = module_.computations[c];
      const auto [it, added] =
          module_.computation_index.emplace(computation.name, static_cast<int>(c));
      if (!added) {
        FailAt(computation.location,
               "A computation named %" + computation.name + " is already defined at " +
                   Where(module_.computations[static_cast<size_t>(it->second)].location) +
                   "; each computation needs its own name.");
      }
      if (parsed_[c].entry_offset) {
        if (module_.entry >= 0) {
          FailAt(At(*parsed_[c].entry_offset),
                 "A second ENTRY computation: %" + module_.entry_computation().name +
                     " is already the entry; a module has one ENTRY.");
        }
        module_.entry = static_cast<int>(c);
      }
    }
    // As XLA: without an ENTRY marker the last computation is the entry.
    if (module_.entry < 0) module_.entry = static_cast<int>(module_.computations.size()) - 1;
    module_.computations[static_cast<size_t>(module_.entry)].is_entry = true;
  }

  void ResolveComputation(int c) {
    Computation& computation = module_.computations[static_cast<size_t>(c)];
    const ParsedComputation& parsed = parsed_[static_cast<size_t>(c)];
    if (computation.instructions.empty()) {
      FailAt(computation.location, "The computation %" + computation.name +
                                       " has no instructions; it needs at least a ROOT.");
    }
    for (size_t i = 0; i < computation.instructions.size(); ++i) {
      const Instruction& instruction = computation.instructions[i];
      const auto [it, added] =
          computation.instruction_index.emplace(instruction.name, static_cast<int>(i));
      if (!added) {
        FailAt(instruction.location,
               "The instruction name %" + instruction.name + " is already defined at " +
                   Where(computation.instructions[static_cast<size_t>(it->second)].location) +
                   " in computation %" + computation.name + "; names must be unique.");
      }
    }
    if (parsed.root_offsets.size() > 1) {
      FailAt(At(parsed.root_offsets[1]), "A second ROOT in computation %" + computation.name +
                                             "; a computation has one root instruction.");
    }
    computation.root = static_cast<int>(computation.instructions.size()) - 1;  // XLA's default
    for (size_t i = 0; i < computation.instructions.size(); ++i) {
      if (computation.instructions[i].is_root) computation.root = static_cast<int>(i);
    }
    computation.instructions[static_cast<size_t>(computation.root)].is_root = true;
    for (size_t i = 0; i < computation.instructions.size(); ++i) {
      ResolveInstruction(c, static_cast<int>(i), parsed.instructions[i]);
    }
    CollectParameters(computation);
    CheckSignature(computation);
  }

  void ResolveInstruction(int c, int i, const ParsedInstruction& parsed) {
    Computation& computation = module_.computations[static_cast<size_t>(c)];
    Instruction& instruction = computation.instructions[static_cast<size_t>(i)];
    for (size_t k = 0; k < instruction.operand_names.size(); ++k) {
      instruction.operands.push_back(ResolveOperand(computation, i, k, parsed.operands[k]));
    }
    for (const Attribute& attribute : instruction.attributes)
      DecodeAttribute(c, instruction, attribute);
    if (instruction.opcode == "get-tuple-element") CheckGetTupleElement(computation, instruction);
    if (instruction.opcode == "tuple") CheckTuple(computation, instruction, parsed);
  }

  int ResolveOperand(const Computation& computation, int user, size_t k, const OperandRef& ref) {
    const Instruction& instruction = computation.instructions[static_cast<size_t>(user)];
    const std::string& name = instruction.operand_names[k];
    const std::string subject = "The operand %" + name + " of %" + instruction.name;
    const int index = computation.FindInstruction(name);
    if (index < 0) {
      for (const Computation& other : module_.computations) {
        const int elsewhere = other.FindInstruction(name);
        if (elsewhere >= 0) {
          FailAt(At(ref.offset),
                 subject + " is not defined in computation %" + computation.name +
                     "; it is defined in computation %" + other.name + " (" +
                     Where(other.instructions[static_cast<size_t>(elsewhere)].location) +
                     "), and an instruction can only use instructions of its own computation.");
        }
      }
      FailAt(At(ref.offset),
             subject + " is not defined anywhere in the module; define it in computation %" +
                 computation.name + " before its use, or fix the name.");
    }
    const Instruction& operand = computation.instructions[static_cast<size_t>(index)];
    if (index >= user) {
      FailAt(At(ref.offset), subject + " is used before its definition (" +
                                 Where(operand.location) +
                                 "); each instruction must come after the instructions it uses.");
    }
    if (ref.shape && !Compatible(*ref.shape, operand.shape)) {
      FailAt(At(ref.offset), subject + " is written as " + ref.shape->ToString(false) + ", but %" +
                                 name + " is defined as " + operand.shape.ToString(false) + " (" +
                                 Where(operand.location) + ").");
    }
    return index;
  }

  void DecodeAttribute(int c, Instruction& instruction, const Attribute& attribute) {
    const std::string& name = attribute.name;
    if (name == "metadata") {
      instruction.metadata = DecodeMetadata(attribute);
    } else if (name == "sharding") {
      instruction.sharding = DecodeSharding(attribute);
    } else if (name == "backend_config") {
      instruction.backend_config_text = BackendConfigText(attribute);
      instruction.backend_config = DecodeBackendConfig(attribute);
    } else if (name == "index" && instruction.opcode == "get-tuple-element") {
      instruction.tuple_index = DecodeInt(attribute);
    } else if (name == "control-predecessors") {
      const Computation& computation = module_.computations[static_cast<size_t>(c)];
      for (const std::string& predecessor : DecodeNameList(attribute)) {
        const int index = computation.FindInstruction(predecessor);
        if (index < 0 || predecessor == instruction.name) {
          FailAt(attribute.ValueLocation(),
                 "The control predecessor %" + predecessor + " of %" + instruction.name +
                     (index < 0 ? " is not an instruction of computation %" + computation.name
                                : " is the instruction itself") +
                     ".");
        }
        instruction.control_predecessors.push_back(index);
      }
    } else if (CallsComputations(name)) {
      for (const std::string& callee : DecodeNameList(attribute)) {
        instruction.called_computations.push_back(
            {name, ResolveCallee(c, instruction, attribute, callee)});
      }
    }
  }

  int ResolveCallee(int c, const Instruction& instruction, const Attribute& attribute,
                    const std::string& callee) {
    const std::string subject =
        "The " + attribute.name + " of %" + instruction.name + " names computation %" + callee;
    const int index = module_.FindComputationIndex(callee);
    if (index < 0) {
      std::string known;
      for (size_t k = 0; k < module_.computations.size() && k < 8; ++k) {
        known += (k > 0 ? ", %" : "%") + module_.computations[k].name;
      }
      if (module_.computations.size() > 8) known += ", ...";
      FailAt(attribute.ValueLocation(),
             subject + ", which this module does not define (it defines " + known + ").");
    }
    if (index == c)
      FailAt(attribute.ValueLocation(),
             subject + ", its own computation; HLO computations cannot recurse.");
    if (index > c) {
      FailAt(attribute.ValueLocation(),
             subject + ", which is defined later (" +
                 Where(module_.computations[static_cast<size_t>(index)].location) +
                 "); a computation must come before the computations that call it, as XLA prints "
                 "them.");
    }
    return index;
  }

  void CheckGetTupleElement(const Computation& computation, Instruction& instruction) {
    const std::string subject = "The get-tuple-element %" + instruction.name;
    if (instruction.operands.size() != 1) {
      FailAt(instruction.location, subject + " has " + std::to_string(instruction.operands.size()) +
                                       " operands; it takes one tuple.");
    }
    if (!instruction.FindAttribute("index"))
      FailAt(instruction.location, subject + " has no index=N attribute.");
    const Instruction& tuple =
        computation.instructions[static_cast<size_t>(instruction.operands[0])];
    const Attribute& index = instruction.GetAttribute("index");
    if (!tuple.shape.IsTuple()) {
      FailAt(instruction.location, subject + " reads %" + tuple.name + ", whose shape " +
                                       tuple.shape.ToString(false) + " is not a tuple.");
    }
    const auto size = static_cast<int64_t>(tuple.shape.tuple_shapes.size());
    if (instruction.tuple_index < 0 || instruction.tuple_index >= size) {
      FailAt(index.ValueLocation(),
             subject + " takes element " + std::to_string(instruction.tuple_index) + " of %" +
                 tuple.name + ", whose shape " + tuple.shape.ToString(false) + " has " +
                 std::to_string(size) + " elements (indices 0 to " + std::to_string(size - 1) +
                 ").");
    }
    const Shape& element = tuple.shape.tuple_shapes[static_cast<size_t>(instruction.tuple_index)];
    if (!Compatible(element, instruction.shape)) {
      FailAt(instruction.location, subject + " has shape " + instruction.shape.ToString(false) +
                                       ", but element " + std::to_string(instruction.tuple_index) +
                                       " of %" + tuple.name + " is " + element.ToString(false) +
                                       ".");
    }
  }

  void CheckTuple(const Computation& computation, const Instruction& instruction,
                  const ParsedInstruction& parsed) {
    const std::string subject = "The tuple %" + instruction.name;
    if (!instruction.shape.IsTuple()) {
      FailAt(instruction.location, subject + " has shape " + instruction.shape.ToString(false) +
                                       ", which is not a tuple.");
    }
    const std::vector<Shape>& elements = instruction.shape.tuple_shapes;
    if (elements.size() != instruction.operands.size()) {
      FailAt(instruction.location, subject + " has " + std::to_string(instruction.operands.size()) +
                                       " operands, but its shape " +
                                       instruction.shape.ToString(false) + " has " +
                                       std::to_string(elements.size()) + " elements.");
    }
    for (size_t k = 0; k < elements.size(); ++k) {
      const Instruction& operand =
          computation.instructions[static_cast<size_t>(instruction.operands[k])];
      if (!Compatible(elements[k], operand.shape)) {
        FailAt(At(parsed.operands[k].offset), subject + " has element " + std::to_string(k) +
                                                  " of shape " + elements[k].ToString(false) +
                                                  ", but its operand %" + operand.name + " is " +
                                                  operand.shape.ToString(false) + ".");
      }
    }
  }

  void CollectParameters(Computation& computation) {
    std::vector<int> by_number;
    for (size_t i = 0; i < computation.instructions.size(); ++i) {
      const Instruction& instruction = computation.instructions[i];
      if (instruction.opcode != "parameter") continue;
      const auto number = static_cast<size_t>(instruction.parameter_number);
      if (number >= computation.instructions.size()) {
        FailAt(instruction.location, "The parameter %" + instruction.name + " is parameter(" +
                                         std::to_string(number) + "), but computation %" +
                                         computation.name + " has only " +
                                         std::to_string(computation.instructions.size()) +
                                         " instructions; number parameters from 0.");
      }
      if (number >= by_number.size()) by_number.resize(number + 1, -1);
      if (by_number[number] >= 0) {
        FailAt(instruction.location,
               "The parameter %" + instruction.name + " is parameter(" + std::to_string(number) +
                   "), like %" +
                   computation.instructions[static_cast<size_t>(by_number[number])].name +
                   "; each parameter number appears once.");
      }
      by_number[number] = static_cast<int>(i);
    }
    for (size_t n = 0; n < by_number.size(); ++n) {
      if (by_number[n] < 0) {
        FailAt(computation.location, "Computation %" + computation.name + " has parameter(" +
                                         std::to_string(by_number.size() - 1) +
                                         ") but no parameter(" + std::to_string(n) +
                                         "); number parameters 0, 1, 2, ... without gaps.");
      }
    }
    computation.parameters = std::move(by_number);
  }

  void CheckSignature(const Computation& computation) {
    if (!computation.signature_result) return;
    const std::string subject = "Computation %" + computation.name;
    if (computation.signature_parameters.size() != computation.parameters.size()) {
      FailAt(computation.location,
             subject + " declares " + std::to_string(computation.signature_parameters.size()) +
                 " parameters in its signature but has " +
                 std::to_string(computation.parameters.size()) + " parameter instructions.");
    }
    for (size_t n = 0; n < computation.parameters.size(); ++n) {
      const Instruction& parameter =
          computation.instructions[static_cast<size_t>(computation.parameters[n])];
      const Shape& declared = computation.signature_parameters[n].second;
      if (!Compatible(declared, parameter.shape)) {
        FailAt(parameter.location, "The parameter %" + parameter.name + " has shape " +
                                       parameter.shape.ToString(false) +
                                       ", but the signature of %" + computation.name +
                                       " declares parameter " + std::to_string(n) + " as " +
                                       declared.ToString(false) + ".");
      }
    }
    const Instruction& root = computation.root_instruction();
    if (!Compatible(*computation.signature_result, root.shape)) {
      FailAt(root.location, "The root %" + root.name + " has shape " + root.shape.ToString(false) +
                                ", but the signature of %" + computation.name +
                                " declares the result " +
                                computation.signature_result->ToString(false) + ".");
    }
  }

  void CheckEntryLayout() {
    const Attribute* attribute = module_.FindHeaderAttribute("entry_computation_layout");
    if (!attribute) return;
    const ProgramShape& layout = *module_.entry_computation_layout;
    const Computation& entry = module_.entry_computation();
    if (layout.parameters.size() != entry.parameters.size()) {
      FailAt(attribute->ValueLocation(),
             "The entry_computation_layout lists " + std::to_string(layout.parameters.size()) +
                 " parameters, but the entry computation %" + entry.name + " has " +
                 std::to_string(entry.parameters.size()) + ".");
    }
    for (size_t n = 0; n < layout.parameters.size(); ++n) {
      const Instruction& parameter = entry.instructions[static_cast<size_t>(entry.parameters[n])];
      if (!Compatible(layout.parameters[n], parameter.shape)) {
        FailAt(attribute->ValueLocation(),
               "The entry_computation_layout gives parameter " + std::to_string(n) + " the shape " +
                   layout.parameters[n].ToString(false) + ", but %" + parameter.name + " is " +
                   parameter.shape.ToString(false) + " (" + Where(parameter.location) + ").");
      }
    }
    if (!Compatible(layout.result, entry.root_instruction().shape)) {
      FailAt(attribute->ValueLocation(),
             "The entry_computation_layout gives the result the shape " +
                 layout.result.ToString(false) + ", but the root %" +
                 entry.root_instruction().name + " is " +
                 entry.root_instruction().shape.ToString(false) + ".");
    }
  }

  Module& module_;
  const std::vector<ParsedComputation>& parsed_;
};

}  // namespace

void ResolveModule(Module& module, const std::vector<ParsedComputation>& parsed) {
  Resolver(module, parsed).Run();
}

}  // namespace tpusim::hlo::detail
