#pragma once

// A chip's router (`slice.chip_1_3.router`): every DMA chunk of the chip, and every chunk
// passing through it, enters here and leaves towards the memory or the link the address
// calls for. Routes are dimension-ordered: the first axis on which the destination differs,
// the shorter way round an axis with wraparound (+ on a tie), the only way without.
//
// For a memory hop it also keeps the chunk's schedule (ChunkSchedule): it annotates the
// delay with when the chunk reaches the memory and records when the memory began and
// finished, so any LT target can stand in for a memory.

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "base/inline_vector.h"
#include "sim/base_names.h"
#include "sim/chunk.h"
#include "sim/loosely_timed.h"
#include "sim/parameters.h"
#include "sim/torus.h"

namespace tpusim::sim {

class ChunkExtension;
class ChunkTarget;
class IciLink;
class TimedTarget;

// One hop of a chunk's path: the target a DMA engine calls. Which hops are links follows
// from the position (Transfer::path).
struct PathHop {
  ChunkTarget* direct = nullptr;  // the target's own booking, when it is one of the model's
  tlm::tlm_fw_transport_if<>* target = nullptr;
};

class Router : public sc_core::sc_module,
               public LooselyTimedTarget,
               public LooselyTimedInitiator,
               public Described {
 public:
  // out[0 .. memories()-1] are the chip's memories by MemorySlot (HBM, then each core's
  // VMEM and SMEM), the links follow.
  Router(sc_core::sc_module_name name, ChipId chip, const Torus& torus, uint32_t cores = 1);
  int memories() const { return memories_; }

 private:
  // What every hop reads first, together: each chunk crosses several routers. Sized for the
  // chip's memories and links: up to 6 ICI ones, then a multi-slice chip's DCN ones (Torus).
  std::vector<tlm::tlm_fw_transport_if<>*> targets_;  // out's, once bound
  std::vector<ChunkTarget*> direct_;                  // targets_ that are the model's own
  std::vector<IciLink*> links_;                       // behind out[memories_ + i]
  ChipId chip_;
  int memories_ = 3;
  LinkId first_link_ = 0;  // this chip's outgoing links have consecutive ids
  int link_count_ = 0;
  const Torus& torus_;

 public:
  // From the chip's DMA engine and the links that reach this chip.
  tlm::tlm_target_socket<32, tlm::tlm_base_protocol_types, 0> in;
  // Bound by the chip: its memories in MemorySpace order, then its outgoing links in
  // Torus::LinksFrom order.
  tlm::tlm_initiator_socket<32, tlm::tlm_base_protocol_types, 0> out;

  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) override;
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) override;

  // Which of `out`'s targets a transaction to `address` leaves by; a chunk that carries its
  // route takes the route's next link.
  int OutputFor(uint64_t address, ChunkExtension* chunk = nullptr) const;

  // Appends the targets a transaction to `address` passes, from this router on, along the
  // links Torus::NextLink names hop by hop (the links of Torus::Route): what DMA engines learn
  // once per DMA, so that each chunk goes straight to its hops. Into a DMA's own list
  // (Transfer::path), which holds short paths inline. Call after elaboration.
  void PathTo(uint64_t address, base::InlineVector<PathHop, 4>& path);
  // Sends a semaphore signal from this chip to `address` (SignalAddress) along its route, hop
  // by hop, as a DMA engine sends a chunk: the model's own links book it directly, any other
  // target (or every one, with `through_tlm`) gets a transaction with a ChunkExtension whose
  // `signal` is set. `schedule` ends with when its head reaches the destination's router.
  // Throws Error(kInvalidArgument) when a link model refuses it.
  void SendSignal(uint64_t address, ChunkSchedule& schedule, bool through_tlm,
                  const std::string* label);
  // The link behind the output of outgoing link `id` (the chip wires it).
  void AttachLink(LinkId id, IciLink& link);
  // Output `output` is bound to `target`, one of the model's own modules, whose chunks book
  // through `timed`: end_of_elaboration takes that booking as it is instead of finding it
  // with a dynamic_cast (one per output of every chip). Another target bound there instead
  // is looked at as any other.
  void KnowTarget(int output, tlm::tlm_fw_transport_if<>& target, TimedTarget& timed);

  std::vector<Parameter> parameters() const override;

 protected:
  void end_of_elaboration() override;
};

}  // namespace tpusim::sim
