#include "sim/run_context.h"

#include <systemc>

namespace tpusim::sim {

RunContext::RunContext(EngineOptions options)
    : options_(std::move(options)),
      trace_(options_.trace ? options_.trace : &null_trace_),
      watch_(options_) {}

void RunContext::Fail(ErrorKind kind, const std::string& message) {
  if (failed_) return;  // the first failure is the cause; later ones are consequences
  failed_ = true;
  error_kind_ = kind;
  error_ = message;
  sc_core::sc_pause();  // not sc_stop: ending the suspended threads needs one more delta
}

}  // namespace tpusim::sim
