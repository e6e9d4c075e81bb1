// tpusim hlo-info FILE [--topology T]: what tpusim read of an HLO module and how it will run
// it: the header, the computations, instruction counts by opcode with how each is charged,
// the entry parameters (per-device and global shapes, layouts), the collectives with their
// groups mapped to chips and torus axes, and what the run will say (timing-only, notes).

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "hlo/parser.h"
#include "hlo/run/entry.h"
#include "hlo/run/hlo_computation.h"
#include "hlo/run/layouts.h"
#include "hlo/run/types.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/param_flags.h"
#include "topologies/topology_loader.h"

namespace tpusim::cli {

namespace {

void PrintModule(const hlo::Module& m) {
  std::printf("module %s (%s)\n", m.name.c_str(), m.file_name.c_str());
  std::printf("  num_partitions=%lld replica_count=%lld is_scheduled=%s\n",
              static_cast<long long>(m.num_partitions), static_cast<long long>(m.replica_count),
              m.is_scheduled ? "true" : "false");
  std::printf("computations (%zu):\n", m.computations.size());
  for (const hlo::Computation& c : m.computations) {
    std::printf("  %s%-40s %zu instructions\n", c.is_entry ? "ENTRY " : "      ", c.name.c_str(),
                c.instructions.size());
  }
}

}  // namespace

int RunHloInfo(int argc, char** argv) {
  namespace po = boost::program_options;
  po::options_description options(
      "tpusim hlo-info FILE: what tpusim reads of an HLO module (compiled.as_text()) and how "
      "it will run it");
  options.add_options()("file", po::value<std::string>(), "the HLO text file")(
      "topology,t", po::value<std::string>(),
      "preset or .textproto: also map the module's devices, layouts and collective groups onto "
      "this slice")("device-order", po::value<std::string>()->default_value(""),
                    "the mesh device of each of the module's device ids (default: i on chip i)")(
      "unknown-ops", po::value<std::string>()->default_value("error"),
      "error or free: what an op the model does not know does");
  std::vector<std::string> operands;
  po::variables_map vm;
  if (!ParseCommandLine("hlo-info", argc, argv, options, 1, operands, vm)) return 0;
  const std::string file = OperandOrOption("hlo-info", operands, vm, "file");
  if (file.empty()) throw UsageError("hlo-info", "give the HLO text file to read.");
  const std::string unknown = vm["unknown-ops"].as<std::string>();
  if (unknown != "error" && unknown != "free")
    throw UsageError("hlo-info", "--unknown-ops is '" + unknown + "'; use error or free.");
  if (ParseOnly()) return 0;
  auto module = std::make_shared<const hlo::Module>(hlo::ParseModuleFile(file));
  PrintModule(*module);
  std::string topology = vm.count("topology") ? vm["topology"].as<std::string>() : "";
  if (topology.empty()) {
    // The first preset with as many devices as the module.
    const uint64_t devices = static_cast<uint64_t>(module->num_partitions * module->replica_count);
    for (const std::string& preset : topologies::PresetNames()) {
      if (topologies::DeviceCount(topologies::LoadTopology(preset)) == devices) {
        topology = preset;
        break;
      }
    }
    if (topology.empty()) {
      hlo::run::CheckPartitioned(*module);
      std::printf(
          "\n(no preset has %llu devices: give --topology to map the devices, layouts and "
          "collectives onto a slice)\n",
          static_cast<unsigned long long>(devices));
      return 0;
    }
    std::printf(
        "\n(no --topology given: %s, the first preset with as many devices as the module)\n",
        topology.c_str());
  }
  const dsl::Mesh mesh(topologies::LoadTopology(topology));
  const kernels::KernelInfo info = hlo::run::HloModuleEntry(module, module->file_name);
  kernels::ParamValues given = {{"device_order", vm["device-order"].as<std::string>()},
                                {"unknown_ops", unknown}};
  const kernels::Params params = info.Bind(given);
  const hlo::run::PreparedModule prepared = hlo::run::Prepare(module, mesh, params);
  const hlo::run::ModuleAnalysis& a = prepared.analysis;
  const hlo::run::DeviceMap& devices = *prepared.plan->devices;

  std::printf(
      "\non %s (%s): %d devices, device id i on mesh device %s\n", mesh.topology().name().c_str(),
      mesh.Describe().c_str(), devices.devices(),
      vm["device-order"].as<std::string>().empty() ? "i (row-major)" : "given by --device-order");
  std::printf("\ninstructions run (%d), by opcode:\n", a.instructions);
  for (const hlo::run::OpUse& op : a.ops) {
    std::printf("  %-26s %5d  %s\n", op.opcode.c_str(), op.count, op.charged.c_str());
  }
  std::printf("\nparameters (per device -> global):\n");
  const hlo::Computation& entry = module->entry_computation();
  for (int p : entry.parameters) {
    const hlo::Instruction& param = entry.instructions[static_cast<size_t>(p)];
    const dsl::ShapeDtype t = hlo::run::TypeOf(param.shape, "parameter '" + param.name + "'");
    const hlo::run::GlobalLayout l = hlo::run::LayoutOf(t, param.sharding, devices, mesh);
    std::printf("  %-12s %-22s -> %-22s %s\n", param.name.c_str(),
                dsl::TypeString(t.dtype, t.shape).c_str(),
                dsl::TypeString(l.global.dtype, l.global.shape).c_str(), l.how.c_str());
  }
  std::printf("\ncollectives (%zu):\n", a.collectives.size());
  for (const hlo::run::CollectiveUse& c : a.collectives) {
    std::printf("  %-28s %-22s %s; on %s\n", c.name.c_str(), c.opcode.c_str(), c.groups.c_str(),
                c.placement.c_str());
  }
  std::printf("\nnumerics: %s\n",
              a.missing_numerics.empty()
                  ? "every op has them: a run checks each device against a host evaluation"
                  : ("timing-only, because " + a.missing_numerics).c_str());
  for (const std::string& note : a.notes)
    std::printf("note: %s\n", note.c_str());
  for (const std::string& u : a.unknown)
    std::printf("unknown, charged nothing: %s\n", u.c_str());
  return 0;
}

}  // namespace tpusim::cli
