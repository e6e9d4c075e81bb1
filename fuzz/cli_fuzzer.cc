// libFuzzer target: the tpusim command line, one argument per input line, through every
// command's parser and checks (ParseOnly: nothing runs and no file is written). A bad
// command line must end in one of tpusim's errors; a foreign exception (std::bad_alloc,
// std::out_of_range, a filesystem error) would reach the user raw, so it is a bug here.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.h"
#include "tools/tpusim/cli.h"
#include "topologies/topology_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxArguments = 64;
  std::vector<std::string> arguments{"tpusim"};
  std::string current;
  for (size_t i = 0; i < size && arguments.size() < kMaxArguments; ++i) {
    if (data[i] == '\n') {
      arguments.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  if (!current.empty() && arguments.size() < kMaxArguments) arguments.push_back(current);
  std::vector<char*> argv;
  for (auto& argument : arguments)
    argv.push_back(argument.data());
  argv.push_back(nullptr);

  tpusim::cli::SetParseOnly(true);
  try {
    (void)tpusim::cli::Dispatch(static_cast<int>(arguments.size()), argv.data());
  } catch (const tpusim::cli::UsageError&) {
  } catch (const tpusim::topologies::TopologyError&) {
  } catch (const tpusim::Error&) {
  }
  return 0;
}
