// A plugin kernel whose bound is NaN: a run must fail naming the kernel's bound, not print
// "nan%" and exit 0.

#include <cmath>

#include "kernels/registry.h"

namespace {

tpusim::kernels::KernelInfo NanBound() {
  tpusim::kernels::KernelInfo info = *tpusim::kernels::Registry::Get().Find("all_gather_ring");
  info.name = "nan_bound_ring";
  info.summary = "all_gather_ring with a bound of NaN seconds";
  info.family = "";
  info.bound = [](const tpusim::dsl::Mesh&, const tpusim::kernels::Params&) {
    tpusim::kernels::Bound bound;
    bound.seconds = std::nan("");
    bound.formula = "0 / 0";
    return bound;
  };
  return info;
}

const tpusim::kernels::Registration registration(NanBound());

}  // namespace
