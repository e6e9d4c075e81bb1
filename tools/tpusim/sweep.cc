#include "tools/tpusim/sweep.h"

#include <limits>

#include "tools/tpusim/cli.h"

namespace tpusim::cli {

std::vector<uint64_t> Sweep::Values() const {
  std::vector<uint64_t> values;
  for (uint64_t v = from; v <= to;) {
    values.push_back(v);
    if (v > std::numeric_limits<uint64_t>::max() / factor) break;
    v *= factor;
  }
  return values;
}

Sweep ParseSweep(const std::string& text) {
  Sweep sweep;
  const size_t equals = text.find('=');
  const size_t colon = text.find(':', equals == std::string::npos ? 0 : equals);
  const std::string usage =
      "; write PARAM=FROM:TO[:xF] with PARAM an int or bytes parameter of every entry, e.g. "
      "--sweep m=256:16384:x2.";
  if (equals == std::string::npos || colon == std::string::npos)
    throw UsageError("bench", "--sweep '" + text + "' is not a sweep" + usage);
  sweep.param = text.substr(0, equals);
  const std::string option = "--sweep " + sweep.param;
  std::string rest = text.substr(colon + 1);
  std::string to_text = rest, factor_text;
  if (const size_t second = rest.find(':'); second != std::string::npos) {
    to_text = rest.substr(0, second);
    factor_text = rest.substr(second + 1);
    if (factor_text.empty() || factor_text[0] != 'x')
      throw UsageError("bench", "--sweep '" + text + "': the factor is written xF" + usage);
    factor_text = factor_text.substr(1);
  }
  sweep.from = ParseBytes("bench", option + " FROM", text.substr(equals + 1, colon - equals - 1));
  sweep.to = ParseBytes("bench", option + " TO", to_text);
  if (!factor_text.empty()) sweep.factor = ParseBytes("bench", option + " factor", factor_text);
  return sweep;
}

void CheckSweptParam(const Sweep& sweep, const std::vector<const kernels::KernelInfo*>& entries) {
  for (const auto* entry : entries) {
    const kernels::Param* param = entry->FindParam(sweep.param);
    if (param &&
        (param->type() == kernels::ParamType::kInt || param->type() == kernels::ParamType::kBytes))
      continue;
    throw UsageError("bench",
                     "--sweep cannot sweep '" + sweep.param + "': " + entry->name +
                         (param ? "'s parameter '" + sweep.param + "' is " +
                                      kernels::ParamTypeName(param->type()) + ", not int or bytes"
                                : " takes no parameter '" + sweep.param + "'") +
                         "; write PARAM=FROM:TO[:xF] with an int or bytes parameter "
                         "of every entry (`tpusim bench ENTRY --help` lists them).");
  }
}

void CheckSweep(const Sweep& sweep, const std::string& from_name, const std::string& to_name,
                const std::string& factor_name) {
  if (sweep.from == 0) throw UsageError("bench", from_name + " must be at least 1.");
  if (sweep.from > sweep.to) {
    throw UsageError("bench", from_name + " is above " + to_name +
                                  "; the sweep runs from the smaller to the larger value.");
  }
  if (sweep.factor < 2) {
    throw UsageError("bench", factor_name +
                                  " must be an integer of at least 2 (each value is "
                                  "the previous one times the factor).");
  }
}

}  // namespace tpusim::cli
