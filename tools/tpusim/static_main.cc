// tpusim with libtpusim and protobuf linked in (tools/tpusim/CMakeLists.txt says why): the
// CLI itself for every run, except one that loads a plugin, which it hands to the
// shared-linked CLI installed beside it.
//
// Why hand over: a plugin links libtpusim.so and registers its kernels, models and call
// targets in that library's one Registry (cmake/TpusimLibrary.cmake). Loaded here, it would
// bring the shared library in as well: its registrations would land in the library's copy of
// the registry, which this executable's commands never read, beside a second protobuf. The
// shared-linked CLI has one copy of everything, the plugin's included. So before anything
// else, a command line with --load (wherever Main would find it) re-executes that CLI with
// the same arguments; it runs the whole command, and its exit status is tpusim's. It never
// hands over again, and the child processes of its runs (sweep points) are its own.

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "tools/tpusim/cli.h"

namespace {

// The shared-linked CLI: TPUSIM_PLUGIN_HOST_FROM_CLI (set by the build, the same relative
// path installed and in the build tree) from the directory of this executable.
std::string PluginHostPath() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  std::string path(self, static_cast<std::size_t>(n));
  path.erase(path.rfind('/') + 1);
  path += TPUSIM_PLUGIN_HOST_FROM_CLI;
  return path;
}

int RunPluginHost(char** argv) {
  const std::string host = PluginHostPath();
  if (!host.empty()) execv(host.c_str(), argv);
  // Only reached when the helper could not be started.
  const int error = errno;
  std::cerr << "tpusim: --load runs plugins in tpusim's shared-library build, which should "
               "be at "
            << (host.empty() ? std::string(TPUSIM_PLUGIN_HOST_FROM_CLI) + " beside tpusim" : host)
            << ", and it could not be started (" << std::strerror(error)
            << "); install tpusim with `cmake --install`, which installs both.\n";
  return 1;
}

}  // namespace

// SystemC's library provides main() and calls sc_main; each run builds its own context.
extern "C" int sc_main(int argc, char** argv) {
  if (tpusim::cli::AsksToLoad(argc, argv)) return RunPluginHost(argv);
  return tpusim::cli::Main(argc, argv);
}
