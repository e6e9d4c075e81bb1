#include "sim/chip.h"

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
}  // namespace

ChipTracks Chip::MakeTracks(SliceState& slice, ChipId id, const config::ChipConfig& config,
                            const std::vector<LinkSetup>& links) {
  traces::TraceSink& trace = slice.trace();
  const Torus& torus = slice.torus();
  ChipTracks t;
  t.chip = trace.AddProcessTrack(torus.Describe(id), static_cast<int>(id));
  int rank = 0;
  t.core = trace.AddTrack(t.chip, "core", rank++);
  t.mxu = trace.AddTrack(t.chip, "MXU", rank++);
  t.vpu = trace.AddTrack(t.chip, "VPU", rank++);
  for (uint32_t e = 0; e < config.dma().engines(); ++e)
    t.dma_channels.push_back(trace.AddTrack(t.chip, "DMA " + std::to_string(e), rank++));
  t.dma_arrivals = trace.AddTrack(t.chip, "DMA arrivals", rank++);
  t.hbm = trace.AddTrack(t.chip, "HBM port", rank++);
  t.vmem = trace.AddTrack(t.chip, "VMEM port", rank++);
  t.smem = trace.AddTrack(t.chip, "SMEM port", rank++);
  for (const LinkSetup& link : links) {
    if (link.nic_out) continue;  // its host's NIC has the track (sim/dcn.h)
    t.links.push_back(trace.AddTrack(t.chip, "ICI " + torus.link(link.id).name + " out", rank++));
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
      tracks_(MakeTracks(slice, id, config_, links)) {
  const Torus& torus = slice.torus();
  const std::string owner = torus.Describe(id);
  // Untraced, the ports keep no trace and need no DMA's label once it has landed.
  traces::TraceSink* trace = slice.traced() ? &slice.trace() : nullptr;
  const config::MemoryConfig* configs[] = {&config_.hbm(), &config_.vmem(), &config_.smem()};
  const traces::TrackId port_tracks[] = {tracks_.hbm, tracks_.vmem, tracks_.smem};
  for (int s = 0; s < 3; ++s) {
    auto& timing = slice.hot().Make<MemoryPortTiming>(
        owner + " " + MemorySpaceName(static_cast<MemorySpace>(s)),
        configs[s]->bandwidth_bytes_per_s(), trace, port_tracks[s]);
    memories_[s] =
        std::make_unique<Memory>(kMemoryNames[s], id, owner, static_cast<MemorySpace>(s),
                                 configs[s]->capacity_bytes(), slice.functional(), timing);
  }
  core_ = std::make_unique<TensorCore>("core", slice, *this, config_, tracks_.core);
  dma_ = std::make_unique<DmaEngine>("dma", slice, ledger, *this, config_.dma().engines(),
                                     config_.dma().chunk_bytes(),
                                     NanosecondsToTime(config_.dma().issue_latency_ns()));
  router_ = std::make_unique<Router>("router", id, torus);
  dma_->socket.bind(router_->in);
  for (size_t i = 0; i < links.size(); ++i) {
    const Link& link = torus.link(links[i].id);
    if (links[i].nic_out) {
      AddDcnLink(links[i].id, *links[i].nic_out, *links[i].nic_in);
      continue;
    }
    auto& timing =
        slice.hot().Make<LinkTiming>(owner + " ICI " + link.name, links[i].bytes_per_second,
                                     links[i].latency, trace, tracks_.links[i]);
    links_.push_back(std::make_unique<IciLink>(("ici_" + link.name).c_str(), link, timing,
                                               "chip_" + torus.grid().DescribeCoords(link.to)));
    router_->AttachLink(links[i].id, *links_.back());
  }
  for (int s = 0; s < 3; ++s) {
    const auto space = static_cast<MemorySpace>(s);
    const std::string what = std::string("the ") + MemorySpaceName(space) + " of " + owner;
    ModelParameters parameters;
    const MemoryModel& model = MemoryModels::Resolve(*configs[s], what, parameters);
    if (!model.build) continue;  // "bandwidth": the memory's own port
    MemoryTarget target = model.build((std::string(kMemoryNames[s]) + "_" + model.name).c_str(),
                                      *memories_[s], parameters);
    UseMemoryTarget(space, *target.socket, model.name);
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

Chip::~Chip() {
  // Newest module first, as ~Slice explains.
  while (!memory_models_.empty())
    memory_models_.pop_back();
  while (!links_.empty())
    links_.pop_back();
}

void Chip::UseMemoryTarget(MemorySpace space, tlm::tlm_base_target_socket_b<>& target,
                           const std::string& model) {
  memory_targets_[static_cast<size_t>(space)] = &target;
  memory(space).set_timing_model(model);
}

void Chip::before_end_of_elaboration() {
  // The router's outputs, in the order Router::OutputFor numbers them.
  for (int s = 0; s < 3; ++s) {
    if (memory_targets_[s]) {
      router_->out.bind(*memory_targets_[s]);
    } else {
      router_->out.bind(memories_[s]->socket);
    }
  }
  for (auto& link : links_)
    // Port to export: the link has no backward path to bind (IciLink::in).
    static_cast<sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>&>(router_->out).bind(link->in);
}

SemaphoreHandle Chip::AddSemaphore(SemaphoreKind kind, const std::string& name) {
  auto& semaphores = slice_.semaphores(id_);
  semaphores.emplace_back(name, kind);
  Semaphore& s = semaphores.back();
  // Watching a semaphore's value over time is how a user sees who waits for whom; only
  // worth the tracks when a trace is written.
  if (slice_.trace_requested()) {
    s.set_counter_track(slice_.trace().AddCounterTrack(tracks_.chip, std::string("sem ") + name,
                                                       traces::CounterUnit::kCount,
                                                       1000 + static_cast<int>(semaphores.size())));
    slice_.trace().Counter(s.counter_track(), EventQueue::Now(), 0);
  }
  return SemaphoreHandle{id_, static_cast<uint32_t>(semaphores.size() - 1)};
}

std::vector<Parameter> Chip::parameters() const {
  return {{"id", FormatCount(id_)}, {"name", config_.name()}};
}

}  // namespace tpusim::sim
