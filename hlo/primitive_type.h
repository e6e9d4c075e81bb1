#pragma once

// XLA's element types, spelled as HLO text prints them ("f32", "bf16", "f8e4m3fn"...), with
// their sizes. Sub-byte types (s4, u4, f4e2m1fn...) occupy one byte per element unless a
// layout packs them (E(4) in the layout: Layout::element_size_in_bits), as in XLA.

#include <cstdint>
#include <optional>
#include <string_view>

namespace tpusim::hlo {

enum class PrimitiveType {
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kC64,
  kC128,
  kF4E2M1FN,
  kF8E3M4,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3FNUZ,
  kF8E4M3B11FNUZ,
  kF8E5M2,
  kF8E5M2FNUZ,
  kF8E8M0FNU,
};

// "f32", "bf16", "pred"...
std::string_view PrimitiveTypeName(PrimitiveType type);
// The type HLO text spells `name`, or nothing.
std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name);
// Every name, comma-separated, for error messages.
std::string_view PrimitiveTypeNames();

// Bits of one element's value: 1 for s1, 4 for s4, 8 for pred, 64 for c64.
int BitWidth(PrimitiveType type);
// Bytes one element occupies unpacked: 1 for the sub-byte types and pred, 8 for c64.
int ByteWidth(PrimitiveType type);

bool IsFloatingPoint(PrimitiveType type);  // f16, bf16, f32, f64 and the f8/f4 types
bool IsComplex(PrimitiveType type);
bool IsSignedInteger(PrimitiveType type);
bool IsUnsignedInteger(PrimitiveType type);

}  // namespace tpusim::hlo
