#include "tools/tpusim/kernel_run.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "base/text.h"
#include "dsl/mesh.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/op_table.h"
#include "tools/tpusim/run_memory.h"
#include "topologies/topology_loader.h"
#include "traces/trace_sink.h"

namespace tpusim::cli {

nlohmann::ordered_json ChecksJson(const base::RunConfig& config) {
  nlohmann::ordered_json j;
  j["race_check"] = config.race_check;
  j["uninitialized_memory"] =
      config.uninitialized_memory == base::UninitializedMemory::kZero ? "zero" : "nan";
  j["out_of_bounds_reads"] = config.out_of_bounds_reads == base::OutOfBoundsReads::kUninitialized
                                 ? "uninitialized"
                                 : "raise";
  j["grid_seed"] = config.grid_seed ? nlohmann::ordered_json(*config.grid_seed) : nullptr;
  return j;
}

std::string SizeText(uint64_t chips, uint64_t devices) {
  std::string text = std::to_string(chips) + " chips";
  if (devices != chips) text += ", " + std::to_string(devices) + " devices";
  return text;
}

std::string KernelRunReport::SizeText() const {
  return cli::SizeText(chips, devices);
}

nlohmann::ordered_json KernelRunReport::ToJson() const {
  nlohmann::ordered_json j;
  j["kernel"] = kernel;
  j["kind"] = kind;
  j["topology"] = topology;
  j["chips"] = chips;
  j["devices"] = devices;
  j["axis"] = axis;
  j["axis_size"] = axis_size;
  j["wraparound"] = wraparound;
  j["bytes"] = bytes;
  j["dtype"] = dtype;
  j["m"] = m;
  j["k"] = k;
  j["n"] = n;
  j["timing_only"] = !functional();
  j["checks"] = ChecksJson(config);
  j["completed"] = completed;
  WriteMetrics(metrics, j);
  j["analytic_formula"] = bound_formula;
  if (roofline()) j["blocks"] = blocks;
  j["busiest_link"] = busiest_link;
  j["out_dtype"] = out_dtype;
  j["specs"] = specs;
  j["contract"] = contract;
  if (kind == "program") {
    j["ops"] = OpsJson(*this);
    j["collective_algorithm"] =
        config.collective_algorithm.empty() ? "auto" : config.collective_algorithm;
    j["collectives"] = CollectivesJson(*this);
  }
  if (!timing_only_reason.empty()) j["timing_only_reason"] = timing_only_reason;
  if (!notes.empty()) j["notes"] = notes;
  if (!mismatch.empty()) j["mismatch"] = mismatch;
  if (error_kind) {
    j["error_kind"] = ErrorKindName(*error_kind);
    j["error"] = error;
  }
  j["trace"] =
      trace_path.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(trace_path);
  nlohmann::ordered_json values = nlohmann::ordered_json::object();
  for (const auto& param : params) {
    auto& slot = values[param.first];  // a structured binding cannot be captured in C++17
    std::visit([&slot](const auto& v) { slot = v; }, param.second.storage());
  }
  j["params"] = values;
  return j;
}

namespace {

// The global shape of an output whose per-device block is `block` under `spec`.
dsl::Shape GlobalShape(const dsl::Mesh& mesh, const dsl::PartitionSpec& spec, dsl::Shape block) {
  for (size_t d = 0; d < spec.entries().size() && d < block.size(); ++d) {
    for (const auto& axis : spec.entries()[d].axes)
      block[d] *= mesh.AxisSize(axis);
  }
  return block;
}

}  // namespace

std::string Contract::Format(bool with_specs, bool with_out_dtypes) const {
  std::vector<std::string> inputs, outputs;
  for (size_t i = 0; i < in_types.size(); ++i)
    inputs.push_back(in_types[i] + (with_specs ? " " + in_specs[i] : ""));
  for (size_t i = 0; i < out_shapes.size(); ++i) {
    outputs.push_back((with_out_dtypes ? out_dtypes[i] : "") + out_shapes[i] +
                      (with_specs ? " " + out_specs[i] : ""));
  }
  return "(" + kernels::JoinList(inputs) + ") -> (" + kernels::JoinList(outputs) + ")";
}

std::string Contract::Specs() const {
  return kernels::JoinList(in_specs) + " -> " + kernels::JoinList(out_specs);
}

std::string Contract::OutDtypes() const {
  return kernels::JoinList(out_dtypes);
}

std::optional<Contract> WorkloadContract(const kernels::Workload& workload) {
  const dsl::ShardMap& program = workload.program;
  std::vector<dsl::ShapeDtype> outputs = workload.out_types;
  if (program.is_kernel()) {
    outputs.clear();
    for (size_t i = 0; i < program.call().out_shape.size(); ++i) {
      const auto& block = program.call().out_shape[i];
      outputs.push_back(
          {GlobalShape(program.mesh(), program.out_specs()[i], block.shape), block.dtype});
    }
  } else if (outputs.empty()) {
    for (const auto& expected : workload.expected)
      outputs.push_back({expected.shape(), expected.dtype()});
  }
  if (outputs.size() != program.out_specs().size()) return std::nullopt;
  Contract contract;
  for (size_t i = 0; i < workload.inputs.size(); ++i) {
    const auto& input = workload.inputs[i];
    contract.in_types.push_back(dsl::TypeString(input.dtype(), input.shape()));
    contract.in_specs.push_back(program.in_specs()[i].Describe());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string dtype = dsl::DTypeName(outputs[i].dtype);
    // TypeString spells "bf16[2048,1024]"; the shape alone is what follows the dtype.
    contract.out_shapes.push_back(
        dsl::TypeString(outputs[i].dtype, outputs[i].shape).substr(dtype.size()));
    contract.out_specs.push_back(program.out_specs()[i].Describe());
    contract.out_dtypes.push_back(dtype);
  }
  return contract;
}

kernels::Workload MakeEntryWorkload(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                                    const kernels::Params& params) {
  try {
    return info.make(mesh, params);
  } catch (const kernels::ParamError& e) {
    if (!e.entry().empty()) throw;
    const std::string message = e.what();
    throw kernels::ParamError(
        e.params(), message.rfind(info.name, 0) == 0 ? message : info.name + ": " + message,
        info.name);
  }
}

kernels::Workload ShapesOnlyWorkload(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                                     const kernels::Params& params) {
  kernels::Params shapes_only = params;
  shapes_only.functional = false;
  kernels::Workload workload = MakeEntryWorkload(info, mesh, shapes_only);
  workload.program.Check(workload.inputs);
  return workload;
}

kernels::Workload MakeWorkload(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                               const kernels::Params& params) {
  kernels::Workload shapes = ShapesOnlyWorkload(info, mesh, params);
  if (!params.functional) return shapes;
  RequireRunMemory(shapes, /*built=*/false);
  kernels::Workload workload = MakeEntryWorkload(info, mesh, params);
  RequireRunMemory(workload, /*built=*/true);
  return workload;
}

Contract EntryContract(const kernels::KernelInfo& info, const dsl::Mesh& mesh,
                       const kernels::Params& params) {
  const kernels::Workload shapes = ShapesOnlyWorkload(info, mesh, params);
  if (auto contract = WorkloadContract(shapes)) return *contract;
  RequireRunMemory(shapes, /*built=*/false);
  kernels::Params functional = params;
  functional.functional = true;
  if (auto contract = WorkloadContract(MakeEntryWorkload(info, mesh, functional))) return *contract;
  throw Error(ErrorKind::kInvalidArgument,
              "program '" + info.name +
                  "' does not say what it returns: its workload has neither out_types nor "
                  "reference outputs. Set kernels::Workload::out_types to the global output "
                  "types in its make function.");
}

const kernels::KernelInfo& FindEntry(const std::string& command, const std::string& name) {
  const kernels::Registry& registry = kernels::Registry::Get();
  if (const kernels::KernelInfo* info = registry.Find(name)) return *info;
  if (const std::vector<std::string> members = registry.FamilyMembers(name); !members.empty()) {
    std::string message = "'";
    message += name;
    message += "' is a family of entries (";
    for (size_t i = 0; i < members.size(); ++i) {
      if (i) message += ", ";
      message += members[i];
    }
    message += "), and tpusim ";
    message += command;
    message += " runs one entry; name one, e.g. tpusim ";
    message += command;
    message += " ";
    message += members.front();
    message += ", or compare them all with tpusim compare ";
    message += name;
    message += ".";
    throw UsageError(command, message);
  }
  std::string kernel_names, programs, families;
  for (const auto& entry : registry.kernels()) {
    std::string& list = entry.kind == kernels::EntryKind::kProgram ? programs : kernel_names;
    base::AppendListItem(list, ", ", entry.name);
  }
  for (const auto& family : registry.Families())
    base::AppendListItem(families, ", ", family);
  throw UsageError(command, "unknown kernel '" + name + "'; known kernels: " + kernel_names +
                                (programs.empty() ? "" : "; programs: " + programs) +
                                (families.empty() ? "" : "; families: " + families) +
                                ". `tpusim list` says what each one is.");
}

namespace {

// The problem parameters the report shows, when the entry takes them.
void ReportProblem(const kernels::Params& params, const dsl::Mesh& mesh,
                   const config::Topology& topology, KernelRunReport& report) {
  const auto has = [&params](const char* name, kernels::ParamType type) {
    return params.TypeOf(name) == type && params.Has(name);
  };
  if (has("axis", kernels::ParamType::kString)) {
    report.axis = params.String("axis");
    const int axis_index = mesh.AxisIndex(report.axis);  // throws naming the mesh's axes
    report.axis_size = mesh.shape()[axis_index];
    report.wraparound = topology.mesh().wraparound(axis_index);
  }
  if (has("bytes", kernels::ParamType::kBytes)) report.bytes = params.Bytes("bytes");
  if (has("dtype", kernels::ParamType::kEnum)) report.dtype = params.String("dtype");
  if (has("m", kernels::ParamType::kInt)) report.m = params.Int("m");
  if (has("k", kernels::ParamType::kInt)) report.k = params.Int("k");
  if (has("n", kernels::ParamType::kInt)) report.n = params.Int("n");
  report.params = params.Values();
}

// The global array of input `input` whose blocks, one per device, are `blocks`, laid out
// as `spec` says; the copies of a replicated block must agree.
dsl::Array Assemble(const std::string& entry, size_t input, const dsl::Mesh& mesh,
                    const dsl::PartitionSpec& spec, const std::vector<dsl::Array>& blocks) {
  std::string where = entry;
  where += ": input ";
  where += std::to_string(input);
  if (blocks.size() != static_cast<size_t>(mesh.devices())) {
    std::string message = where;
    message += " has ";
    message += std::to_string(blocks.size());
    message += " blocks, and the slice has ";
    message += std::to_string(mesh.devices());
    message += " devices; give one block per device, or one global array.";
    throw Error(ErrorKind::kInvalidArgument, message);
  }
  const dsl::Array& first = blocks[0];
  for (size_t d = 1; d < blocks.size(); ++d) {
    if (blocks[d].shape() == first.shape() && blocks[d].dtype() == first.dtype()) continue;
    std::string message = where;
    message += ": device " + std::to_string(d) + "'s block is ";
    message += dsl::TypeString(blocks[d].dtype(), blocks[d].shape());
    message += ", and device 0's is ";
    message += dsl::TypeString(first.dtype(), first.shape());
    message += "; give every device a block of one shape and dtype.";
    throw Error(ErrorKind::kInvalidArgument, message);
  }
  dsl::Array global(spec.GlobalShape(mesh, first.shape()), first.dtype());
  for (size_t d = 0; d < blocks.size(); ++d) {
    const int device = static_cast<int>(d);
    const int canonical = spec.CanonicalReplica(mesh, device);
    if (canonical == device) {
      global.Place(blocks[d], spec.BlockOffsets(mesh, global.shape(), device));
    } else if (blocks[d].bytes() != blocks[static_cast<size_t>(canonical)].bytes()) {
      std::string message = where;
      message += ": the blocks of devices " + std::to_string(canonical) + " and ";
      message += std::to_string(d);
      message += " differ, and its PartitionSpec ";
      message += spec.Describe();
      message +=
          " makes them copies of one block; give each device of a replicated axis the "
          "same block.";
      throw Error(ErrorKind::kInvalidArgument, message);
    }
  }
  return global;
}

// The caller's inputs in place of the workload's, each checked against the entry's input
// of that position (its shape, and a dtype of the same kind).
void UseCallerInputs(const std::string& entry, const std::vector<std::vector<dsl::Array>>& given,
                     const dsl::ShardMap& program, std::vector<dsl::Array>& inputs) {
  if (given.size() != inputs.size()) {
    throw Error(ErrorKind::kInvalidArgument,
                entry + " takes " + std::to_string(inputs.size()) + " input(s), and " +
                    std::to_string(given.size()) +
                    " were given; pass one array (or one block per device) per input.");
  }
  for (size_t i = 0; i < given.size(); ++i) {
    dsl::Array& wanted = inputs[i];
    const dsl::Array array =
        given[i].size() == 1 ? given[i][0]
                             : Assemble(entry, i, program.mesh(), program.in_specs()[i], given[i]);
    const bool convertible = dsl::IsFloating(array.dtype()) && dsl::IsFloating(wanted.dtype());
    if (array.shape() != wanted.shape() || (array.dtype() != wanted.dtype() && !convertible)) {
      std::string message = entry;
      message += ": input ";
      message += std::to_string(i);
      message += " is ";
      message += dsl::TypeString(array.dtype(), array.shape());
      message += ", and the entry takes ";
      message += dsl::TypeString(wanted.dtype(), wanted.shape());
      message += "; pass a global array of that shape (a floating one is rounded to its type).";
      throw Error(ErrorKind::kInvalidArgument, message);
    }
    if (array.dtype() == wanted.dtype()) {
      wanted = array;
      continue;
    }
    for (int64_t e = 0; e < wanted.size(); ++e)
      wanted.SetFlat(e, array.GetFlat(e));
  }
}

}  // namespace

KernelRunReport RunKernel(const KernelRunRequest& request) {
  const kernels::KernelInfo* info = &FindEntry("run", request.kernel);
  const dsl::Mesh mesh(request.topology);
  kernels::Params params = info->Bind(request.params);
  params.functional = request.config.functional;

  KernelRunReport report;
  report.kernel = request.kernel;
  report.kind = kernels::EntryKindName(info->kind);
  report.topology = request.topology.name();
  report.chips = topologies::ChipCount(request.topology);
  report.devices = static_cast<uint64_t>(mesh.devices());
  if (request.topology.has_chiplets()) report.devices_word = "devices";
  ReportProblem(params, mesh, request.topology, report);
  report.config = request.config;
  report.trace_path = request.trace_path;

  kernels::Workload workload = MakeWorkload(*info, mesh, params);
  const bool caller_inputs = !request.inputs.empty();
  if (caller_inputs) {
    if (!request.config.functional || !workload.timing_only_reason.empty()) {
      throw Error(ErrorKind::kInvalidArgument,
                  request.kernel +
                      ": inputs were given to a timing-only run, which moves no data; run it "
                      "functionally (without timing-only) or give no inputs.");
    }
    UseCallerInputs(request.kernel, request.inputs, workload.program, workload.inputs);
  }
  report.notes = workload.notes;
  if (!workload.timing_only_reason.empty()) {
    report.timing_only_reason = workload.timing_only_reason;
    report.config.functional = false;
  }
  RunFacts facts;
  facts.bound = info->BoundOf(mesh, params);
  facts.devices = mesh.devices();
  facts.cores_per_device = static_cast<int>(mesh.topology().chip().tensor_cores());
  report.bound_formula = facts.bound.formula;
  report.blocks = facts.bound.blocks;
  // Only entries sized by V over an axis (the bytes and axis parameters) have bandwidths.
  if (info->bus_factor && report.bytes > 0 && report.axis_size > 0) {
    facts.bandwidth_bytes = report.bytes;
    facts.bus_factor = info->BusFactor(report.axis_size);
  }

  std::unique_ptr<traces::TraceSink> trace;
  if (!request.trace_path.empty()) trace = traces::OpenTraceFile(request.trace_path);
  report.config.trace = trace.get();
  const auto started = std::chrono::steady_clock::now();
  const dsl::RunResult result = workload.program.Run(workload.inputs, report.config);
  facts.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  report.config.trace = nullptr;  // the sink closes with this function
  if (trace) trace->Finish();

  report.completed = result.ok;
  report.error_kind = result.error_kind;
  report.error = result.error;
  // The library names a run option as Python and sweeps do (wall_limit); on the command
  // line it is a flag.
  const bool name_flags = request.name_flags && !report.error.empty();
  for (const RunOptionName& option : name_flags ? RunOptionNames() : std::vector<RunOptionName>{}) {
    if (report.error.find("(" + option.name + ")") == std::string::npos) continue;
    report.error += " (flag ";
    report.error += option.flag;
    report.error += ")";
  }
  report.ops = result.op_times;
  report.collectives = result.collectives;
  report.critical_device = result.critical_device;
  report.busiest_link = BusiestLink(result);
  if (const auto contract = WorkloadContract(workload)) {
    report.contract = contract->Describe();
    report.specs = contract->Specs();
    report.out_dtype = contract->OutDtypes();
  }
  if (request.keep_outputs) {
    report.outputs = result.outputs;
    report.device_outputs = result.device_outputs;
  }
  if (result.ok && report.functional() && !caller_inputs) {
    const dsl::Comparison c = dsl::CheckAgainstReference(
        workload.program, result, workload.expected, workload.rtol, workload.atol);
    facts.checked = true;
    facts.correct = c.equal;
    report.mismatch = c.detail;
    if (request.name_flags && info->FindParam("precision") &&
        report.mismatch.find("(the entry's precision parameter") != std::string::npos) {
      report.mismatch += " (flag --precision HIGHEST)";
    }
  }
  report.metrics = Measure(result, facts);
  return report;
}

}  // namespace tpusim::cli
