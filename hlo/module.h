#pragma once

// An HLO module as parsed from text: computations of instructions, every attribute kept
// (attribute.h) and the common ones decoded. Operands, control predecessors and called
// computations are resolved to indices, so an interpreter walks the module without names:
//
//   const Computation& main = module.entry_computation();
//   for (const Instruction& instruction : main.instructions)
//     for (int operand : instruction.operands) ... main.instructions[operand] ...
//
// Instructions are in text order, which is a valid execution order: each operand comes
// before its user (the parser checks it).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hlo/attribute.h"
#include "hlo/attribute_decoders.h"
#include "hlo/shape.h"
#include "hlo/sharding.h"
#include "hlo/source.h"

namespace tpusim::hlo {

// std::string keys looked up by std::string_view without a copy.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
};
using NameIndex = std::unordered_map<std::string, int, NameHash, std::equal_to<>>;

// A computation an instruction calls: to_apply=%add is {"to_apply", index of %add}.
// branch_computations={%a, %b} gives one entry per computation, in order.
struct CalledComputation {
  std::string attribute;
  int computation = -1;  // index into Module::computations
};

struct Instruction {
  std::string name;    // without '%'
  std::string opcode;  // as printed: "add", "all-gather-start", "get-tuple-element"
  Shape shape;
  std::vector<int> operands;               // indices into the computation's instructions
  std::vector<std::string> operand_names;  // as written, without '%'
  std::vector<Attribute> attributes;       // every attribute after the operands, in order

  // Decoded from the attributes of the same names, when present.
  std::optional<Metadata> metadata;
  std::optional<HloSharding> sharding;
  std::string backend_config_text;                     // empty when absent
  std::optional<nlohmann::json> backend_config;        // when backend_config is JSON
  std::vector<int> control_predecessors;               // control-predecessors, as indices
  std::vector<CalledComputation> called_computations;  // to_apply, calls, condition, body,
                                                       // branch_computations, ... in order
  int64_t tuple_index = -1;                            // get-tuple-element's index
  int64_t parameter_number = -1;                       // parameter(N)

  // constant(...): the literal as written between the parentheses, whether it was elided
  // ({...}), and its values in row-major order as doubles (complex: real, imaginary pairs)
  // when it has at most kMaxDecodedLiteralElements elements and is not a tuple.
  std::string literal_text;
  bool literal_elided = false;
  std::vector<double> literal_values;

  bool is_root = false;
  SourceLocation location;  // of the name

  const Attribute* FindAttribute(std::string_view attribute_name) const;
  // Throws HloError at the instruction when it has no such attribute.
  const Attribute& GetAttribute(std::string_view attribute_name) const;
  // The computation called through `attribute` (the first, for a list), or -1.
  int Called(std::string_view attribute) const;
};

inline constexpr int64_t kMaxDecodedLiteralElements = 65536;

struct Computation {
  std::string name;
  bool is_entry = false;
  std::vector<Instruction> instructions;
  int root = -1;                // index of the ROOT instruction (the last one if none is marked)
  std::vector<int> parameters;  // parameters[n]: index of parameter(n)
  // The signature `(p: f32[2], q: s32[]) -> f32[2]`, when printed.
  std::vector<std::pair<std::string, Shape>> signature_parameters;
  std::optional<Shape> signature_result;
  std::vector<Attribute> attributes;  // after the signature: execution_thread="host", ...
  SourceLocation location;            // of the name
  NameIndex instruction_index;        // name -> index into instructions

  const Instruction& root_instruction() const { return instructions.at(static_cast<size_t>(root)); }
  // Index of the instruction named `instruction_name` (with or without '%'), or -1.
  int FindInstruction(std::string_view instruction_name) const;
};

// A table newer XLA prints after the header (FileNames, FunctionNames, FileLocations,
// StackFrames): its rows `ID VALUE`, the value as written.
struct DebugTable {
  std::string name;
  std::vector<std::pair<int64_t, std::string>> rows;
};

struct Module {
  std::string name;
  std::string file_name;
  std::vector<Attribute> header_attributes;  // every header attribute, in order

  // Decoded from the header, with XLA's defaults when absent.
  bool is_scheduled = false;
  int64_t num_partitions = 1;
  int64_t replica_count = 1;
  std::optional<ProgramShape> entry_computation_layout;
  std::vector<InputOutputAlias> input_output_aliases;
  std::vector<DebugTable> debug_tables;

  // In text order: a computation comes after every computation it calls.
  std::vector<Computation> computations;
  int entry = -1;  // the ENTRY computation, or the last one when none is marked (as XLA)
  NameIndex computation_index;

  const Computation& entry_computation() const {
    return computations.at(static_cast<size_t>(entry));
  }
  // The computation named `computation_name` (with or without '%'), or nullptr.
  const Computation* FindComputation(std::string_view computation_name) const;
  int FindComputationIndex(std::string_view computation_name) const;
  const Attribute* FindHeaderAttribute(std::string_view attribute_name) const;
};

}  // namespace tpusim::hlo
