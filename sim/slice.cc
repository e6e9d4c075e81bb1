// The cores' threads are spawned by a method, which needs SystemC's dynamic processes.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "sim/slice.h"

#include <algorithm>
#include <functional>

#include "sim/chip.h"
#include "sim/compute_models.h"
#include "sim/core_thread.h"
#include "sim/dcn.h"
#include "sim/ici_link.h"
#include "sim/memory.h"
#include "sim/memory_models.h"
#include "sim/race_check.h"
#include "sim/reports.h"
#include "sim/router.h"
#include "sim/slowdown.h"
#include "sim/systemc_context.h"
#include "sim/tensor_core.h"
#include "topologies/chiplets.h"
#include "topologies/topology_loader.h"

namespace tpusim::sim {

Slice::Slice(sc_core::sc_module_name name, const config::Topology& topology, EngineOptions options)
    : sc_module(name), state_(topology, std::move(options)), ledger_(state_.run().traced()) {
  const Torus& torus = state_.torus();
  // Every chip's configuration first, so a bad one fails before any module exists.
  std::vector<config::ChipConfig> configs;
  configs.reserve(torus.chips());
  for (ChipId id = 0; id < torus.chips(); ++id) {
    configs.push_back(topologies::ChipAt(topology, torus.CoordsOf(id)));
    SlowChip(state_.run().options(), torus, id, configs.back());
    const config::ChipConfig& c = configs.back();
    ModelParameters unused;
    for (const auto& [memory, label] :
         {std::pair{&c.hbm(), "HBM"}, std::pair{&c.vmem(), "VMEM"}, std::pair{&c.smem(), "SMEM"}}) {
      MemoryModels::Resolve(*memory, std::string("the ") + label + " of " + torus.Describe(id),
                            unused);
    }
    ComputeModels::Build(c, torus.Describe(id));
  }
  if (torus.slices_over_dcn()) dcn_ = std::make_unique<Dcn>(state_, topology);
  for (ChipId id = 0; id < torus.chips(); ++id) {
    std::vector<LinkSetup> links;
    for (LinkId link : torus.LinksFrom(id)) {
      if (torus.IsDcn(link)) {
        links.push_back(LinkSetup{link, topology.dcn().nic_bandwidth_bytes_per_s(), dcn_->latency(),
                                  &dcn_->out(id), &dcn_->in(torus.link(link).to)});
        continue;
      }
      const auto settings = topologies::LinkAt(topology, torus.CoordsOf(id), torus.link(link).name);
      const Picoseconds latency = NanosecondsToTime(settings.latency_ns);
      links.push_back(LinkSetup{
          link,
          SlowedLinkBandwidth(state_.run().options(), torus, link, settings.bandwidth_bytes_per_s),
          latency});
      links.back().d2d = topologies::IsD2dDirection(topology, torus.link(link).name);
    }
    chips_.push_back(std::make_unique<Chip>(("chip_" + torus.grid().DescribeCoords(id)).c_str(),
                                            state_, ledger_, id, std::move(configs[id]), links));
    state_.AddChip(*chips_.back());
  }
  for (auto& chip : chips_) {
    for (const auto& link : chip->links())
      link->Connect(chips_[link->link().to]->router());
  }
  // Timing-only runs move no data, so nothing they do can read stale bytes.
  if (state_.run().functional() && state_.run().options().race_check) {
    // Each TensorCore is a thread of control with a clock of its own.
    std::vector<uint32_t> cores;
    cores.reserve(chips_.size());
    for (const auto& chip : chips_)
      cores.push_back(chip->core_count());
    state_.Observe(std::make_unique<RaceCheck>(
        cores, [this](const RaceReport& race) { state_.ReportRace(race); }));
  }
}

Slice::~Slice() {
  // SystemC's port and export registries find what they remove by searching back from the
  // newest entry (and its module registry, as sim/simulation.h arranges, at the front):
  // taking the chips down newest first keeps that constant time, where oldest first would
  // be quadratic in the size of the slice.
  while (!chips_.empty())
    chips_.pop_back();
}

BufferHandle Slice::Allocate(ChipId chip, MemorySpace space, uint64_t bytes,
                             const std::string& label, Uninitialized fill) {
  return BufferHandle{chip, space, chips_[chip]->memory(space).Allocate(bytes, label, fill)};
}

uint64_t Slice::BufferSize(BufferHandle buffer) {
  return state_.memory(buffer).Size(buffer.index);
}

void Slice::WriteHost(BufferHandle buffer, const void* data, uint64_t size) {
  state_.memory(buffer).WriteAll(buffer.index, data, size);
}

void Slice::CopyHost(BufferHandle from, BufferHandle to) {
  state_.memory(to).ShareAll(to.index, state_.memory(from), from.index);
}

std::vector<uint8_t> Slice::ReadHost(BufferHandle buffer) {
  return state_.memory(buffer).ReadAll(buffer.index);
}

std::shared_ptr<std::vector<uint8_t>> Slice::TakeHost(BufferHandle buffer) {
  BlockBytes taken = state_.memory(buffer).TakeBlocks(buffer.index);
  std::vector<const uint8_t*> key;
  for (const Block& block : taken.blocks()) {
    if (!block) break;  // bytes never written read as the buffer's own fill pattern
    key.push_back(block.get());
  }
  if (key.empty() || key.size() != taken.blocks().size())
    return std::make_shared<std::vector<uint8_t>>(taken.ReadAll());
  HandedOff& handed = handed_off_[std::move(key)];
  if (!handed.bytes) {
    handed.bytes = std::make_shared<std::vector<uint8_t>>(taken.ReadAll());
    handed.blocks = std::move(taken);
  }
  return handed.bytes;
}

SemaphoreHandle Slice::AddSemaphore(ChipId chip, SemaphoreKind kind, const std::string& name) {
  return chips_[chip]->AddSemaphore(kind, name);
}

RunOutcome Slice::Run(const Engine::CoreProgram& program, const std::string& name) {
  if (ran_) throw Error(ErrorKind::kInvalidArgument, "a slice runs once; build a new one.");
  ran_ = true;
  RunContext& run = state_.run();
  run.set_run_name(name);
  state_.TakeCoreThreads();  // before SystemC makes a stack
  // The cores' threads are spawned by a method at time 0 (TensorCore::Start says why), in
  // chip order, the order SystemC's initialization ran them in when they were spawned before.
  sc_core::sc_spawn_options start_options;
  start_options.spawn_method();
  sc_core::sc_spawn(
      [this, &program] {
        for (auto& chip : chips_)
          chip->core().Start(program);
      },
      "tpusim_start_cores", &start_options);
  sc_core::sc_start(sc_core::sc_time::from_value(run.options().time_limit),
                    sc_core::SC_EXIT_ON_STARVATION);
  AnnounceMainStack();

  if (!run.failed()) {
    const auto& cores = state_.cores();
    const bool all_finished =
        std::all_of(cores.begin(), cores.end(), [](const CoreThread* c) { return c->finished(); });
    if (!all_finished && sc_core::sc_pending_activity()) {
      run.Fail(ErrorKind::kTimeLimit, TimeLimitReport(state_));
    } else if (!all_finished) {
      run.Fail(ErrorKind::kDeadlock, DeadlockReport(state_, EventQueue::Now()));
    } else {
      CheckSemaphoresAtExit(state_);
    }
  }
  if (run.failed()) CloseTraces();
  for (auto& chip : chips_) {
    for (const auto& link : chip->links()) {
      if (!link->over_dcn()) link->port().FlushTrace();
    }
  }
  if (dcn_) dcn_->FlushTrace();
  for (auto& chip : chips_) {
    for (int s = 0; s < chip->memory_count(); ++s)
      chip->memory_at(s).port().FlushTrace();
  }

  RunOutcome outcome;
  outcome.ok = !run.failed();
  if (run.failed()) {
    outcome.error_kind = run.error_kind();
    outcome.error = run.error();
  }
  outcome.stats = CollectStats();
  return outcome;
}

void Slice::CloseTraces() {
  const Picoseconds now = EventQueue::Now();
  const std::string why = std::string("FAILED: ") + ErrorKindName(state_.run().error_kind());
  for (CoreThread* core : state_.cores()) {
    if (!core->finished()) core->CloseTrace(now, why);
  }
  for (auto& activity : state_.activities()) {
    if (!activity->finished()) activity->CloseTrace(now, why);
  }
  traces::TraceSink& trace = state_.run().trace();
  for (const auto& transfer : ledger_.transfers()) {
    const Transfer& t = *transfer;
    if (t.channel >= 0 && t.sent < t.bytes)
      trace.End(chips_[t.issuer]->tracks().dma_channels[t.channel], now);
    if (t.channel >= 0 && t.flow && t.landed < t.bytes) {
      trace.Instant(chips_[t.request.destination.buffer.chip]->tracks().dma_arrivals, now,
                    "never arrived: " + t.request.label.str(), {}, 0, t.flow);
    }
  }
}

RunStats Slice::CollectStats() {
  RunStats stats = state_.run().stats();
  stats.events = state_.calendar().callbacks_run();
  for (const CoreThread* core : state_.cores()) {
    stats.cores.push_back(core->stats());
    stats.end_time = std::max(stats.end_time, core->stats().finish);
  }
  for (auto& chip : chips_) {
    for (const auto& link : chip->links()) {
      if (link->over_dcn()) continue;  // the NICs below
      stats.links.push_back(link->port().Stats(chip->id()));
    }
  }
  if (dcn_) dcn_->AddStats(stats.nics);
  for (auto& chip : chips_) {
    for (int s = 0; s < chip->memory_count(); ++s) {
      Memory& memory = chip->memory_at(s);
      auto& port = memory.port();
      stats.memories.push_back(port.Stats(chip->id()));
      stats.unwritten_reads.insert(stats.unwritten_reads.end(), memory.unwritten_reads().begin(),
                                   memory.unwritten_reads().end());
    }
  }
  return stats;
}

namespace {
// "chips=16", or on chips of chiplets (config::ChipletConfig), where the mesh counts devices,
// "devices=8 (4 chips of 2)".
Parameter CountParameter(const config::Topology& t, uint32_t devices) {
  if (!t.has_chiplets()) return {"chips", FormatCount(devices)};
  std::string value = FormatCount(devices);
  value += " (";
  value += FormatCount(devices / t.chiplets().count());
  value += " chips of ";
  value += std::to_string(t.chiplets().count());
  value += ')';
  return {"devices", value};
}
}  // namespace

std::vector<Parameter> Slice::parameters() const {
  const auto& t = state_.topology();
  std::string axes;
  for (int a = 0; a < state_.torus().axes(); ++a) {
    axes += (a ? ", " : "") + state_.torus().axis_names()[a] + ":" +
            std::to_string(state_.torus().axis_size(a)) +
            (state_.torus().wraparound(a) ? " (wraps)" : "");
  }
  std::vector<Parameter> parameters = {
      {"topology", t.name()},
      {"mesh", axes},
      CountParameter(t, state_.torus().chips()),
      {"signal", FormatTime(state_.signal_latency())},
      {"forwarding", state_.store_and_forward() ? "store-and-forward" : "cut-through"}};
  if (dcn_) {
    std::string nic = FormatRate(t.dcn().nic_bandwidth_bytes_per_s());
    nic += " per host of ";
    nic += std::to_string(t.dcn().chips_per_host());
    nic += " chips, ";
    nic += FormatTime(dcn_->latency());
    parameters.push_back({"dcn", nic});
  }
  return parameters;
}

std::string DescribeTree(const sc_core::sc_object& root, int depth, bool recurse) {
  std::string text;
  std::function<void(const sc_core::sc_object&, int)> walk = [&](const sc_core::sc_object& object,
                                                                 int depth) {
    if (!dynamic_cast<const sc_core::sc_module*>(&object)) return;
    text += std::string(2 * depth, ' ') + object.basename();
    if (const auto* described = dynamic_cast<const Described*>(&object)) {
      for (const Parameter& p : described->parameters())
        text += "  " + p.name + "=" + p.value;
    }
    text += "\n";
    if (!recurse) return;
    for (const sc_core::sc_object* child : object.get_child_objects())
      walk(*child, depth + 1);
  };
  walk(root, depth);
  return text;
}

}  // namespace tpusim::sim
