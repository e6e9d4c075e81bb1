#pragma once

// Plots of sweeps and benches, drawn by gnuplot (Debian's gnuplot-nox, which
// scripts/bootstrap installs) into an SVG or PNG file: a logarithmic axis where the values
// span a decade or more, measured series with points, analytic bounds as dashed lines in
// their series' colour.

#include <string>
#include <vector>

namespace tpusim::cli {

struct PlotSeries {
  std::string title;
  std::vector<double> x, y;
  bool bound = false;  // a dashed line without points, coloured as the series before it
};

struct Plot {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  // Categories on x (series' x are indices into them); empty when x is a number.
  std::vector<std::string> x_names;
  bool x_bytes = false;  // tick labels as binary sizes: 1Ki, 1Mi
};

// Refuses, before anything runs, a file that is neither .svg nor .png, and a machine
// without gnuplot. Throws UsageError naming `command`.
void CheckPlotFile(const std::string& command, const std::string& path);
// The gnuplot script that draws `plot` into `path`, data included.
std::string PlotScript(const Plot& plot, const std::string& path);
// Runs gnuplot on PlotScript. Throws std::runtime_error when it fails or has nothing to
// draw.
void DrawPlot(const Plot& plot, const std::string& path);

}  // namespace tpusim::cli
