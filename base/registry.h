#pragma once

// One registry of named entries, for every kind of thing the tree registers by name: kernels
// and programs (kernels/registry.h), memory and compute models (sim/model_registry.h), program
// ops and pallas_call targets (dsl/program/op_registry.h). Registrations run in static
// initialisers, in the library, in a user's binary or inside dlopen when a plugin loads, where
// an exception cannot be caught (it would terminate the process). So Add never throws: a name
// that is taken keeps its first entry and the clash is recorded, both in the registry, which
// reports it as an Error when it is first used (Find, Names, All; a registry checked once up
// front reads entries() and clashes()), and process-wide (RegistrationClashes()), so that a
// plugin loader reports the clashes its library made in any registry (kernels/registry.h).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.h"

namespace tpusim::base {

// Every clash any registry of the process recorded, in order, each a sentence such as
// "memory model 'row_buffer' is registered twice; the first registration is kept: rename the
// later one".
const std::vector<std::string>& RegistrationClashes();
void RecordRegistrationClash(std::string clash);
// "kernel 'a' is registered twice; the first registration is kept: rename the later one".
std::string ClashSentence(const std::string& kind, const std::string& name);

// The clashes in RegistrationClashes() from `first` on, as one Error(kInvalidArgument)
// message prefixed by `context`; "" when there are none.
std::string RegistrationClashesSince(size_t first, const std::string& context);

template <typename Entry>
class Registry {
 public:
  // `kind` names the entries in messages ("memory model", "pallas_call target").
  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  const std::string& kind() const { return kind_; }

  // Adds `entry` as `name`; false when the name is taken, which keeps its first entry and
  // records the clash, never throws (see above). `kind` names this entry in the clash when
  // the registry holds several kinds (kernels and programs).
  bool Add(const std::string& name, Entry entry) { return Add(name, std::move(entry), kind_); }
  bool Add(const std::string& name, Entry entry, const std::string& kind) {
    if (entries_.emplace(name, std::move(entry)).second) return true;
    clashes_.emplace_back(kind, name);
    RecordRegistrationClash(ClashSentence(kind, name));
    return false;
  }

  // Throws Error(kInvalidArgument) naming every clash recorded so far.
  void Check() const {
    if (clashes_.empty()) return;
    std::string message;
    for (const auto& [kind, name] : clashes_) {
      if (!message.empty()) message += "; ";
      message += ClashSentence(kind, name);
    }
    message += ".";
    throw Error(ErrorKind::kInvalidArgument, message);
  }
  // Each name added twice, with the kind it was added as, in order.
  const std::vector<std::pair<std::string, std::string>>& clashes() const { return clashes_; }

  // nullptr when unknown. Each use Check()s first: a clash is an error where it matters.
  const Entry* Find(const std::string& name) const {
    Check();
    const auto it = entries_.find(name);
    return it == entries_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> Names() const {  // sorted
    Check();
    std::vector<std::string> names;
    for (const auto& entry : entries_)
      names.push_back(entry.first);
    return names;
  }
  std::vector<const Entry*> All() const {  // by name
    Check();
    std::vector<const Entry*> all;
    for (const auto& entry : entries_)
      all.push_back(&entry.second);
    return all;
  }
  // Every entry by name, without Check(): for a registry that reports its clashes once, up
  // front (kernels/registry.h).
  const std::map<std::string, Entry>& entries() const { return entries_; }
  // "'a', 'b'": the names, for messages.
  std::string QuotedNames() const {
    std::string names;
    for (const auto& entry : entries_) {
      names += names.empty() ? "'" : ", '";
      names += entry.first;
      names += "'";
    }
    return names;
  }

 private:
  std::string kind_;
  std::map<std::string, Entry> entries_;
  std::vector<std::pair<std::string, std::string>> clashes_;  // (kind, name)
};

}  // namespace tpusim::base
