#pragma once

// "row_buffer": a DRAM timing model for a memory's port, an alternative to "bandwidth".
//
// The memory's address space is cut into rows of `row_bytes`, spread over `banks` banks
// (row r lives in bank r mod banks), and each bank keeps one row open. A chunk reads or
// writes the contiguous range its address and length give; every row it touches that is not
// open in its bank must be opened first, which costs `row_miss_ns`, and banks open rows in
// parallel. So a chunk of B bytes that opens M rows holds the port for
//
//     B / bandwidth  +  M x row_miss_ns / banks
//
// (rounded down to whole picoseconds), in the earliest free gap at or after the time it
// reaches the memory, as the bandwidth model's chunks do. Rows stay open until another row
// of their bank is opened: chunks that revisit the open rows pay bandwidth only.
//
// The defaults are illustrative, not calibrated on a chip: HBM pages of 1-2 KiB and row
// cycles of tens of nanoseconds are typical of the technology (docs/model.md). Use it to
// see how much an access pattern could cost, or as the starting point of your own model.

#include <cstdint>
#include <systemc>
#include <tlm>
#include <vector>

#include "sim/base_names.h"
#include "sim/loosely_timed.h"
#include "sim/memory_models.h"
#include "sim/parameters.h"

namespace tpusim::sim {

class RowBufferMemory : public sc_core::sc_module,
                        public LooselyTimedTarget,
                        public LooselyTimedInitiator,
                        public Described {
 public:
  RowBufferMemory(sc_core::sc_module_name name, Memory& storage, uint64_t row_bytes, uint32_t banks,
                  double row_miss_ns);

  tlm::tlm_target_socket<> socket;         // bound by the chip's router
  tlm::tlm_initiator_socket<> to_storage;  // the Memory's socket: DMI and debug transport

  // How long a chunk of `bytes` at address-space offset `offset` holds the port; opens the
  // rows it touches.
  Picoseconds Occupy(uint64_t offset, uint64_t bytes);
  uint64_t rows_opened() const { return rows_opened_; }

  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) override;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi) override;
  unsigned int transport_dbg(tlm::tlm_generic_payload& payload) override;
  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) override;

  std::vector<Parameter> parameters() const override;

  // The registry entry ("row_buffer") with its parameters.
  static MemoryModel Model();

 private:
  Memory& storage_;
  uint64_t row_bytes_;
  Picoseconds row_miss_;
  std::vector<int64_t> open_row_;  // by bank; -1: none
  uint64_t rows_opened_ = 0;
};

}  // namespace tpusim::sim
