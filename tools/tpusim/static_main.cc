// tpusim with libtpusim and protobuf linked in (tools/tpusim/CMakeLists.txt says why): the
// CLI itself for every run, except one that loads a plugin, which it hands to the
// shared-linked CLI installed beside it.
//
// Why hand over: a plugin links libtpusim.so and registers its kernels, models and call
// targets in that library's one Registry (cmake/TpusimLibrary.cmake). Loaded here, it would
// bring the shared library in as well: its registrations would land in the library's copy of
// the registry, which this executable's commands never read, beside a second protobuf. The
// shared-linked CLI has one copy of everything, the plugin's included. So a command line with
// --load (wherever Main would find it) re-executes that CLI with the same arguments; it runs
// the whole command, and its exit status is tpusim's. It never hands over again, and the
// child processes of its runs (sweep points) are its own.
//
// The hand-over happens from .preinit_array, before any initialiser of this executable or of
// its libraries has run (SystemC's, protobuf's and the kernels' registrations: half the start
// of a run that is about to be replaced), so it allocates nothing and writes no message. If
// the helper cannot be started there, sc_main tries again, with every initialiser done, and
// explains the failure.

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>

#include "tools/tpusim/cli.h"

namespace {

// The shared-linked CLI: TPUSIM_PLUGIN_HOST_FROM_CLI (set by the build, the same relative
// path installed and in the build tree) from the directory of this executable. False when
// the path does not fit.
bool PluginHostPath(char (&path)[4096]) {
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path);
  if (n <= 0 || n >= static_cast<ssize_t>(sizeof path)) return false;
  path[n] = '\0';
  char* slash = std::strrchr(path, '/');
  constexpr std::size_t kTail = sizeof TPUSIM_PLUGIN_HOST_FROM_CLI;  // with its '\0'
  if (slash == nullptr || static_cast<std::size_t>(slash + 1 - path) + kTail > sizeof path)
    return false;
  std::memcpy(slash + 1, TPUSIM_PLUGIN_HOST_FROM_CLI, kTail);
  return true;
}

// Returns only when the helper could not be started, with errno saying why.
void ExecPluginHost(char** argv, char (&host)[4096]) {
  if (PluginHostPath(host)) {
    execv(host, argv);
  } else {
    host[0] = '\0';
    errno = ENAMETOOLONG;
  }
}

void HandOverEarly(int argc, char** argv, char** /*envp*/) {
  if (!tpusim::cli::AsksToLoad(argc, argv)) return;
  char host[4096];
  ExecPluginHost(argv, host);
}

[[gnu::used,
  gnu::section(".preinit_array")]] void (*const hand_over_early)(int, char**,
                                                                 char**) = &HandOverEarly;

int RunPluginHost(char** argv) {
  char host[4096];
  ExecPluginHost(argv, host);
  const int error = errno;
  std::cerr << "tpusim: --load runs plugins in tpusim's shared-library build, which should "
               "be at "
            << (host[0] != '\0' ? std::string(host)
                                : std::string(TPUSIM_PLUGIN_HOST_FROM_CLI) + " beside tpusim")
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
