#include "base/registry.h"

namespace tpusim::base {

namespace {
std::vector<std::string>& Clashes() {
  static std::vector<std::string> clashes;  // filled from static initialisers: a function static
  return clashes;
}
}  // namespace

const std::vector<std::string>& RegistrationClashes() {
  return Clashes();
}

void RecordRegistrationClash(std::string clash) {
  Clashes().push_back(std::move(clash));
}

std::string ClashSentence(const std::string& kind, const std::string& name) {
  std::string clash = kind;
  clash += " '";
  clash += name;
  clash += "' is registered twice; the first registration is kept: rename the later one";
  return clash;
}

std::string RegistrationClashesSince(size_t first, const std::string& context) {
  const auto& clashes = Clashes();
  if (first >= clashes.size()) return "";
  std::string message = context;
  for (size_t i = first; i < clashes.size(); ++i) {
    if (i > first) message += "; ";
    message += clashes[i];
  }
  message += ".";
  return message;
}

}  // namespace tpusim::base
