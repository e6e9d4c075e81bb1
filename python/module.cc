// tpusim._core: the C++ half of the Python module tpusim (docs/python.md). It calls the
// entry points the CLI calls (tools/tpusim/kernel_run.h, common_options.h,
// same_computation.h) and hands back each run's report as the JSON `tpusim run --json`
// prints, so the Python classes read the same fields the CLI writes; numpy arrays cross
// for a functional run's inputs and outputs.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/errors.h"
#include "dsl/array.h"
#include "dsl/mesh.h"
#include "hlo/parser.h"
#include "hlo/run/entry.h"
#include "kernels/registry.h"
#include "tools/tpusim/cli.h"
#include "tools/tpusim/common_options.h"
#include "tools/tpusim/kernel_run.h"
#include "tools/tpusim/run_metrics.h"
#include "tools/tpusim/same_computation.h"
#include "topologies/topology_loader.h"

namespace py = pybind11;

namespace tpusim::python {

namespace {

// The Python exception of each failure, by ErrorKindName ("deadlock", "invalid argument"):
// tpusim/_errors.py defines the classes and says which kind each one is.
[[noreturn]] void RaiseKind(const std::string& kind, const std::string& message) {
  py::object error = py::module_::import("tpusim._errors").attr("error_for")(kind, message);
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw py::error_already_set();
}

// The library's exceptions as the CLI reports them (tools/tpusim/dispatch.cc, Main), minus
// the hint at `--help`, which names the command line's flags.
void TranslateErrors(std::exception_ptr failure) {
  try {
    if (failure) std::rethrow_exception(failure);
  } catch (const cli::UsageError& e) {
    RaiseKind(ErrorKindName(ErrorKind::kInvalidArgument), e.what());
  } catch (const kernels::ParamError& e) {
    RaiseKind(ErrorKindName(ErrorKind::kInvalidArgument), e.what());
  } catch (const topologies::TopologyError& e) {
    RaiseKind(ErrorKindName(ErrorKind::kInvalidArgument),
              std::string(e.what()) + " tpusim.topologies() lists the presets.");
  } catch (const Error& e) {
    RaiseKind(ErrorKindName(e.kind()), e.what());
  }
}

// Ctrl-C during a simulation: the handler sets the flag the run's interrupt check reads
// (RunConfig::interrupted, polled with the wall clock), the run ends as interrupted, and
// run() raises KeyboardInterrupt. Python's own handler is back once the run ends.
std::atomic<bool> interrupted{false};
extern "C" void OnInterrupt(int) {
  interrupted.store(true);
}

class InterruptScope {
 public:
  InterruptScope() {
    interrupted.store(false);
    struct sigaction action = {};
    action.sa_handler = OnInterrupt;
    sigemptyset(&action.sa_mask);
    installed_ = sigaction(SIGINT, &action, &previous_) == 0;
  }
  ~InterruptScope() {
    if (installed_) sigaction(SIGINT, &previous_, nullptr);
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct sigaction previous_ = {};
  bool installed_ = false;
};

kernels::ParamValues ToParamValues(const py::dict& params) {
  kernels::ParamValues values;
  for (const auto& [key, value] : params) {
    const std::string name = py::str(key);
    if (py::isinstance<py::bool_>(value)) {
      values.emplace(name, kernels::ParamValue(value.cast<bool>()));
    } else if (py::isinstance<py::int_>(value)) {
      values.emplace(name, kernels::ParamValue(value.cast<int64_t>()));
    } else if (py::isinstance<py::float_>(value)) {
      values.emplace(name, kernels::ParamValue(value.cast<double>()));
    } else {
      values.emplace(name, kernels::ParamValue(std::string(py::str(value))));
    }
  }
  return values;
}

// numpy's spelling of each dtype; ml_dtypes' bfloat16 is a 2-byte type named "bfloat16".
const std::map<std::string, dsl::DType>& NumpyDtypes() {
  static const std::map<std::string, dsl::DType> dtypes = {
      {"bfloat16", dsl::DType::kBF16}, {"float32", dsl::DType::kF32}, {"float16", dsl::DType::kF16},
      {"int32", dsl::DType::kInt32},   {"int8", dsl::DType::kInt8},   {"bool", dsl::DType::kBool},
      {"uint32", dsl::DType::kUInt32}, {"int64", dsl::DType::kInt64}};
  return dtypes;
}

dsl::Array ToArray(const py::array& given, size_t index) {
  const std::string name = py::str(given.dtype().attr("name"));
  const auto it = NumpyDtypes().find(name);
  if (it == NumpyDtypes().end()) {
    std::string known;
    for (const auto& [numpy_name, dtype] : NumpyDtypes())
      known += (known.empty() ? "" : ", ") + numpy_name;
    throw Error(ErrorKind::kInvalidArgument,
                "input " + std::to_string(index) + " has dtype " + name +
                    ", which tpusim does not take; convert it to one of " + known + ".");
  }
  const py::array contiguous = py::array::ensure(given, py::array::c_style);
  dsl::Shape shape(contiguous.shape(), contiguous.shape() + contiguous.ndim());
  dsl::Array array(shape, it->second);
  std::memcpy(array.data(), contiguous.data(), array.nbytes());
  return array;
}

// bf16 leaves as uint16 bits: the Python side views them as ml_dtypes.bfloat16, or
// widens them to float32 when that package is missing.
py::array ToNumpy(const dsl::Array& array) {
  std::string name;
  for (const auto& [numpy_name, dtype] : NumpyDtypes())
    if (dtype == array.dtype()) name = numpy_name;
  if (array.dtype() == dsl::DType::kBF16) name = "uint16";
  const py::dtype dtype(name);
  std::vector<py::ssize_t> shape(array.shape().begin(), array.shape().end());
  py::array result(dtype, shape);
  std::memcpy(result.mutable_data(), array.data(), array.nbytes());
  return result;
}

// The registry entry for the module in `text`, added once per distinct text: named after
// the module, with "#2", "#3"... when another text took that name.
std::string RegisterHloText(const std::string& text) {
  static std::map<std::string, std::string> names;  // text -> entry name
  if (const auto it = names.find(text); it != names.end()) return it->second;
  auto module = std::make_shared<const hlo::Module>(hlo::ParseModule(text, "<hlo text>"));
  kernels::Registry& registry = kernels::Registry::Get();
  std::string name = module->name;
  for (int n = 2; registry.Find(name); ++n)
    name = module->name + "#" + std::to_string(n);
  registry.AddFile(hlo::run::HloModuleEntry(module, name));
  names.emplace(text, name);
  return name;
}

// The entry for an HLO file, named by its path as the CLI names it (tools/tpusim/dispatch.cc).
std::string RegisterHloFile(const std::string& path) {
  kernels::Registry& registry = kernels::Registry::Get();
  if (!registry.Find(path)) registry.AddFile(hlo::run::HloModuleEntry(path));
  return path;
}

// The run as `tpusim run NAME --topology T --PARAM V... FLAGS... --trace PATH` runs it.
py::tuple Run(const std::string& name, const std::string& topology, const py::dict& params,
              const std::vector<std::string>& flags, const std::string& trace,
              const std::vector<std::vector<py::array>>& inputs, bool keep_outputs) {
  cli::KernelRunRequest request;
  if (topology.empty())
    throw Error(ErrorKind::kInvalidArgument, "give the slice: topology='v5e-2x2', for one.");
  request.topology = topologies::LoadTopology(topology);
  request.config = cli::ParseRunFlags("run", flags, &request.topology);
  request.kernel = name;
  request.params = ToParamValues(params);
  request.trace_path = trace;
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::vector<dsl::Array> arrays;  // the global array, or each device's block
    for (const py::array& array : inputs[i])
      arrays.push_back(ToArray(array, i));
    request.inputs.push_back(std::move(arrays));
  }
  request.keep_outputs = keep_outputs;
  request.name_flags = false;  // the library's message names the keyword (time_limit)
  request.config.interrupted = [] { return interrupted.load(std::memory_order_relaxed); };
  cli::FindEntry("run", name).Bind(request.params);  // every value checked before running
  cli::KernelRunReport report;
  {
    const InterruptScope scope;
    report = cli::RunKernel(request);
  }
  // A Ctrl-C that came as the run ended still interrupts the caller.
  if (interrupted.load()) {
    PyErr_SetString(PyExc_KeyboardInterrupt, report.completed ? "" : report.error.c_str());
    throw py::error_already_set();
  }
  py::list outputs, device_outputs;
  for (const auto& output : report.outputs)
    outputs.append(ToNumpy(output));
  for (const auto& per_device : report.device_outputs) {
    py::list devices;
    for (const auto& block : per_device)
      devices.append(ToNumpy(block));
    device_outputs.append(devices);
  }
  return py::make_tuple(report.ToJson().dump(), outputs, device_outputs);
}

// Each metric of a report as `tpusim run` prints it ("1.234 ms", "45.00 GB/s").
py::dict HumanMetrics(const std::string& report_json) {
  const cli::RunMetrics metrics = cli::ReadMetrics(nlohmann::ordered_json::parse(report_json));
  py::dict human;
  for (const cli::MetricField& field : cli::MetricFields())
    human[field.key] = cli::HumanValue(field, metrics);
  return human;
}

py::list MetricFields() {
  py::list fields;
  for (const cli::MetricField& field : cli::MetricFields()) {
    py::dict f;
    f["key"] = field.key;
    f["label"] = field.label;
    f["description"] = field.description;
    f["header"] = field.header;
    f["kind"] = field.kind == cli::MetricKind::kCheck   ? "check"
                : field.kind == cli::MetricKind::kCount ? "count"
                                                        : "number";
    fields.append(f);
  }
  return fields;
}

py::list RunOptions() {
  py::list options;
  for (const cli::RunOptionName& option : cli::RunOptionNames())
    options.append(py::make_tuple(option.name, option.flag, option.takes_value));
  return options;
}

py::list Topologies() {
  py::list presets;
  for (const auto& name : topologies::PresetNames()) {
    const auto t = topologies::LoadTopology(name);
    py::dict preset;
    preset["name"] = name;
    preset["chips"] = topologies::ChipCount(t);
    preset["devices"] = topologies::DeviceCount(t);
    preset["shape"] = topologies::ShapeString(t);
    py::list axes, wraparound;
    for (int i = 0; i < t.mesh().shape_size(); ++i) {
      axes.append(t.mesh().axis_names(i));
      wraparound.append(t.mesh().wraparound(i));
    }
    preset["axes"] = axes;
    preset["wraparound"] = wraparound;
    preset["twisted"] = t.mesh().twisted();
    preset["chip"] = t.chip().name();
    presets.append(preset);
  }
  return presets;
}

py::list Entries() {
  py::list entries;
  for (const auto& k : kernels::Registry::Get().kernels()) {
    py::dict entry;
    entry["name"] = k.name;
    entry["kind"] = kernels::EntryKindName(k.kind);
    entry["summary"] = k.summary;
    entry["family"] = k.family;
    entries.append(entry);
  }
  return entries;
}

bool IsEntry(const std::string& name) {
  return kernels::Registry::Get().Find(name) != nullptr;
}

// The names of the parameters entry `name` declares.
std::vector<std::string> EntryParams(const std::string& name) {
  std::vector<std::string> names;
  for (const auto& param : cli::FindEntry("run", name).params)
    names.push_back(param.name());
  return names;
}

std::vector<std::string> FamilyMembers(const std::string& name) {
  return kernels::Registry::Get().ExpandFamilies({name});
}

// compare's check that its entries compute one thing (tools/tpusim/same_computation.h).
void CheckSameComputation(const std::vector<std::string>& names, const std::string& topology,
                          const py::dict& params, const std::vector<std::string>& flags) {
  const base::RunConfig config = cli::ParseRunFlags("compare", flags);
  const dsl::Mesh mesh(topologies::LoadTopology(topology));
  cli::CheckSameComputation(cli::EntriesNamed("compare", names), mesh, ToParamValues(params),
                            config.functional);
}

}  // namespace

}  // namespace tpusim::python

// libsystemc calls sc_main from the main() it defines, and refers to it when it is loaded;
// Python has its own main(), so this one is never called. Each run builds its own SystemC
// context (sim/systemc_context.h).
extern "C" __attribute__((visibility("default"))) int sc_main(int, char**) {
  return 0;
}

PYBIND11_MODULE(_core, m) {
  using namespace tpusim::python;
  using tpusim::ErrorKind;
  m.doc() = "The C++ core of tpusim; use the package tpusim (docs/python.md).";
  py::register_exception_translator(TranslateErrors);
  m.def("run", &Run);
  m.def("human_metrics", &HumanMetrics);
  m.def("metric_fields", &MetricFields);
  m.def("run_options", &RunOptions);
  m.def("topologies", &Topologies);
  m.def("entries", &Entries);
  m.def("is_entry", &IsEntry);
  m.def("family_members", &FamilyMembers);
  m.def("entry_params", &EntryParams);
  m.def("is_hlo_path", &tpusim::hlo::run::IsHloPath);
  m.def("register_hlo_text", &RegisterHloText);
  m.def("register_hlo_file", &RegisterHloFile);
  m.def("check_same_computation", &CheckSameComputation);
  m.def("error_kinds", [] {
    std::vector<std::string> kinds;
    for (int k = 0; k <= static_cast<int>(tpusim::kLastErrorKind); ++k)
      kinds.push_back(tpusim::ErrorKindName(static_cast<ErrorKind>(k)));
    return kinds;
  });
}
