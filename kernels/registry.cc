#include "kernels/registry.h"

#include <dlfcn.h>

#include <cctype>
#include <cmath>
#include <set>

#include "base/errors.h"
#include "base/registry.h"
#include "base/text.h"
#include "base/time.h"
#include "base/work.h"
#include "dsl/program/op_registry.h"

namespace tpusim::kernels {

Registry& Registry::Get() {
  static Registry registry;
  return registry;
}

namespace {

// Why the command line could not name `name` ("" when it can): `tpusim run NAME`.
std::string NameProblem(const std::string& name) {
  const auto plain = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  bool ok = !name.empty() && plain(name.front());
  for (char c : name)
    ok = ok && (plain(c) || c == '_' || c == '-' || c == '.' || c == '/');
  if (ok) return "";
  return "a name starts with a letter or digit and holds only letters, digits, '_', '-', '.' "
         "and '/', so that the command line can spell it";
}

}  // namespace

void Registry::Add(KernelInfo info) {
  if (const std::string problem = NameProblem(info.name); !problem.empty() && !info.name.empty()) {
    bad_declarations_.push_back(std::string(EntryKindName(info.kind)) + " '" + info.name +
                                "': " + problem);
    return;
  }
  AddFile(std::move(info));
}

void Registry::AddFile(KernelInfo info) {
  // Unsound entries are kept out and reported by CheckRegistrations: this runs in static
  // initialisers, where nothing can be thrown.
  const std::string kind = EntryKindName(info.kind);
  if (info.name.empty()) {
    bad_declarations_.push_back("a " + kind + " has an empty name; give it one");
    return;
  }
  if (info.name.front() == '-') {
    bad_declarations_.push_back(kind + " '" + info.name +
                                "': a name that starts with '-' reads as an option");
    return;
  }
  if (const std::string problem = NameProblem(info.family);
      !info.family.empty() && !problem.empty()) {
    bad_declarations_.push_back(kind + " '" + info.name + "' has family '" + info.family +
                                "': " + problem);
    return;
  }
  if (!info.make) {
    bad_declarations_.push_back(kind + " '" + info.name +
                                "' has no make function (KernelInfo::make is empty); give it "
                                "one that builds the workload");
    return;
  }
  for (size_t i = 0; i < info.params.size(); ++i) {
    std::string problem = info.params[i].Problem();
    for (size_t j = 0; j < i && problem.empty(); ++j) {
      if (info.params[j].name() == info.params[i].name())
        problem = "parameter '" + info.params[i].name() + "' is declared twice";
    }
    if (!problem.empty()) bad_declarations_.push_back(info.name + ": " + problem);
  }
  const std::string name = info.name;  // info moves into the registry
  // A taken name keeps its first entry; the registry records the clash.
  if (entries_.Add(name, std::move(info), kind)) registration_order_.push_back(name);
}

// Unchecked: CheckRegistrations reports clashes once, before the CLI names anything.
const KernelInfo* Registry::Find(const std::string& name) const {
  const auto it = entries_.entries().find(name);
  return it == entries_.entries().end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  for (const auto& entry : entries_.entries())
    names.push_back(entry.first);
  return names;
}

std::vector<std::string> Registry::FamilyMembers(const std::string& family) const {
  std::vector<std::string> members;
  if (family.empty()) return members;
  for (const auto& name : registration_order_) {
    if (Find(name)->family == family) members.push_back(name);
  }
  return members;
}

std::vector<std::string> Registry::Families() const {
  std::set<std::string> families;
  for (const KernelInfo& k : kernels()) {
    if (!k.family.empty()) families.insert(k.family);
  }
  return {families.begin(), families.end()};
}

std::vector<std::string> Registry::ExpandFamilies(const std::vector<std::string>& names) const {
  std::vector<std::string> expanded;
  for (const auto& name : names) {
    const std::vector<std::string> members =
        Find(name) ? std::vector<std::string>{} : FamilyMembers(name);
    if (members.empty()) {
      expanded.push_back(name);
    } else {
      expanded.insert(expanded.end(), members.begin(), members.end());
    }
  }
  return expanded;
}

const Param* KernelInfo::FindParam(const std::string& param) const {
  for (const auto& p : params) {
    if (p.name() == param) return &p;
  }
  return nullptr;
}

namespace {

void RequireSound(const KernelInfo& info, const char* what, double value, const char* unit = "") {
  if (std::isfinite(value) && value >= 0) return;
  throw Error(ErrorKind::kKernelMisuse,
              std::string(EntryKindName(info.kind)) + " '" + info.name + "': its " + what +
                  " gives " + base::NumberText(value) + unit +
                  ", but it must be a finite number of 0 or more (0: none). Fix the "
                  "entry's function.");
}

}  // namespace

Bound KernelInfo::BoundOf(const dsl::Mesh& mesh, const Params& given) const {
  if (!bound) return Bound{};
  Bound b = bound(mesh, given);
  RequireSound(*this, "bound (KernelInfo::bound)", b.seconds, " seconds");
  for (const auto& [what, value] :
       {std::pair{"bound's flops", b.flops}, std::pair{"bound's peak_flops", b.peak_flops},
        std::pair{"bound's hbm_bytes", b.hbm_bytes},
        std::pair{"bound's hbm_bytes_per_s", b.hbm_bytes_per_s}})
    RequireSound(*this, what, value);
  return b;
}

double KernelInfo::BusFactor(int axis_size) const {
  if (!bus_factor) return 0;
  const double factor = bus_factor(axis_size);
  RequireSound(*this, "bus_factor (KernelInfo::bus_factor)", factor);
  return factor;
}

const char* EntryKindName(EntryKind kind) {
  return kind == EntryKind::kProgram ? "program" : "kernel";
}

namespace {

// "'a'", "'a' and 'b'", "'a', 'b' and 'c'".
std::string QuotedList(const std::vector<std::string>& names) {
  std::string list;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i) list += i + 1 == names.size() ? " and " : ", ";
    list += "'" + names[i] + "'";
  }
  return list;
}

}  // namespace

void Registry::CheckRegistrations() const {
  const auto& duplicates = entries_.clashes();  // (kind, name)
  if (!duplicates.empty()) {
    // "kernel 'a' is", "kernels 'a' and 'b', and program 'c' are".
    std::string names;
    size_t previous = 0;
    for (const EntryKind kind : {EntryKind::kKernel, EntryKind::kProgram}) {
      std::vector<std::string> of_kind;
      for (const auto& [k, name] : duplicates) {
        if (k == EntryKindName(kind)) of_kind.push_back(name);
      }
      if (of_kind.empty()) continue;
      if (previous) names += previous > 1 ? ", and " : " and ";
      names += std::string(EntryKindName(kind)) + (of_kind.size() > 1 ? "s " : " ") +
               QuotedList(of_kind);
      previous = of_kind.size();
    }
    throw Error(ErrorKind::kInvalidArgument,
                names + (duplicates.size() > 1 ? " are" : " is") +
                    " registered twice; the first registration is kept. Every kernel and " +
                    "program needs its own name: rename the later one.");
  }
  if (!bad_declarations_.empty()) {
    std::string problems;
    for (const auto& problem : bad_declarations_)
      base::AppendListItem(problems, "; ", problem);
    throw Error(ErrorKind::kInvalidArgument,
                "unsound registrations: " + problems +
                    ". Fix them in the entries' KernelInfo (name, make, params).");
  }
}

void LoadKernelLibrary(const std::string& path) {
  // dlopen searches the library path for a bare file name; a user means the file here.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  static std::set<void*> loaded;
  Registry& registry = Registry::Get();
  // The program-op registry is built when first used (dsl/program/op_registry.h); built now,
  // the plugin's ops and call targets join it as they register, and a taken name is a clash
  // of this load.
  dsl::OpRegistry::Get();
  const size_t kernels_before = registry.Names().size();
  const size_t clashes_before = base::RegistrationClashes().size();
  dlerror();
  void* handle = nullptr;
  // The library's static initialisers run inside dlopen; what they throw comes out here.
  const auto threw = [&path](const std::string& what) {
    return Error(ErrorKind::kInvalidArgument,
                 "kernel library '" + path + "' threw while it loaded (in a static " +
                     "initialiser, such as a namespace-scope Registration): " + what +
                     ". Fix the plugin so that loading it cannot throw.");
  };
  // glibc declares dlopen noexcept, so a direct call would let the compiler drop these
  // handlers; through a volatile pointer it cannot assume anything.
  static void* (*volatile const open_library)(const char*, int) = &dlopen;
  try {
    handle = open_library(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  } catch (const std::exception& e) {
    throw threw(e.what());
  } catch (...) {
    throw threw("an exception that is not a std::exception");
  }
  if (!handle) {
    const char* reason = dlerror();
    throw Error(ErrorKind::kInvalidArgument,
                "cannot load kernel library '" + path + "': " + (reason ? reason : "unknown") +
                    ". Give the path of a shared library built against tpusim " +
                    "(find_package(tpusim), linked to tpusim::tpusim; see " +
                    "examples/user_kernel).");
  }
  if (!loaded.insert(handle).second) return;
  // The kernels' own report first: it names each entry with its kind in one sentence.
  try {
    registry.CheckRegistrations();
  } catch (const Error& e) {
    throw Error(ErrorKind::kInvalidArgument, "kernel library '" + path + "': " + e.what());
  }
  // A model, op or call target whose name was taken (base/registry.h).
  if (std::string clashes =
          base::RegistrationClashesSince(clashes_before, "kernel library '" + path + "': ");
      !clashes.empty()) {
    clashes += " A plugin's names must differ from the library's and from other plugins'.";
    throw Error(ErrorKind::kInvalidArgument, clashes);
  }
  if (registry.Names().size() == kernels_before) {
    throw Error(ErrorKind::kInvalidArgument,
                "kernel library '" + path + "' loaded but registered no kernel. A plugin " +
                    "registers each kernel with a namespace-scope " +
                    "tpusim::kernels::Registration, and must link tpusim::tpusim (shared) " +
                    "so it registers into the CLI's registry.");
  }
}

AxisLinks LinksOf(const dsl::Mesh& mesh, const std::string& axis) {
  const int a = mesh.AxisIndex(axis);
  const auto& topology = mesh.topology();
  AxisLinks links;
  links.size = mesh.shape()[a];
  links.wraparound = topology.mesh().wraparound(a);
  links.link_bytes_per_s = topology.ici().link_bandwidth_bytes_per_s();
  links.hop_latency_s = topology.ici().hop_latency_ns() * 1e-9;
  if (topology.has_multislice() && a == 0) {
    // The slice axis crosses the DCN: each chip gets its share of its host's NIC
    // (docs/model.md, "Multi-slice").
    links.link_bytes_per_s =
        topology.dcn().nic_bandwidth_bytes_per_s() / topology.dcn().chips_per_host();
    links.hop_latency_s = topology.dcn().latency_ns() * 1e-9;
  }
  if (topology.has_chiplets() && axis == topology.chiplets().axis_name()) {
    // The chiplet axis is the die-to-die link (docs/model.md, "Chiplets").
    links.link_bytes_per_s = topology.chiplets().d2d_bandwidth_bytes_per_s();
    links.hop_latency_s = topology.chiplets().d2d_latency_ns() * 1e-9;
  }
  return links;
}

std::vector<std::string> OtherAxes(const dsl::Mesh& mesh, const std::string& axis) {
  mesh.AxisIndex(axis);  // throws, naming the mesh's axes, when `axis` is not one of them
  std::vector<std::string> others;
  for (const auto& name : mesh.axis_names()) {
    if (name != axis) others.push_back(name);
  }
  return others;
}

double PeakMxuFlops(const dsl::Mesh& mesh) {
  return base::MxuPeakFlops(mesh.topology().chip());
}

}  // namespace tpusim::kernels
