#include "tools/tpusim/plot.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "tools/tpusim/cli.h"

namespace tpusim::cli {

namespace {

bool EndsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// gnuplot on PATH, as `command -v` finds it.
bool HaveGnuplot() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/gnuplot";
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// A string in a gnuplot script: single quotes, doubled inside.
std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (const char c : text)
    quoted += c == '\'' ? std::string("''") : std::string(1, c);
  return quoted + "'";
}

// Whether positive `values` span a decade or more: then the axis is logarithmic.
bool SpansDecades(const std::vector<double>& values) {
  double low = 0, high = 0;
  for (const double v : values) {
    if (!(v > 0)) return false;
    low = low == 0 ? v : std::min(low, v);
    high = std::max(high, v);
  }
  return low > 0 && high / low >= 10;
}

}  // namespace

void CheckPlotFile(const std::string& command, const std::string& path) {
  if (!EndsWith(path, ".svg") && !EndsWith(path, ".png")) {
    throw UsageError(command, "--plot '" + path +
                                  "' is neither .svg nor .png; name the image file, e.g. "
                                  "--plot sweep.svg.");
  }
  if (!HaveGnuplot()) {
    throw UsageError(command,
                     "--plot needs gnuplot, which is not on PATH; install it "
                     "(apt-get install gnuplot-nox, as scripts/bootstrap does) or "
                     "leave out --plot.");
  }
}

std::string PlotScript(const Plot& plot, const std::string& path) {
  std::ostringstream s;
  if (EndsWith(path, ".png")) {
    s << "set terminal pngcairo size 960,600 noenhanced font 'sans,10'\n";
  } else {
    s << "set terminal svg size 800,500 noenhanced font 'sans,11' background '#ffffff'\n";
  }
  s << "set output " << Quote(path) << "\n"
    << "set title " << Quote(plot.title) << "\n"
    << "set xlabel " << Quote(plot.x_label) << "\n"
    << "set ylabel " << Quote(plot.y_label) << "\n"
    << "set grid\nset key outside right top\n";
  std::vector<double> xs, ys;
  for (const PlotSeries& series : plot.series) {
    xs.insert(xs.end(), series.x.begin(), series.x.end());
    ys.insert(ys.end(), series.y.begin(), series.y.end());
  }
  if (!plot.x_names.empty()) {
    s << "set xtics (";
    for (size_t i = 0; i < plot.x_names.size(); ++i)
      s << (i ? ", " : "") << Quote(plot.x_names[i]) << " " << i;
    s << ")\nset xrange [-0.5:" << plot.x_names.size() - 0.5 << "]\n";
  } else if (SpansDecades(xs)) {
    s << (plot.x_bytes ? "set logscale x 2\nset format x '%.0b%BB'\n" : "set logscale x\n");
  }
  if (SpansDecades(ys)) s << "set logscale y\n";
  for (size_t i = 0; i < plot.series.size(); ++i) {
    s << "$series" << i << " << EOD\n";
    for (size_t p = 0; p < plot.series[i].x.size(); ++p) {
      char line[64];
      std::snprintf(line, sizeof line, "%.10g %.10g\n", plot.series[i].x[p], plot.series[i].y[p]);
      s << line;
    }
    s << "EOD\n";
  }
  s << "plot ";
  int colour = 0;
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const PlotSeries& series = plot.series[i];
    if (!series.bound || colour == 0) ++colour;
    s << (i ? ", \\\n     " : "") << "$series" << i << " using 1:2 with "
      << (series.bound ? "lines dashtype 2" : "linespoints pointtype 7 pointsize 0.6")
      << " linewidth 1.5 linecolor " << colour << " title " << Quote(series.title);
  }
  s << "\n";
  return s.str();
}

void DrawPlot(const Plot& plot, const std::string& path) {
  bool points = false;
  for (const PlotSeries& series : plot.series)
    points = points || !series.x.empty();
  if (!points) {
    throw std::runtime_error("--plot has nothing to draw: no point completed; the table says why.");
  }
  const std::string script = PlotScript(plot, path);
  std::fflush(nullptr);
  FILE* gnuplot = popen("gnuplot", "w");
  if (!gnuplot) throw std::runtime_error("--plot cannot start gnuplot.");
  std::fwrite(script.data(), 1, script.size(), gnuplot);
  const int status = pclose(gnuplot);
  std::error_code error;
  if (status != 0 || !std::filesystem::exists(path, error) ||
      std::filesystem::file_size(path, error) == 0) {
    throw std::runtime_error("--plot: gnuplot could not draw '" + path +
                             "' (its message is above); check that the directory exists and is "
                             "writable.");
  }
}

}  // namespace tpusim::cli
