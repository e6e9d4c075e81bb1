// A plugin whose registrations are unsound: an entry without a make function, and names the
// command line cannot spell. Loading it must fail naming each one, not later with
// "bad_function_call" or with a kernel called "--help".

#include "kernels/registry.h"

namespace {

using tpusim::kernels::KernelInfo;
using tpusim::kernels::Registration;

KernelInfo Named(const std::string& name, bool with_make = true) {
  KernelInfo info = *tpusim::kernels::Registry::Get().Find("all_gather_ring");
  info.name = name;
  info.family = "";
  if (!with_make) info.make = nullptr;
  return info;
}

const Registration no_make(Named("ring_without_make", false));
const Registration empty_name(Named(""));
const Registration option_name(Named("--help"));
const Registration spaced_name(Named("has space"));

}  // namespace
