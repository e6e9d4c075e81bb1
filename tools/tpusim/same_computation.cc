#include "tools/tpusim/same_computation.h"

#include <algorithm>
#include <optional>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/run_memory.h"

namespace tpusim::cli {

namespace {

dsl::Array Converted(const dsl::Array& a, dsl::DType dtype) {
  dsl::Array out(a.shape(), dtype);
  for (int64_t i = 0; i < a.size(); ++i)
    out.SetFlat(i, a.GetFlat(i));
  return out;
}

// `reason` is the check that failed, a clause: the contracts alone may look alike (the
// references can differ).
[[noreturn]] void Refuse(const std::string& first_name, const Contract& first,
                         const std::string& name, const Contract& contract,
                         const std::string& reason) {
  std::string message = "'" + first_name + "' and '" + name;
  message += "' do not compute the same thing: " + reason + ".\n  " + first_name + ": ";
  message += first.Describe() + "\n  " + name + ": " + contract.Describe();
  message += "\ncompare schedules of one computation.";
  throw UsageError("compare", message);
}

}  // namespace

std::string ReferenceDifference(const kernels::Workload& first, const kernels::Workload& other) {
  for (size_t i = 0; i < first.inputs.size() && i < other.inputs.size(); ++i) {
    const dsl::Comparison c = dsl::CompareExact(other.inputs[i], first.inputs[i]);
    if (!c.equal) return "input " + std::to_string(i) + ": " + c.detail;
  }
  const double rtol = std::max(first.rtol, other.rtol);
  const double atol = std::max(first.atol, other.atol);
  for (size_t i = 0; i < first.expected.size() && i < other.expected.size(); ++i) {
    const dsl::Array& want = first.expected[i];
    const dsl::Array& got = other.expected[i];
    const dsl::Comparison c =
        got.dtype() == want.dtype()
            ? dsl::CompareClose(got, want, rtol, atol)
            : dsl::CompareClose(Converted(got, want.dtype()), want, rtol, atol);
    if (!c.equal) return "output " + std::to_string(i) + ": " + c.detail;
  }
  return "";
}

Contract CheckSameComputation(const std::vector<const kernels::KernelInfo*>& entries,
                              const dsl::Mesh& mesh, const kernels::ParamValues& given,
                              bool functional) {
  auto is_program = [](const kernels::KernelInfo& info) {
    return info.kind == kernels::EntryKind::kProgram;
  };
  const std::string& first_name = entries.at(0)->name;
  const bool first_program = is_program(*entries[0]);
  bool any_program = false;
  for (const auto* info : entries)
    any_program = any_program || is_program(*info);

  std::optional<Contract> first, first_kernel;
  std::string first_kernel_name;
  std::optional<kernels::Workload> first_workload;  // functional, when a reference is checked
  for (size_t i = 0; i < entries.size(); ++i) {
    const kernels::KernelInfo& info = *entries[i];
    const std::string& name = info.name;
    const bool program = is_program(info);
    kernels::Params params = info.Bind(given);
    params.functional = functional;
    // Every entry's functional run must fit, before any reference is built or run starts.
    if (functional && !ParseOnly()) RequireRunMemory(ShapesOnlyWorkload(info, mesh, params), false);
    const Contract contract = EntryContract(info, mesh, params);
    if (i == 0) {
      first = contract;
    } else if (contract.Problem() != first->Problem()) {
      Refuse(first_name, *first, name, contract,
             "their global input types or output shapes differ");
    }
    if (!program && !first_kernel) {
      first_kernel = contract;
      first_kernel_name = name;
    } else if (!program && contract.Shapes() != first_kernel->Shapes()) {
      Refuse(first_kernel_name, *first_kernel, name, contract,
             "their PartitionSpecs differ, and kernels must agree on them too (a kernel's "
             "blocks are its layout)");
    }
    // Only the types are known to agree so far: the references decide (not when only
    // parsing, as the CLI fuzzer does: they cost host time and memory).
    if (!functional || ParseOnly() || !(i == 0 ? any_program : program || first_program)) continue;
    kernels::Workload workload = MakeEntryWorkload(info, mesh, params);
    if (i == 0) {
      first_workload = std::move(workload);
      continue;
    }
    const std::string difference = ReferenceDifference(*first_workload, workload);
    if (!difference.empty()) {
      Refuse(first_name, *first, name, contract,
             "their types agree, but on the same inputs (docs/dsl.md, \"Inputs\") their host "
             "references differ ('" +
                 name + "' against '" + first_name + "'): " + difference);
    }
  }
  return *first;
}

}  // namespace tpusim::cli
