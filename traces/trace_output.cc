#include "traces/trace_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include "traces/trace_sink.h"

namespace tpusim::traces::internal {
namespace {

constexpr size_t kFileBufferBytes = size_t{1} << 20;

std::string DescribeErrno(int error) {
  return error == 0 ? std::string("unknown reason") : std::string(std::strerror(error));
}

// The buffer must outlive the filebuf that uses it and exist before open(), so it lives
// in a base class constructed before std::ofstream and destroyed after it.
struct FileBuffer {
  std::vector<char> bytes = std::vector<char>(kFileBufferBytes);
};

class BufferedOutputFile : private FileBuffer, public std::ofstream {
 public:
  explicit BufferedOutputFile(const std::string& path) {
    rdbuf()->pubsetbuf(bytes.data(), std::streamsize(bytes.size()));
    open(path, std::ios::binary | std::ios::out | std::ios::trunc);
  }
};

}  // namespace

TraceOutput::TraceOutput(std::ostream& out, std::string destination)
    : out_(&out), destination_(std::move(destination)) {}

TraceOutput::TraceOutput(std::unique_ptr<std::ostream> out, std::string destination)
    : owned_(std::move(out)), out_(owned_.get()), destination_(std::move(destination)) {}

void TraceOutput::RecordFailure() {
  failed_ = true;
  first_errno_ = errno;
}

void TraceOutput::Flush() {
  errno = 0;
  out_->flush();
  if (!*out_ && !failed_) RecordFailure();
  if (failed_) {
    throw TraceError("Could not write the trace to " + destination_ + ": " +
                     DescribeErrno(first_errno_) +
                     "; check the disk has space and the file is still writable.");
  }
}

std::unique_ptr<std::ostream> OpenOutputFile(const std::string& path) {
  // Opening a FIFO for writing blocks until something reads it, forever if nothing does.
  // Opened without blocking first, it fails at once when no reader is there; when one is,
  // that descriptor keeps the FIFO's writer side open until the file below is.
  struct stat info {};
  int fifo = -1;
  if (::stat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode)) {
    fifo = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fifo < 0) {
      throw TraceError(
          "Cannot write the trace to \"" + path + "\": it is a FIFO " +
          (errno == ENXIO ? std::string("that nothing reads") : "(" + DescribeErrno(errno) + ")") +
          ", and writing to it would wait forever. Start its reader first (e.g. "
          "`cat " +
          path + " > run.pftrace &`), or give a regular file.");
    }
  }
  errno = 0;
  auto file = std::make_unique<BufferedOutputFile>(path);
  const int error = errno;
  if (fifo >= 0) ::close(fifo);
  if (!file->is_open()) {
    throw TraceError("Cannot open trace file \"" + path + "\" for writing: " +
                     DescribeErrno(error) + "; check the directory exists and is writable.");
  }
  return file;
}

}  // namespace tpusim::traces::internal
