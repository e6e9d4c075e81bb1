#include "sim/chip.h"

#include <algorithm>

#include "sim/dcn.h"
#include "sim/dma_engine.h"
#include "sim/ici_link.h"
#include "sim/memory.h"
#include "sim/memory_models.h"
#include "sim/port_timing.h"
#include "sim/router.h"
#include "sim/slice_state.h"
#include "sim/tensor_core.h"

namespace tpusim::sim {

namespace {
const char* kMemoryNames[] = {"hbm", "vmem", "smem"};

// Core 0's modules keep the names a single-core chip has ("core", "vmem"); core 1's are
// "core_1", "vmem_1".
std::string CoreModuleName(const char* base, uint32_t core) {
  std::string name = base;
  if (core > 0) {
    name += '_';
    name += std::to_string(core);
  }
  return name;
}

// "VMEM port" on a single-core chip, "VMEM 1 port" on a chip of several.
std::string CoreTrackName(const char* base, uint32_t core, uint32_t cores, const char* tail = "") {
  std::string name = base;
  if (cores > 1) {
    name += ' ';
    name += std::to_string(core);
  }
  name += tail;
  return name;
}
}  // namespace

ChipTracks Chip::MakeTracks(SliceState& slice, ChipId id, const config::ChipConfig& config,
                            const std::vector<LinkSetup>& links) {
  traces::TraceSink& trace = slice.run().trace();
  const Torus& torus = slice.torus();
  const uint32_t cores = config.tensor_cores();
  ChipTracks t;
  t.chip = trace.AddProcessTrack(torus.Describe(id), static_cast<int>(id));
  int rank = 0;
  t.cores.resize(cores);
  for (uint32_t c = 0; c < cores; ++c) {
    t.cores[c].core = trace.AddTrack(t.chip, CoreTrackName("core", c, cores), rank++);
    t.cores[c].mxu = trace.AddTrack(t.chip, CoreTrackName("MXU", c, cores), rank++);
    t.cores[c].vpu = trace.AddTrack(t.chip, CoreTrackName("VPU", c, cores), rank++);
  }
  for (uint32_t e = 0; e < config.dma().engines(); ++e)
    t.dma_channels.push_back(trace.AddTrack(t.chip, "DMA " + std::to_string(e), rank++));
  t.dma_arrivals = trace.AddTrack(t.chip, "DMA arrivals", rank++);
  t.hbm = trace.AddTrack(t.chip, "HBM port", rank++);
  for (uint32_t c = 0; c < cores; ++c) {
    t.cores[c].vmem = trace.AddTrack(t.chip, CoreTrackName("VMEM", c, cores, " port"), rank++);
    t.cores[c].smem = trace.AddTrack(t.chip, CoreTrackName("SMEM", c, cores, " port"), rank++);
  }
  for (const LinkSetup& link : links) {
    if (link.nic_out) continue;  // its host's NIC has the track (sim/dcn.h)
    std::string name = link.d2d ? "D2D " : "ICI ";
    name += torus.link(link.id).name;
    name += " out";
    t.links.push_back(trace.AddTrack(t.chip, name, rank++));
  }
  t.bytes_in_flight =
      trace.AddCounterTrack(t.chip, "DMA bytes in flight", traces::CounterUnit::kBytes, rank++);
  return t;
}

Chip::Chip(sc_core::sc_module_name name, SliceState& slice, DmaLedger& ledger, ChipId id,
           config::ChipConfig config, const std::vector<LinkSetup>& links)
    : sc_module(name),
      slice_(slice),
      id_(id),
      config_(std::move(config)),
      tracks_(MakeTracks(slice, id, config_, links)),
      semaphores_(slice.TakeChipSemaphores(id)) {
  const Torus& torus = slice.torus();
  const uint32_t cores = config_.tensor_cores();
  // Described once: every memory's and link's name starts with it.
  const std::string owner = torus.Describe(id);
  // Untraced, the ports keep no trace and need no DMA's label once it has landed.
  traces::TraceSink* trace = slice.run().traced() ? &slice.run().trace() : nullptr;
  const config::MemoryConfig* configs[] = {&config_.hbm(), &config_.vmem(), &config_.smem()};
  const int slots = MemorySlot(MemorySpace::kSmem, cores - 1) + 1;
  memory_targets_.assign(static_cast<size_t>(slots), nullptr);
  for (int slot = 0; slot < slots; ++slot) {
    const MemorySpace space = SlotSpace(slot);
    const uint32_t core = SlotCore(slot);
    const auto s = static_cast<size_t>(space);
    std::string described = space == MemorySpace::kHbm ? owner : DescribeCore(owner, core);
    const traces::TrackId track = space == MemorySpace::kHbm    ? tracks_.hbm
                                  : space == MemorySpace::kVmem ? tracks_.cores[core].vmem
                                                                : tracks_.cores[core].smem;
    auto& timing =
        slice.hot().Make<MemoryPortTiming>(described + " " + MemorySpaceName(space),
                                           configs[s]->bandwidth_bytes_per_s(), trace, track);
    memories_.push_back(std::make_unique<Memory>(
        CoreModuleName(kMemoryNames[s], core).c_str(), id, std::move(described), space,
        configs[s]->capacity_bytes(), slice.run().functional(), timing, core));
  }
  for (uint32_t c = 0; c < cores; ++c) {
    cores_.push_back(std::make_unique<TensorCore>(CoreModuleName("core", c).c_str(), slice, *this,
                                                  config_, tracks_.cores[c], c));
  }
  dma_ = std::make_unique<DmaEngine>("dma", slice, ledger, *this, config_.dma().engines(),
                                     config_.dma().chunk_bytes(),
                                     NanosecondsToTime(config_.dma().issue_latency_ns()));
  router_ = std::make_unique<Router>("router", id, torus, cores);
  dma_->socket.bind(router_->in);
  for (size_t i = 0; i < links.size(); ++i) {
    const Link& link = torus.link(links[i].id);
    if (links[i].nic_out) {
      AddDcnLink(links[i].id, *links[i].nic_out, *links[i].nic_in);
      continue;
    }
    const bool d2d = links[i].d2d;
    auto& timing = slice.hot().Make<LinkTiming>(owner + (d2d ? " D2D " : " ICI ") + link.name,
                                                links[i].bytes_per_second, links[i].latency, trace,
                                                tracks_.links[i]);
    std::string module = d2d ? "d2d_" : "ici_";
    module += link.name;
    links_.push_back(std::make_unique<IciLink>(module.c_str(), link, timing,
                                               "chip_" + torus.grid().DescribeCoords(link.to)));
    router_->AttachLink(links[i].id, *links_.back());
  }
  for (int slot = 0; slot < slots; ++slot) {
    const MemorySpace space = SlotSpace(slot);
    const uint32_t core = SlotCore(slot);
    const auto s = static_cast<size_t>(space);
    const std::string what = std::string("the ") + MemorySpaceName(space) + " of " +
                             (space == MemorySpace::kHbm ? owner : DescribeCore(owner, core));
    ModelParameters parameters;
    const MemoryModel& model = MemoryModels::Resolve(*configs[s], what, parameters);
    if (!model.build) continue;  // "bandwidth": the memory's own port
    MemoryTarget target =
        model.build((CoreModuleName(kMemoryNames[s], core) + "_" + model.name).c_str(),
                    memory_at(slot), parameters);
    UseMemoryTarget(space, *target.socket, model.name, core);
    memory_models_.push_back(std::move(target.module));
  }
}

void Chip::AddDcnLink(LinkId id, LinkTiming& out, LinkTiming& in) {
  const Link& link = slice_.torus().link(id);
  auto& booking = slice_.hot().Make<DcnHopTiming>(out, in);
  links_.push_back(
      std::make_unique<IciLink>(("dcn_" + link.name).c_str(), link, out,
                                "chip_" + slice_.torus().grid().DescribeCoords(link.to), &booking));
  router_->AttachLink(id, *links_.back());
}

std::string Chip::DescribeCore(uint32_t core) const {
  return DescribeCore(slice_.torus().Describe(id_), core);
}

std::string Chip::DescribeCore(std::string chip, uint32_t core) const {
  if (config_.tensor_cores() > 1) {
    chip += " core ";
    chip += std::to_string(core);
  }
  return chip;
}

Chip::~Chip() {
  // Newest module first, as ~Slice explains: all of them, in the reverse of the order the
  // constructor made them. A vector of modules left to its own destructor goes oldest first,
  // which made every chip's first memory a search through the rest of the slice (3% of a
  // v5p pod run).
  while (!memory_models_.empty())
    memory_models_.pop_back();
  while (!links_.empty())
    links_.pop_back();
  router_.reset();
  dma_.reset();
  while (!cores_.empty())
    cores_.pop_back();
  while (!memories_.empty())
    memories_.pop_back();
}

void Chip::UseMemoryTarget(MemorySpace space, tlm::tlm_base_target_socket_b<>& target,
                           const std::string& model, uint32_t core) {
  memory_targets_[static_cast<size_t>(MemorySlot(space, core))] = &target;
  memory(space, core).set_timing_model(model);
}

void Chip::before_end_of_elaboration() {
  // The router's outputs, in the order Router::OutputFor numbers them.
  int output = 0;
  for (size_t s = 0; s < memories_.size(); ++s, ++output) {
    if (memory_targets_[s]) {
      router_->out.bind(*memory_targets_[s]);
    } else {
      router_->out.bind(memories_[s]->socket);
      router_->KnowTarget(output, *memories_[s], *memories_[s]);
    }
  }
  for (size_t i = 0; i < links_.size(); ++i, ++output) {
    if (i < link_targets_.size() && link_targets_[i]) {
      router_->out.bind(*link_targets_[i]);
      continue;
    }
    // Port to export: the link has no backward path to bind (IciLink::in).
    static_cast<sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>&>(router_->out).bind(links_[i]->in);
    router_->KnowTarget(output, *links_[i], *links_[i]);
  }
}

void Chip::UseLinkTarget(LinkId id, tlm::tlm_base_target_socket_b<>& target) {
  const std::vector<LinkId> links = slice_.torus().LinksFrom(id_);
  const auto at = std::find(links.begin(), links.end(), id);
  if (at == links.end()) {
    std::string message = "link ";
    message += std::to_string(id);
    message += " does not leave " + slice_.torus().Describe(id_);
    message += "; bind a link model on the chip the link leaves (Torus::LinksFrom).";
    throw Error(ErrorKind::kInvalidArgument, message);
  }
  link_targets_.resize(links_.size(), nullptr);
  link_targets_[static_cast<size_t>(at - links.begin())] = &target;
}

SemaphoreHandle Chip::AddSemaphore(SemaphoreKind kind, const std::string& name) {
  auto& semaphores = semaphores_.semaphores;
  semaphores.emplace_back(&slice_.SemaphoreName(name), kind);
  Semaphore& s = semaphores.back();
  // Watching a semaphore's value over time is how a user sees who waits for whom; only
  // worth the tracks when a trace is written.
  if (slice_.run().trace_requested()) {
    s.set_counter_track(slice_.run().trace().AddCounterTrack(
        tracks_.chip, std::string("sem ") + name, traces::CounterUnit::kCount,
        1000 + static_cast<int>(semaphores.size())));
    slice_.run().trace().Counter(s.counter_track(), EventQueue::Now(), 0);
  }
  return SemaphoreHandle{id_, static_cast<uint32_t>(semaphores.size() - 1)};
}

std::vector<Parameter> Chip::parameters() const {
  return {{"id", FormatCount(id_)}, {"name", config_.name()}};
}

}  // namespace tpusim::sim
