#include "tools/tpusim/point_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>

#include "tools/tpusim/cli.h"

namespace tpusim::cli {

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This very binary: children run the same build, whatever PATH says.
std::string SelfPath() {
  char path[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw std::runtime_error("cannot find the tpusim binary (/proc/self/exe)");
  return std::string(path, static_cast<size_t>(n));
}

struct Child {
  size_t index = 0;
  pid_t pid = -1;
  int fds[2] = {-1, -1};  // the child's stdout and stderr, read ends; -1 once at EOF
  std::string text[2];
  Clock::time_point started;
};

Child Spawn(const std::string& self, const std::vector<std::string>& args, size_t index) {
  std::vector<std::string> words = {"tpusim"};
  for (const std::string& library : LoadedLibraries()) {
    words.push_back("--load");
    words.push_back(library);
  }
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& word : words)
    argv.push_back(word.data());
  argv.push_back(nullptr);

  int out[2], err[2];
  // Close-on-exec: a child holds no other child's pipe open, so each one's EOF comes when
  // it exits.
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  Child child;
  child.index = index;
  child.started = Clock::now();
  child.pid = fork();
  if (child.pid < 0)
    throw std::runtime_error(std::string("cannot start a process: ") + std::strerror(errno));
  if (child.pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    execv(self.c_str(), argv.data());
    const char message[] = "tpusim run: cannot start the tpusim binary again (exec failed)\n";
    [[maybe_unused]] const ssize_t written = write(STDERR_FILENO, message, sizeof message - 1);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  child.fds[0] = out[0];
  child.fds[1] = err[0];
  return child;
}

// Reads what is there; closes the descriptor at EOF.
void Drain(Child& child, int which) {
  char buffer[65536];
  const ssize_t n = read(child.fds[which], buffer, sizeof buffer);
  if (n > 0) {
    child.text[which].append(buffer, static_cast<size_t>(n));
  } else if (n == 0 || errno != EINTR) {
    close(child.fds[which]);
    child.fds[which] = -1;
  }
}

std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start + 1));
}

// The child's error sentence: its first line, without the "tpusim run: " every message
// starts with.
std::string ErrorLine(const std::string& err) {
  std::string line = err.substr(0, err.find('\n'));
  const std::string prefix = "tpusim run: ";
  if (line.rfind(prefix, 0) == 0) line = line.substr(prefix.size());
  return line;
}

PointOutcome Finish(Child& child) {
  int status = 0;
  rusage usage{};
  while (wait4(child.pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  PointOutcome outcome;
  outcome.exit_code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  const auto parsed = nlohmann::ordered_json::parse(LastLine(child.text[0]), nullptr, false);
  if (!parsed.is_discarded() && parsed.is_object() && parsed.contains("kernel")) {
    outcome.reported = true;
    outcome.report = parsed;
    outcome.metrics = ReadMetrics(parsed);
  }
  outcome.metrics.process_seconds = SecondsSince(child.started);
  outcome.metrics.peak_rss_bytes = static_cast<double>(usage.ru_maxrss) * 1024;  // KiB
  if (WIFSIGNALED(status)) {
    outcome.error = "the run died with signal " + std::to_string(WTERMSIG(status)) + " (" +
                    strsignal(WTERMSIG(status)) + ")";
  } else if (outcome.exit_code == 0 && outcome.reported) {
    outcome.error.clear();
  } else if (outcome.reported && outcome.report.contains("error")) {
    outcome.error = outcome.report["error"].get<std::string>();
  } else if (outcome.reported && outcome.report.contains("mismatch")) {
    outcome.error = "WRONG data: " + outcome.report["mismatch"].get<std::string>();
  } else if (!ErrorLine(child.text[1]).empty()) {
    outcome.error = ErrorLine(child.text[1]);
  } else {
    outcome.error = "the run exited with status " + std::to_string(outcome.exit_code) +
                    " and printed no report";
  }
  return outcome;
}

std::string ClockText(double seconds) {
  const long s = std::lround(seconds);
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  }
  return text;
}

}  // namespace

std::string ProgressLine(size_t done, size_t total, double elapsed_seconds) {
  constexpr size_t kWidth = 24;
  const size_t filled = total ? done * kWidth / total : kWidth;
  // Piece by piece: GCC 12 at -O3 misreads "[" + std::string as an overlapping copy.
  std::string line = "[";
  line += std::string(filled, '#');
  line += std::string(kWidth - filled, '.');
  line += "]  ";
  line += std::to_string(done);
  line += '/';
  line += std::to_string(total);
  line += " points  ";
  line += ClockText(elapsed_seconds);
  line += " elapsed";
  if (done > 0 && done < total) {
    const double left =
        elapsed_seconds / static_cast<double>(done) * static_cast<double>(total - done);
    line += "  ETA ";
    line += ClockText(left);
  }
  return line;
}

PointRunner::PointRunner(int jobs, bool progress)
    : jobs_(jobs < 1 ? 1 : jobs), progress_(progress) {}

std::vector<PointOutcome> PointRunner::Run(
    const std::vector<std::vector<std::string>>& commands,
    const std::function<void(size_t, const PointOutcome&)>& done) const {
  const std::string self = SelfPath();
  std::vector<PointOutcome> outcomes(commands.size());
  std::vector<Child> running;
  size_t next = 0, finished = 0;
  const Clock::time_point started = Clock::now();
  const auto draw = [&] {
    if (progress_)
      std::cerr << "\r\033[K" << ProgressLine(finished, commands.size(), SecondsSince(started))
                << std::flush;
  };
  draw();
  while (finished < commands.size()) {
    while (running.size() < static_cast<size_t>(jobs_) && next < commands.size()) {
      running.push_back(Spawn(self, commands[next], next));
      ++next;
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<size_t, int>> owners;  // (running index, which stream)
    for (size_t r = 0; r < running.size(); ++r) {
      for (int which = 0; which < 2; ++which) {
        if (running[r].fds[which] < 0) continue;
        fds.push_back(pollfd{running[r].fds[which], POLLIN, 0});
        owners.emplace_back(r, which);
      }
    }
    // The bar's clock ticks every quarter second; without it, wait for output.
    const int ready = poll(fds.data(), fds.size(), progress_ ? 250 : -1);
    if (ready < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll failed: ") + std::strerror(errno));
    for (size_t f = 0; ready > 0 && f < fds.size(); ++f) {
      if (fds[f].revents != 0) Drain(running[owners[f].first], owners[f].second);
    }
    for (size_t r = 0; r < running.size();) {
      if (running[r].fds[0] >= 0 || running[r].fds[1] >= 0) {
        ++r;
        continue;
      }
      const size_t index = running[r].index;
      outcomes[index] = Finish(running[r]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(r));
      ++finished;
      if (done) {
        if (progress_) std::cerr << "\r\033[K" << std::flush;
        done(index, outcomes[index]);
      }
    }
    draw();
  }
  if (progress_) std::cerr << "\r\033[K" << std::flush;
  return outcomes;
}

}  // namespace tpusim::cli
