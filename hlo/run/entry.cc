#include "hlo/run/entry.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/work.h"
#include "hlo/parser.h"
#include "hlo/reference/evaluator.h"
#include "hlo/run/hlo_computation.h"
#include "hlo/run/layouts.h"
#include "hlo/run/types.h"
#include "kernels/problem_params.h"

namespace tpusim::hlo::run {

namespace {

std::map<std::string, std::string> ParseKernelMap(const std::string& text) {
  std::map<std::string, std::string> map;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw kernels::ParamError({"kernel_map"},
                                "kernel_map '" + text + "': '" + item +
                                    "' is not NAME=ENTRY; map each Pallas kernel's name to a "
                                    "registered kernel, e.g. my_matmul=matmul.");
    }
    map[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return map;
}

// The sharding of entry output `index`: the root's (one per tuple element).
std::optional<HloSharding> OutputSharding(const Instruction& root, size_t index, size_t count) {
  if (!root.sharding) return std::nullopt;
  if (root.sharding->kind == HloSharding::Kind::kTuple) {
    if (index < root.sharding->tuple_elements.size()) return root.sharding->tuple_elements[index];
    return std::nullopt;
  }
  return count == 1 || root.sharding->kind == HloSharding::Kind::kReplicated ? root.sharding
                                                                             : std::nullopt;
}

struct Layouts {
  std::vector<GlobalLayout> in, out;
};

Layouts LayoutsOf(const Module& module, const DeviceMap& devices, const dsl::Mesh& mesh) {
  Layouts layouts;
  const Computation& entry = module.entry_computation();
  for (int p : entry.parameters) {
    const Instruction& param = entry.instructions[static_cast<size_t>(p)];
    layouts.in.push_back(LayoutOf(TypeOf(param.shape, "parameter '" + param.name + "'"),
                                  param.sharding, devices, mesh));
  }
  const Instruction& root = entry.root_instruction();
  const std::vector<dsl::ShapeDtype> results = LeafTypes(root.shape, "the entry's result");
  for (size_t i = 0; i < results.size(); ++i) {
    layouts.out.push_back(
        LayoutOf(results[i], OutputSharding(root, i, results.size()), devices, mesh));
  }
  return layouts;
}

// MXU FLOPs one device runs: every dot and convolution the entry reaches, loops counted.
double FlopsOf(const Module& module, const ModulePlan& plan, const dsl::Mesh& mesh) {
  std::function<double(int, int)> walk = [&](int index, int depth) -> double {
    if (depth > 64) return 0;
    const Computation& c = module.computations.at(static_cast<size_t>(index));
    double flops = 0;
    for (const Instruction& i : c.instructions) {
      const int self = static_cast<int>(&i - c.instructions.data());
      if (i.opcode == "while") {
        const auto it = plan.trip_counts.find({index, self});
        const double trips = it == plan.trip_counts.end() || it->second < 0 ? 1 : it->second;
        flops += trips * walk(i.Called("body"), depth + 1);
      } else if (i.opcode == "call") {
        flops += walk(i.Called("to_apply"), depth + 1);
      } else if (i.opcode == "fusion") {
        LoweringContext context{module, *plan.devices, nullptr, plan.kernel_map};
        context.computation = [&](int called) -> dsl::ComputationPtr {
          return std::make_shared<HloComputation>(module, called, context, mesh, 0);
        };
        flops += HloComputation(module, i.Called("calls"), context, mesh, 0).Work().mxu_flops();
      } else if (i.opcode == "dot") {
        double k = 1;
        const Instruction& lhs = c.instructions[static_cast<size_t>(i.operands.at(0))];
        const Attribute* contracting = i.FindAttribute("lhs_contracting_dims");
        if (contracting) {
          for (int64_t d : DecodeIntList(*contracting))
            k *= static_cast<double>(lhs.shape.dimensions.at(static_cast<size_t>(d)));
        }
        flops += 2 * static_cast<double>(i.shape.ElementCount()) * k;
      }
    }
    return flops;
  };
  return walk(module.entry, 0);
}

}  // namespace

bool IsHloPath(const std::string& name) {
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".hlo") == 0) return true;
  std::error_code error;
  if (!std::filesystem::is_regular_file(name, error)) return false;
  // Any other file is one when it starts as XLA prints a module (comments aside).
  std::ifstream in(name);
  std::string word;
  while (in >> word) {
    if (word.rfind("//", 0) == 0 || word.rfind("#", 0) == 0) {
      std::getline(in, word);
      continue;
    }
    return word == "HloModule";
  }
  return false;
}

std::vector<kernels::Param> HloModuleParams() {
  using kernels::Param;
  return {
      Param::String("device_order",
                    "the mesh device (row-major logical id) each of the module's device ids "
                    "runs on, comma-separated; default: device i on chip i")
          .Default(""),
      Param::String("kernel_map",
                    "NAME=ENTRY,...: the registered kernel each tpu_custom_call runs, by the "
                    "Pallas kernel's name; unmapped ones are charged from their cost estimate")
          .Default(""),
      Param::Enum("unknown_ops", {"error", "free"},
                  "an op the model does not know: an error naming it, or charged nothing "
                  "and listed in the report")
          .Default("error"),
  };
}

PreparedModule Prepare(std::shared_ptr<const Module> module, const dsl::Mesh& mesh,
                       const kernels::Params& params) {
  PreparedModule prepared;
  auto plan = std::make_shared<ModulePlan>();
  plan->module = module;
  plan->devices = std::make_shared<const DeviceMap>(
      *module, mesh, ParseDeviceOrder(params.String("device_order")));
  plan->kernel_map = ParseKernelMap(params.String("kernel_map"));
  plan->unknown_ops_free = params.String("unknown_ops") == "free";
  prepared.analysis = Analyse(*plan, mesh);
  prepared.plan = std::move(plan);
  return prepared;
}

kernels::KernelInfo HloModuleEntry(const std::string& path) {
  return HloModuleEntry(std::make_shared<const Module>(ParseModuleFile(path)), path);
}

kernels::KernelInfo HloModuleEntry(std::shared_ptr<const Module> module, const std::string& name) {
  kernels::KernelInfo info;
  info.name = name;
  size_t instructions = 0;
  for (const Computation& c : module->computations)
    instructions += c.instructions.size();
  info.summary = "HLO module " + module->name + " (" + std::to_string(instructions) +
                 " instructions, " + std::to_string(module->num_partitions) + " partitions)";
  info.params = HloModuleParams();
  info.kind = kernels::EntryKind::kProgram;
  info.make = [module, name](const dsl::Mesh& mesh, const kernels::Params& params) {
    PreparedModule prepared = Prepare(module, mesh, params);
    std::shared_ptr<const ModulePlan> plan = prepared.plan;
    const Layouts layouts = LayoutsOf(*module, *plan->devices, mesh);
    const bool functional = params.functional && prepared.analysis.missing_numerics.empty();
    std::vector<dsl::PartitionSpec> in_specs, out_specs;
    std::vector<dsl::Array> inputs;
    for (size_t i = 0; i < layouts.in.size(); ++i) {
      const GlobalLayout& l = layouts.in[i];
      in_specs.push_back(l.spec);
      inputs.push_back(kernels::EntryInput(l.global.shape, l.global.dtype, params.seed,
                                           static_cast<int>(i), functional));
    }
    for (const GlobalLayout& l : layouts.out)
      out_specs.push_back(l.spec);
    dsl::ProgramBody body = [plan, layouts](dsl::ProgramContext& ctx,
                                            const std::vector<dsl::Value>& in) {
      std::vector<dsl::Value> parameters;
      for (size_t i = 0; i < in.size(); ++i)
        parameters.push_back(layouts.in[i].stacked ? in[i].View(layouts.in[i].per_device) : in[i]);
      std::vector<dsl::Value> out = RunEntry(*plan, ctx, parameters);
      for (size_t i = 0; i < out.size() && i < layouts.out.size(); ++i) {
        if (!layouts.out[i].stacked) continue;
        dsl::Shape block = layouts.out[i].per_device.shape;
        block.insert(block.begin(), 1);
        out[i] = out[i].View({block, layouts.out[i].per_device.dtype});
      }
      return out;
    };
    kernels::Workload w{dsl::shard_map(mesh, in_specs, out_specs, std::move(body), name),
                        std::move(inputs)};
    for (const GlobalLayout& l : layouts.out)
      w.out_types.push_back(l.global);
    w.notes = prepared.analysis.notes;
    for (const std::string& unknown : prepared.analysis.unknown)
      w.notes.push_back("not modelled, charged nothing: " + unknown);
    if (params.functional && !functional) w.timing_only_reason = prepared.analysis.missing_numerics;
    if (functional) {
      // The host evaluation: every device's parameters from the global inputs, the module
      // evaluated on all of them together, the results assembled as the run assembles its own.
      std::vector<std::vector<dsl::Array>> per_device(static_cast<size_t>(mesh.devices()));
      for (int device = 0; device < mesh.devices(); ++device) {
        const int64_t id = plan->devices->GlobalOf(device);
        for (size_t i = 0; i < layouts.in.size(); ++i) {
          dsl::Array block = w.program.InputBlock(static_cast<int>(i), w.inputs[i], device);
          dsl::Array as_hlo(layouts.in[i].per_device.shape, layouts.in[i].per_device.dtype);
          as_hlo.bytes() = block.bytes();
          if (per_device[static_cast<size_t>(id)].size() <= i)
            per_device[static_cast<size_t>(id)].resize(i + 1);
          per_device[static_cast<size_t>(id)][i] = std::move(as_hlo);
        }
      }
      const std::vector<std::vector<dsl::Array>> results = reference::Evaluate(*module, per_device);
      for (size_t o = 0; o < layouts.out.size(); ++o) {
        std::vector<dsl::Array> blocks;
        for (int device = 0; device < mesh.devices(); ++device) {
          const dsl::Array& r = results[static_cast<size_t>(plan->devices->GlobalOf(device))][o];
          dsl::Shape block = r.shape();
          if (layouts.out[o].stacked) block.insert(block.begin(), 1);
          dsl::Array b(block, r.dtype());
          b.bytes() = r.bytes();
          blocks.push_back(std::move(b));
        }
        w.expected.push_back(w.program.AssembleOutput(static_cast<int>(o), blocks));
      }
      // The MXU sums in another order than the host, so a float result may differ by its
      // last bf16 bit, and layer after layer such differences grow with the values: 2% of
      // each element, or 1% of the largest output value (integers agree exactly).
      double largest = 0;
      for (const dsl::Array& e : w.expected) {
        for (int64_t i = 0; i < e.size(); ++i)
          largest = std::max(largest, std::abs(e.GetFlat(i)));
      }
      w.rtol = 2e-2;
      w.atol = std::max(2e-2, 1e-2 * largest);
    }
    return w;
  };
  info.bound = [module](const dsl::Mesh& mesh, const kernels::Params& params) {
    PreparedModule prepared = Prepare(module, mesh, params);
    kernels::Bound bound;
    bound.flops = FlopsOf(*module, *prepared.plan, mesh);
    bound.peak_flops = base::MxuPeakFlops(mesh.topology().chip());
    bound.seconds = bound.flops / bound.peak_flops;
    char flops[32];
    std::snprintf(flops, sizeof flops, "%.3g", bound.flops);
    bound.formula = std::string("MXU FLOPs per chip / peak (") + flops + " FLOPs)";
    return bound;
  };
  return info;
}

}  // namespace tpusim::hlo::run
