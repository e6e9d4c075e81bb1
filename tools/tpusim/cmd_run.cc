// tpusim run KERNEL: one kernel (or program) on one slice, with a human summary and optional JSON.

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/kernel_run.h"
#include "tools/tpusim/op_table.h"

namespace tpusim::cli {

namespace {

// One line of the summary: the metric's label and value, then `note`, or its description.
void PrintMetric(RunMetrics::Value RunMetrics::*member, const RunMetrics& metrics,
                 const std::string& note = "") {
  const MetricField& field = FieldOf(member);
  // Piece by piece: GCC 12 at -O3 misreads "(" + std::string as an overlapping copy.
  std::string described = "(";
  described += field.description;
  described += ')';
  std::printf("  %-16s %s   %s\n", field.label, HumanValue(field, metrics).c_str(),
              note.empty() ? described.c_str() : note.c_str());
}

void PrintDataCheck(const KernelRunReport& r) {
  if (!r.timing_only_reason.empty()) {
    std::cout << "  data             not checked: timing-only, because " << r.timing_only_reason
              << "\n";
  } else if (!r.functional()) {
    std::cout << "  data             not checked (timing-only run)\n";
  } else if (r.correct()) {
    std::cout << "  data             matches the reference on all " << r.devices << " "
              << r.devices_word << "\n";
  } else {
    std::cout << "  data             WRONG: " << r.mismatch << "\n";
  }
}

// Whether the run got to its metrics; prints the failure when not.
bool PrintFailure(const KernelRunReport& r) {
  if (r.completed) return false;
  std::cout << "  FAILED (" << ErrorKindName(*r.error_kind) << ")\n" << r.error << "\n";
  return true;
}

// Compute kernels: FLOP/s against the MXU peak and the roofline of docs/references.md §1.
void PrintRooflineSummary(const KernelRunReport& r) {
  std::cout << r.kernel << " on " << r.topology << " (" << r.SizeText()
            << ", each computing independently): " << r.dtype << " [" << r.m << ", " << r.k
            << "] @ [" << r.k << ", " << r.n << "]";
  for (size_t i = 0; i < r.blocks.size(); ++i)
    std::cout << (i ? "x" : ", blocks ") << r.blocks[i];
  std::cout << (r.functional() ? "" : ", timing only") << "\n";
  if (PrintFailure(r)) return;
  const RunMetrics& m = r.metrics;
  PrintMetric(&RunMetrics::sim_seconds, m);
  PrintMetric(&RunMetrics::achieved_flops, m,
              HumanValue(FieldOf(&RunMetrics::percent_of_peak), m) + " of the MXU peak " +
                  HumanValue(FieldOf(&RunMetrics::peak_flops), m));
  PrintMetric(&RunMetrics::mxu_utilisation, m);
  PrintMetric(&RunMetrics::roofline_seconds, m,
              r.bound_formula + "; HBM " + HumanValue(FieldOf(&RunMetrics::hbm_bytes), m) +
                  ", docs/references.md §1");
  PrintMetric(&RunMetrics::percent_of_bound, m);
  PrintDataCheck(r);
}

void PrintCollectiveSummary(const KernelRunReport& r) {
  std::cout << r.kernel << " on " << r.topology << " (" << r.SizeText() << "), ";
  // An entry over several axes (all_gather_nd) names them in its parameters, not here.
  if (!r.axis.empty()) {
    std::cout << "axis '" << r.axis << "' of " << r.axis_size
              << (r.wraparound ? " with" : " without") << " wraparound, ";
  }
  std::cout << HumanBytes(r.bytes) << " " << r.dtype << (r.functional() ? "" : ", timing only")
            << "\n";
  if (PrintFailure(r)) return;
  const RunMetrics& m = r.metrics;
  PrintMetric(&RunMetrics::sim_seconds, m);
  PrintMetric(&RunMetrics::algbw, m);
  PrintMetric(&RunMetrics::busbw, m);
  PrintMetric(&RunMetrics::bound_seconds, m, r.bound_formula + ", docs/references.md §3");
  PrintMetric(&RunMetrics::percent_of_bound, m);
  PrintDataCheck(r);
}

// Programs: the steps' time, where communication went and the memory the arrays needed.
void PrintProgramSummary(const KernelRunReport& r) {
  std::cout << r.kernel << " (program) on " << r.topology << " (" << r.SizeText() << ")"
            << (r.functional() ? "" : ", timing only") << "\n";
  if (!r.contract.empty()) std::cout << "  computes         " << r.contract << "\n";
  if (PrintFailure(r)) return;
  const RunMetrics& m = r.metrics;
  PrintMetric(&RunMetrics::sim_seconds, m);
  PrintMetric(&RunMetrics::async_wait_seconds, m);
  if (m.bound_seconds) {
    PrintMetric(&RunMetrics::bound_seconds, m, r.bound_formula);
    PrintMetric(&RunMetrics::percent_of_bound, m);
  }
  PrintDataCheck(r);
  if (const std::string path = CriticalPath(r); !path.empty())
    std::cout << "  critical path    " << path << "\n";
}

void PrintSummary(const KernelRunReport& r, bool all_ops) {
  if (r.kind == "program") {
    PrintProgramSummary(r);
  } else if (r.roofline()) {
    PrintRooflineSummary(r);
  } else {
    PrintCollectiveSummary(r);
  }
  if (r.completed) {
    PrintMetric(&RunMetrics::ici_bytes_per_chip, r.metrics);
    PrintMetric(&RunMetrics::peak_hbm_bytes, r.metrics);
  }
  if (!r.trace_path.empty()) {
    std::cout << "  trace            " << r.trace_path
              << "   (open it at https://ui.perfetto.dev)\n";
  }
  std::cout << "  wall time        " << HumanValue(FieldOf(&RunMetrics::wall_seconds), r.metrics)
            << ", " << HumanValue(FieldOf(&RunMetrics::events), r.metrics) << " model events\n";
  for (const std::string& note : r.notes)
    std::cout << "  note             " << note << "\n";
  // A program's ten longest ops; every op with --ops.
  if (r.completed && (all_ops || r.kind == "program")) {
    PrintOpTable(r, all_ops ? 0 : 10);
    PrintCollectiveTable(r, all_ops ? 0 : 10);
  }
}

}  // namespace

int RunRun(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string trace;
  po::options_description options(
      "tpusim run ENTRY --topology T [--PARAMETER VALUE]... [options]\n"
      "e.g. tpusim run all_gather_ring --topology v5e-4x4 --axis x --bytes 16M\n"
      "     tpusim run matmul --topology v5e-2x2 --m 2048 --k 2048 --n 1024 --bm 256\n\n"
      "Runs ENTRY, a kernel or a program (a shard_map program; see `tpusim list`), on every\n"
      "chip of slice T. Each entry declares its parameters, and each parameter is a flag:\n"
      "`tpusim run ENTRY --help` lists them with their types, defaults, units and ranges. A\n"
      "collective's bytes is V, the size of the full (gathered) array, as in\n"
      "docs/references.md §3. A matmul computes [m, k] @ [k, n] on each chip and is judged\n"
      "against the roofline of docs/references.md §1. Every run reports the bytes each chip\n"
      "sent over ICI and the peak HBM per chip. Exits 0 only when the run completed and the\n"
      "data matches the host reference.\n\noptions");
  CommonOptions common;
  common.Add(options, kAllCommonOptions);
  const ParamFlags params;
  options.add_options()("trace", po::value(&trace),
                        "write a trace here (.pftrace: Perfetto; .json: Chrome JSON)")(
      "json", "end the output with one JSON object on the last line")(
      "ops", "list every op of a program: count, total time, share, exposed communication");
  std::vector<std::string> entries;
  po::variables_map vm;
  if (!ParseCommandLine("run", argc, argv, options, 1, entries, vm, params)) return 0;
  if (entries.empty())
    throw UsageError("run", "name the kernel to run, e.g. tpusim run all_gather_ring.");
  const kernels::KernelInfo& info = FindEntry("run", entries[0]);
  const kernels::ParamValues given = params.Given("run", vm, {&info});
  KernelRunRequest request = common.Request("run", vm);
  request.kernel = entries[0];
  request.params = given;
  request.trace_path = trace;
  info.Bind(request.params);  // every value checked before anything runs
  if (ParseOnly()) return 0;
  request.config.leave_model_at_exit = true;  // one run, then the process ends
  const KernelRunReport report = RunKernel(request);

  PrintSummary(report, vm.count("ops") > 0);
  if (vm.count("json")) std::cout << report.ToJson().dump() << std::endl;
  return report.ok() ? 0 : 1;
}

}  // namespace tpusim::cli
