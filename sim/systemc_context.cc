#include "sim/systemc_context.h"

#include <cstdlib>
#include <systemc>

namespace tpusim::sim {

namespace {
// SystemC prints its banner when the first context starts, which libsystemc's main()
// does before sc_main runs; only a static initializer is early enough to silence it.
const bool kBannerSilenced = [] {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 1);
  return true;
}();
}  // namespace

void StartFreshSystemCContext() {
  (void)kBannerSilenced;
  // The previous context is leaked on purpose: its suspended threads (after a deadlock)
  // own stacks whose C++ objects cannot be unwound safely.
  sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
  sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
  sc_core::sc_set_time_resolution(1, sc_core::SC_PS);
  // A stopped simulation is how tpusim ends a failed run; it is not news.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
}

}  // namespace tpusim::sim
