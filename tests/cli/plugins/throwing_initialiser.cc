// A plugin whose static initialiser throws: loading it must fail with a message that names
// the library and what was thrown.

#include <stdexcept>

namespace {

struct Configured {
  Configured() { throw std::runtime_error("the plugin's settings file is missing"); }
};

const Configured configured;

}  // namespace
