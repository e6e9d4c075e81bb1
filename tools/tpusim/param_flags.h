#pragma once

// The flags of the registry entries' parameters, generated from their declarations
// (kernels/params.h): parameter `chunk_bytes` is the flag --chunk-bytes. A command parses
// the flags of every registered entry, so a flag that no entry declares is an unknown
// option, then hands the entries it runs the values they take, as text, and refuses a flag
// one of them does not take.

#include <boost/program_options.hpp>
#include <set>
#include <string>
#include <vector>

#include "kernels/params.h"
#include "kernels/registry.h"

namespace tpusim::cli {

std::string FlagOf(const std::string& param);  // "chunk_bytes" -> "--chunk-bytes"
// " (flag --bytes)" or " (flags --m, --k)": what the CLI appends to a ParamError.
std::string FlagsNote(const std::vector<std::string>& params);

class ParamFlags {
 public:
  // `excluded`: parameters the command sets itself (bench matmul's block sizes).
  explicit ParamFlags(std::set<std::string> excluded = {}) : excluded_(std::move(excluded)) {}

  // Adds to `hidden` one option per parameter any registered entry declares. Throws Error
  // when one would take the name of an option in `visible`.
  void AddTo(boost::program_options::options_description& hidden,
             const boost::program_options::options_description& visible) const;
  // The help section for `entries`: each parameter they declare, with its type, unit,
  // default, range or values, and description; for no entries, how to see them.
  std::string Help(const std::string& command,
                   const std::vector<const kernels::KernelInfo*>& entries) const;
  // The values given on the command line, by parameter name. Throws UsageError naming
  // every flag that an entry in `entries` does not take.
  kernels::ParamValues Given(const std::string& command,
                             const boost::program_options::variables_map& vm,
                             const std::vector<const kernels::KernelInfo*>& entries) const;

 private:
  std::set<std::string> excluded_;
};

}  // namespace tpusim::cli
