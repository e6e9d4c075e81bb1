#include "hlo/primitive_type.h"

#include <array>

namespace tpusim::hlo {

namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

// In enum order.
constexpr std::array<TypeInfo, 30> kTypes = {{
    {PrimitiveType::kPred, "pred", 8},
    {PrimitiveType::kS1, "s1", 1},
    {PrimitiveType::kS2, "s2", 2},
    {PrimitiveType::kS4, "s4", 4},
    {PrimitiveType::kS8, "s8", 8},
    {PrimitiveType::kS16, "s16", 16},
    {PrimitiveType::kS32, "s32", 32},
    {PrimitiveType::kS64, "s64", 64},
    {PrimitiveType::kU1, "u1", 1},
    {PrimitiveType::kU2, "u2", 2},
    {PrimitiveType::kU4, "u4", 4},
    {PrimitiveType::kU8, "u8", 8},
    {PrimitiveType::kU16, "u16", 16},
    {PrimitiveType::kU32, "u32", 32},
    {PrimitiveType::kU64, "u64", 64},
    {PrimitiveType::kF16, "f16", 16},
    {PrimitiveType::kBF16, "bf16", 16},
    {PrimitiveType::kF32, "f32", 32},
    {PrimitiveType::kF64, "f64", 64},
    {PrimitiveType::kC64, "c64", 64},
    {PrimitiveType::kC128, "c128", 128},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
}};

const TypeInfo& Info(PrimitiveType type) {
  return kTypes[static_cast<size_t>(type)];
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) {
  return Info(type).name;
}

std::optional<PrimitiveType> PrimitiveTypeFromName(std::string_view name) {
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

std::string_view PrimitiveTypeNames() {
  return "pred, s1, s2, s4, s8, s16, s32, s64, u1, u2, u4, u8, u16, u32, u64, f16, bf16, f32, "
         "f64, c64, c128, f4e2m1fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e4m3b11fnuz, f8e5m2, "
         "f8e5m2fnuz, f8e8m0fnu";
}

int BitWidth(PrimitiveType type) {
  return Info(type).bits;
}

int ByteWidth(PrimitiveType type) {
  return Info(type).bits < 8 ? 1 : Info(type).bits / 8;
}

bool IsFloatingPoint(PrimitiveType type) {
  return type >= PrimitiveType::kF16 && !IsComplex(type);
}

bool IsComplex(PrimitiveType type) {
  return type == PrimitiveType::kC64 || type == PrimitiveType::kC128;
}

bool IsSignedInteger(PrimitiveType type) {
  return type >= PrimitiveType::kS1 && type <= PrimitiveType::kS64;
}

bool IsUnsignedInteger(PrimitiveType type) {
  return type >= PrimitiveType::kU1 && type <= PrimitiveType::kU64;
}

}  // namespace tpusim::hlo
