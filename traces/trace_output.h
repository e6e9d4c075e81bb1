#pragma once

// Where a trace writer's bytes go. Writers stream every event straight to it, so memory
// stays flat however long the run; a failed write (disk full) is remembered by the
// stream and reported once, by Finish, as a TraceError naming the destination.

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace tpusim::traces::internal {

class TraceOutput {
 public:
  // Writes to `out`, which the caller keeps alive.
  explicit TraceOutput(std::ostream& out, std::string destination = "the trace stream");
  // Writes to `out` and closes it when destroyed.
  TraceOutput(std::unique_ptr<std::ostream> out, std::string destination);

  void Write(std::string_view bytes) {
    out_->write(bytes.data(), std::streamsize(bytes.size()));
    if (!*out_ && !failed_) RecordFailure();
  }
  // Flushes buffered bytes; throws TraceError when any write since the start failed.
  void Flush();

  const std::string& destination() const { return destination_; }

 private:
  // Keeps errno from the first failed write; later ones fail only because the stream did.
  void RecordFailure();

  std::unique_ptr<std::ostream> owned_;
  std::ostream* out_;
  std::string destination_;
  bool failed_ = false;
  int first_errno_ = 0;
};

// Opens `path` for writing through a large buffer, so a trace of millions of small
// events costs few system calls. Throws TraceError naming the path and the reason.
std::unique_ptr<std::ostream> OpenOutputFile(const std::string& path);

}  // namespace tpusim::traces::internal
