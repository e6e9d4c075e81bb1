#pragma once

// What the hlo/ tests share: the sample modules' paths, parsing a text inline, and
// catching the HloError a bad text throws.

#include <gtest/gtest.h>

#include <string>

#include "hlo/attribute.h"
#include "hlo/parser.h"

namespace tpusim::hlo::testing {

inline std::string ModulePath(const std::string& name) {
  return std::string(TPUSIM_SOURCE_DIR) + "/tests/hlo/modules/" + name;
}

inline Module Parse(const std::string& text) {
  return ParseModule(text, "test.hlo");
}

// The HloError that parsing `text` throws; fails the test when it parses.
inline HloError ParseFailure(const std::string& text) {
  try {
    (void)Parse(text);
  } catch (const HloError& error) {
    return error;
  }
  ADD_FAILURE() << "expected an HloError for:\n" << text;
  return HloError({}, "(parsed)");
}

// The HloError that `decode` throws; fails the test when it does not.
template <typename Decode>
HloError DecodeFailure(Decode decode) {
  try {
    decode();
  } catch (const HloError& error) {
    return error;
  }
  ADD_FAILURE() << "expected an HloError";
  return HloError({}, "(decoded)");
}

// A module around one entry computation's body lines.
inline std::string Entry(const std::string& body) {
  return "HloModule m\n\nENTRY %main {\n" + body + "\n}\n";
}

}  // namespace tpusim::hlo::testing
