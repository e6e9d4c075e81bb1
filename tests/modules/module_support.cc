#include "tests/modules/module_support.h"

#include <string>
#include <utility>

namespace tpusim::modules {

using base::CorePort;

void Elaborate() {
  // Nothing is scheduled yet, which is the point; SystemC would warn that nothing ran.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ID_NO_SC_START_ACTIVITY_,
                                          sc_core::SC_DO_NOTHING);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  sim::AnnounceMainStack();  // for AddressSanitizer (sim/systemc_context.h)
}

ChunkPayload::ChunkPayload(uint64_t address, uint64_t bytes, Picoseconds now, uint64_t transfer)
    : chunk_(new sim::ChunkExtension) {
  payload_.set_extension(chunk_);
  payload_.set_command(tlm::TLM_IGNORE_COMMAND);
  payload_.set_address(address);
  payload_.set_data_length(static_cast<unsigned int>(bytes));
  payload_.set_streaming_width(static_cast<unsigned int>(bytes));
  payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  chunk_->transfer = transfer;
  chunk_->label = &label_;
  chunk_->forward = false;  // as DmaEngine sends them: it calls every hop itself
  chunk_->schedule = sim::ChunkSchedule(now);
}

void ChunkPayload::Restart(Picoseconds now) {
  chunk_->schedule = sim::ChunkSchedule(now);
  chunk_->has_hop_start = false;
  chunk_->next_link = 0;
  payload_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

namespace {
base::ByteBox Whole(uint64_t bytes) {
  base::ByteBox box;
  box.counts = {bytes};
  box.strides = {1};
  return box;
}
}  // namespace

DmaRun::DmaRun(const config::Topology& topology, std::vector<DmaSpec> dmas,
               base::EngineOptions options)
    : simulation_(std::make_unique<sim::Simulation>(topology, std::move(options))),
      dmas_(std::move(dmas)) {
  for (size_t i = 0; i < dmas_.size(); ++i) {
    const DmaSpec& d = dmas_[i];
    const std::string name = "dma " + std::to_string(i);
    const base::BufferHandle source =
        d.reuse_source >= 0
            ? buffers_[static_cast<size_t>(d.reuse_source)].first
            : simulation_->Allocate(d.from, d.from_space, d.bytes, name + " source");
    buffers_.emplace_back(source,
                          simulation_->Allocate(d.to, d.to_space, d.bytes, name + " destination"));
    received_.push_back(simulation_->AddSemaphore(d.to, base::SemaphoreKind::kDma, name));
    if (d.after_previous && (i == 0 || dmas_[i - 1].to != d.from)) {
      ADD_FAILURE() << "DMA " << i << " starts after the previous one, which must land on its "
                    << "issuer (a local signal starts it)";
    }
  }
}

DmaRun::~DmaRun() {
  // The test's own modules go first, while their SystemC context is still there.
  while (!kept_.empty())
    kept_.pop_back();
  simulation_.reset();
}

void DmaRun::FillSource(size_t index, const std::vector<uint8_t>& bytes) {
  simulation_->WriteHost(buffers_[index].first, bytes.data(), bytes.size());
}

std::vector<uint8_t> DmaRun::ReadDestination(size_t index) {
  return simulation_->ReadHost(buffers_[index].second);
}

std::vector<Picoseconds> DmaRun::Run(bool expect_ok) {
  std::vector<Picoseconds> landed(dmas_.size(), 0);
  // The semaphore that starts DMA i, on its issuer, when it starts after the previous one.
  std::vector<base::SemaphoreHandle> go(dmas_.size());
  for (size_t i = 0; i < dmas_.size(); ++i) {
    if (dmas_[i].after_previous) {
      go[i] = simulation_->AddSemaphore(dmas_[i].from, base::SemaphoreKind::kRegular,
                                        "go " + std::to_string(i));
    }
  }
  outcome_ = simulation_->Run([&](CorePort& core) {
    std::vector<CorePort::ActivityId> activities;
    for (size_t i = 0; i < dmas_.size(); ++i) {
      if (dmas_[i].from != core.chip()) continue;
      activities.push_back(core.Spawn("start " + std::to_string(i), [&, i](CorePort& port) {
        if (dmas_[i].after_previous) port.Wait(go[i], 1, base::WaitKind::kSemaphore, "go");
        base::DmaRequest request;
        request.source = {buffers_[i].first, Whole(dmas_[i].bytes)};
        request.destination = {buffers_[i].second, Whole(dmas_[i].bytes)};
        request.recv_semaphore = received_[i];
        request.label = "dma " + std::to_string(i);
        port.StartDma(request);
      }));
    }
    for (size_t i = 0; i < dmas_.size(); ++i) {
      if (dmas_[i].to != core.chip()) continue;
      activities.push_back(core.Spawn("receive " + std::to_string(i), [&, i](CorePort& port) {
        port.Wait(received_[i], static_cast<int64_t>(dmas_[i].bytes), base::WaitKind::kDmaRecv,
                  "receive");
        landed[i] = port.Now();
        if (i + 1 < dmas_.size() && dmas_[i + 1].after_previous) port.Signal(go[i + 1], 1);
      }));
    }
    for (CorePort::ActivityId activity : activities)
      core.Join(activity);
  });
  if (expect_ok) {
    EXPECT_TRUE(outcome_.ok) << outcome_.error;
  }
  return landed;
}

std::vector<Picoseconds> TimeDmas(const config::Topology& topology,
                                  const std::vector<DmaSpec>& dmas, base::EngineOptions options) {
  DmaRun run(topology, dmas, std::move(options));
  return run.Run();
}

Picoseconds TimeDma(const config::Topology& topology, const DmaSpec& dma,
                    base::EngineOptions options) {
  return TimeDmas(topology, {dma}, std::move(options)).front();
}

base::EngineOptions TimingOnly() {
  base::EngineOptions options;
  options.functional = false;
  return options;
}

}  // namespace tpusim::modules
