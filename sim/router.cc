#include "sim/router.h"

#include <cassert>
#include <optional>
#include <string>

#include "sim/chunk.h"
#include "sim/ici_link.h"
#include "sim/port_timing.h"

namespace tpusim::sim {

Router::Router(sc_core::sc_module_name name, ChipId chip, const Torus& torus, uint32_t cores)
    : sc_module(name),
      chip_(chip),
      memories_(MemorySlot(MemorySpace::kSmem, cores - 1) + 1),
      torus_(torus),
      in("in"),
      out("out") {
  const std::vector<LinkId> links = torus.LinksFrom(chip);
  link_count_ = static_cast<int>(links.size());
  if (!links.empty()) first_link_ = links.front();
  for (size_t i = 0; i < links.size(); ++i)
    assert(links[i] == first_link_ + i);
  targets_.assign(static_cast<size_t>(memories_) + links.size(), nullptr);
  direct_.assign(static_cast<size_t>(memories_) + links.size(), nullptr);
  links_.assign(links.size(), nullptr);
  in.bind(*this);
  out.bind(*this);
}

void Router::AttachLink(LinkId id, IciLink& link) {
  links_[id - first_link_] = &link;
}

void Router::KnowTarget(int output, tlm::tlm_fw_transport_if<>& target, TimedTarget& timed) {
  targets_[static_cast<size_t>(output)] = &target;
  direct_[static_cast<size_t>(output)] = &timed.chunk_timing();
}

void Router::end_of_elaboration() {
  for (int i = 0; i < out.size(); ++i) {
    const auto at = static_cast<size_t>(i);
    if (targets_[at] == out[i]) continue;  // KnowTarget's
    targets_[at] = out[i];
    auto* timed = dynamic_cast<TimedTarget*>(out[i]);
    direct_[at] = timed ? &timed->chunk_timing() : nullptr;
  }
}

int Router::OutputFor(uint64_t address, ChunkExtension* chunk) const {
  const ChipId destination = AddressChip(address);
  if (destination == chip_) return AddressSlot(address);
  if (chunk && chunk->route) {
    return memories_ + static_cast<int>(chunk->route[chunk->next_link++] - first_link_);
  }
  const int64_t link = torus_.NextLink(chip_, destination);
  assert(link >= 0);
  return memories_ + static_cast<int>(static_cast<LinkId>(link) - first_link_);
}

void Router::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  auto* chunk = payload.get_extension<ChunkExtension>();
  const int output = OutputFor(payload.get_address(), chunk);
  if (output >= memories_ || !chunk) {
    targets_[output]->b_transport(payload, delay);
    return;
  }
  if (chunk->signal) [[unlikely]] {  // arrived: the router changes the semaphore, no memory
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  } else {
    BookMemoryHop(*targets_[output], payload, *chunk);
  }
  delay = sc_core::sc_time::from_value(chunk->schedule.arrival() - chunk->schedule.now());
}

void Router::PathTo(uint64_t address, base::InlineVector<PathHop, 4>& path) {
  Router* at = this;
  while (true) {
    const ChipId destination = AddressChip(address);
    if (destination == at->chip_) {
      const auto output = static_cast<size_t>(AddressSlot(address));
      path.push_back(PathHop{at->direct_[output], at->targets_[output]});
      return;
    }
    // Each router takes the next link as a signal does: hop by hop they agree with the whole
    // route (Torus::NextLink, Torus::Route), and none is built per DMA.
    const auto link = static_cast<LinkId>(torus_.NextLink(at->chip_, destination));
    const size_t output = static_cast<size_t>(at->memories_) + (link - at->first_link_);
    path.push_back(PathHop{at->direct_[output], at->targets_[output]});
    at = &at->links_[link - at->first_link_]->next();
  }
}

void Router::SendSignal(uint64_t address, ChunkSchedule& schedule, bool through_tlm,
                        const std::string* label) {
  const ChipId destination = AddressChip(address);
  // Made only when a hop wants a transaction; it owns its extension.
  std::optional<tlm::tlm_generic_payload> payload;
  ChunkExtension* chunk = nullptr;
  for (Router* at = this; at->chip_ != destination;) {
    const auto link = static_cast<LinkId>(torus_.NextLink(at->chip_, destination));
    const size_t output = static_cast<size_t>(at->memories_) + (link - at->first_link_);
    if (at->direct_[output] && !through_tlm) {
      at->direct_[output]->BookSignal(schedule, kSignalBytes, label);
    } else {
      if (!payload) {
        payload.emplace();
        payload->set_command(tlm::TLM_IGNORE_COMMAND);
        payload->set_address(address);
        payload->set_data_length(static_cast<unsigned int>(kSignalBytes));
        chunk = new ChunkExtension;
        chunk->label = label;
        chunk->signal = true;
        chunk->forward = false;  // this router calls every hop itself
        payload->set_extension(chunk);
      }
      chunk->schedule = schedule;
      payload->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      at->targets_[output]->b_transport(*payload, delay);
      if (payload->is_response_error()) {
        std::string message = "the ";
        message += torus_.link(link).name;
        message += " link of " + torus_.Describe(at->chip_);
        message += " refused a semaphore signal to " + torus_.Describe(destination);
        message += " (" + payload->get_response_string();
        message +=
            "); a link model must accept TLM_IGNORE_COMMAND transactions whose ChunkExtension "
            "is a signal (sim/chunk.h).";
        throw Error(ErrorKind::kInvalidArgument, message);
      }
      schedule = chunk->schedule;
    }
    at = &at->links_[link - at->first_link_]->next();
  }
}

bool Router::get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) {
  return out[OutputFor(payload.get_address())]->get_direct_mem_ptr(payload, dmi);
}

unsigned int Router::transport_dbg(tlm::tlm_generic_payload& payload) {
  return out[OutputFor(payload.get_address())]->transport_dbg(payload);
}

void Router::invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
  for (int i = 0; i < in.size(); ++i)
    in[i]->invalidate_direct_mem_ptr(start, end);
}

std::vector<Parameter> Router::parameters() const {
  return {{"routing",
           torus_.twisted() ? "shortest over the twisted wraparound links" : "dimension-ordered"},
          {"links out", FormatCount(static_cast<uint64_t>(link_count_))}};
}

}  // namespace tpusim::sim
