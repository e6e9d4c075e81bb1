// libFuzzer target: a text through the HLO parser, then every typed decoder on every
// attribute of what parsed, and the text itself as one attribute value through the
// decoders. A text must parse or be refused with an HloError (or, for a shape too large to
// size, tpusim's own Error); anything else (a sanitizer report, a foreign exception, a
// hang, a broken invariant of the parsed module) is a bug.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/errors.h"
#include "hlo/attribute_decoders.h"
#include "hlo/parser.h"
#include "hlo/replica_groups.h"
#include "hlo/sharding.h"

namespace {

using namespace tpusim::hlo;

template <typename Decode>
void Try(Decode decode) {
  try {
    decode();
  } catch (const tpusim::Error&) {
  }
}

void DecodeAll(const Attribute& attribute, int64_t devices) {
  Try([&] { (void)DecodeReplicaGroups(attribute, devices); });
  Try([&] { (void)DecodeSharding(attribute); });
  Try([&] { (void)DecodeSourceTargetPairs(attribute); });
  Try([&] { (void)DecodeInt(attribute); });
  Try([&] { (void)DecodeBool(attribute); });
  Try([&] { (void)DecodeString(attribute); });
  Try([&] { (void)DecodeNameList(attribute); });
  Try([&] { (void)DecodeIntList(attribute); });
  Try([&] { (void)DecodeIntListList(attribute); });
  Try([&] { (void)DecodeBoolList(attribute); });
  Try([&] { (void)DecodeSlice(attribute); });
  Try([&] { (void)DecodePadding(attribute); });
  Try([&] { (void)DecodeWindow(attribute); });
  Try([&] { (void)DecodeDimLabels(attribute); });
  Try([&] { (void)DecodePrecisions(attribute); });
  Try([&] { (void)DecodeComparisonDirection(attribute); });
  Try([&] { (void)DecodeMetadata(attribute); });
  Try([&] { (void)DecodeFrontendAttributes(attribute); });
  Try([&] { (void)DecodeBackendConfig(attribute); });
  Try([&] { (void)DecodeOutputToOperandAliasing(attribute); });
  Try([&] { (void)DecodeInputOutputAlias(attribute); });
  Try([&] { (void)DecodeComputationLayout(attribute); });
}

// What the parser promises an interpreter: indices in range, operands and callees first.
void CheckInvariants(const Module& module) {
  if (module.entry < 0 || static_cast<size_t>(module.entry) >= module.computations.size())
    __builtin_trap();
  for (size_t c = 0; c < module.computations.size(); ++c) {
    const Computation& computation = module.computations[c];
    if (computation.root < 0 ||
        static_cast<size_t>(computation.root) >= computation.instructions.size()) {
      __builtin_trap();
    }
    for (size_t i = 0; i < computation.instructions.size(); ++i) {
      const Instruction& instruction = computation.instructions[i];
      for (const int operand : instruction.operands) {
        if (operand < 0 || static_cast<size_t>(operand) >= i) __builtin_trap();
      }
      for (const CalledComputation& called : instruction.called_computations) {
        if (called.computation < 0 || static_cast<size_t>(called.computation) >= c)
          __builtin_trap();
      }
      Try([&] { (void)instruction.shape.ByteSize(); });
      (void)instruction.shape.ToString();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const Module module = ParseModule(text, "fuzz input");
    CheckInvariants(module);
    const int64_t devices = std::clamp<int64_t>(module.num_partitions, 1, 4096);
    for (const Attribute& attribute : module.header_attributes)
      DecodeAll(attribute, devices);
    for (const Computation& computation : module.computations) {
      for (const Instruction& instruction : computation.instructions) {
        for (const Attribute& attribute : instruction.attributes)
          DecodeAll(attribute, devices);
      }
    }
  } catch (const tpusim::Error&) {
  }
  Try([&] { DecodeAll(ParseAttribute("fuzz", text), 8); });
  return 0;
}
