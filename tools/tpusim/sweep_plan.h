#pragma once

// A sweep's points: the cartesian product of its dimensions (each --param, the topologies,
// the entries), every value checked before anything runs, and each point as the command
// line of the `tpusim run` that runs it.

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tpusim/common_options.h"
#include "tools/tpusim/param_flags.h"
#include "tools/tpusim/sweep_axis.h"

namespace tpusim::cli {

class SweepPlan {
 public:
  // A swept dimension and how a point sets it on the command line.
  struct Dimension {
    SweepAxis axis;
    // "--bytes", "--time-limit", "--timing-only"; "" for topology and entry, which are
    // positional or their own option.
    std::string flag;
    bool presence = false;  // a flag without a value: set for "true", left out for "false"
  };

  // The sweep `command` (sweep, bench) the command line describes: `entries` (families
  // expanded), `topologies`, the --param texts in order, the entries' parameters and run
  // options given as flags (`vm`, `params`, `common`). Throws UsageError naming the
  // parameter and the fix for an unknown parameter, a value of the wrong type or out of
  // range, a parameter both set and swept, or an empty range.
  static SweepPlan Make(const std::string& command, const std::vector<std::string>& entries,
                        const std::vector<std::string>& topologies,
                        const std::vector<std::string>& param_texts,
                        const boost::program_options::variables_map& vm, const ParamFlags& params,
                        const CommonOptions& common);

  // Each --param dimension in order, then the topologies, then the entries: the first
  // varies fastest, so each run of rows shows the first parameter's values.
  const std::vector<Dimension>& dimensions() const { return dimensions_; }
  // The dimensions with more than one value, in order: what tables and plots show.
  std::vector<size_t> Swept() const;
  size_t points() const;
  // Point `index`'s value of each dimension.
  std::vector<std::string> ValuesAt(size_t index) const;
  // The arguments of the `tpusim run ... --json` that runs point `index`.
  std::vector<std::string> Command(size_t index) const;

  // What identifies the sweep (not the shard): two outputs merge when these agree.
  nlohmann::ordered_json ToJson() const;
  // Throws std::runtime_error for JSON that is not a sweep's.
  static SweepPlan FromJson(const nlohmann::ordered_json& json);

 private:
  std::vector<Dimension> dimensions_;
  std::vector<std::string> fixed_flags_;  // parameters and run options set, as arguments
};

}  // namespace tpusim::cli
