// A plugin that registers a name the library already has: loading it must fail clearly.

#include "kernels/registry.h"

namespace {

tpusim::kernels::KernelInfo CopyOfRing() {
  // libtpusim is loaded, and its kernels registered, before this plugin's initialisers run.
  tpusim::kernels::KernelInfo info = *tpusim::kernels::Registry::Get().Find("all_gather_ring");
  info.summary = "a second all_gather_ring";
  return info;
}

const tpusim::kernels::Registration registration(CopyOfRing());

}  // namespace
