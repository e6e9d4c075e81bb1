// DmaLedger (sim/dma_ledger.h) on its own, driven as the DMA dispatcher drives it: an
// untraced run keeps only the DMAs still in flight (and those behind the oldest one that has
// not landed), however many it moves, so a pod-scale run's memory does not grow with its
// DMAs; a DMA that lands leaves its buffer's writers, in whatever order the DMAs land, so a
// later copy into its bytes is no race while one into a writer's bytes still in flight is.

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include "base/errors.h"
#include "sim/byte_box.h"
#include "sim/dma_ledger.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"

namespace tpusim::modules {
namespace {

using base::BufferHandle;
using base::MemorySpace;
using sim::DmaLedger;
using sim::Transfer;

constexpr uint64_t kBytes = 256;  // each DMA writes bytes [slot * kBytes, (slot + 1) * kBytes)
constexpr int kSlots = 8;

class DmaLedgerTest : public ModuleTest {
 protected:
  DmaLedgerTest()
      : simulation_(testing::MakeTopology({2}, {false}), TimingOnly()),
        buffer_{0, MemorySpace::kHbm,
                simulation_.Allocate(0, MemorySpace::kHbm, kSlots * kBytes, "buf").index} {}

  // Starts a DMA into slot `slot` of the buffer, as DmaDispatcher::Start records one.
  Transfer& Start(DmaLedger& ledger, int slot) {
    Transfer& t = ledger.Add();
    t.bytes = kBytes;
    t.request.destination.buffer = buffer_;
    t.request.destination.box.offset = static_cast<uint64_t>(slot) * kBytes;
    t.request.destination.box.counts = {kBytes};
    t.request.destination.box.strides = {1};
    t.destination_dense = sim::BoxIsDense(t.request.destination.box);
    t.request.label = "copy " + std::to_string(t.id) + " into slot " + std::to_string(slot);
    ledger.CheckWriteRace(t, simulation_.slice().state());
    return t;
  }
  // Its last chunk has left and landed: DmaDispatcher::Landed.
  static void Land(DmaLedger& ledger, Transfer& t) {
    t.sent = t.landed = t.bytes;
    ledger.Landed(t);
    ledger.Trim();
  }

  sim::Simulation simulation_;
  BufferHandle buffer_;
};

TEST_F(DmaLedgerTest, AnUntracedRunKeepsOnlyTheDmasInFlight) {
  DmaLedger ledger(/*keep_settled=*/false);
  std::deque<Transfer*> in_flight;
  size_t most = 0;
  for (int i = 0; i < 20000; ++i) {
    in_flight.push_back(&Start(ledger, i % kSlots));
    if (in_flight.size() == kSlots - 1) {  // then the oldest lands, as a ring's step would
      Land(ledger, *in_flight.front());
      in_flight.pop_front();
    }
    most = std::max(most, ledger.transfers().size());
  }
  EXPECT_LE(most, static_cast<size_t>(kSlots));
  while (!in_flight.empty()) {
    Land(ledger, *in_flight.front());
    in_flight.pop_front();
  }
  EXPECT_TRUE(ledger.transfers().empty());
}

TEST_F(DmaLedgerTest, ATracedRunKeepsEveryDma) {
  DmaLedger ledger(/*keep_settled=*/true);
  for (int i = 0; i < 100; ++i)
    Land(ledger, Start(ledger, i % kSlots));
  EXPECT_EQ(ledger.transfers().size(), 100u);
}

TEST_F(DmaLedgerTest, DmasThatLandedAreForgottenOnceTheOldestOneLands) {
  DmaLedger ledger(/*keep_settled=*/false);
  Transfer& oldest = Start(ledger, 0);
  for (int i = 0; i < 1000; ++i)
    Land(ledger, Start(ledger, 1 + i % (kSlots - 1)));
  // Kept in start order behind the one still in flight...
  EXPECT_EQ(ledger.transfers().size(), 1001u);
  // ... and all forgotten together when it lands.
  Land(ledger, oldest);
  EXPECT_TRUE(ledger.transfers().empty());
}

TEST_F(DmaLedgerTest, ADmaThatLandsOutOfOrderLeavesItsBufferWriters) {
  DmaLedger ledger(/*keep_settled=*/false);
  const std::string first = Start(ledger, 0).request.label.str();
  Transfer& second = Start(ledger, 1);
  const std::string third = Start(ledger, 2).request.label.str();
  Land(ledger, second);  // the middle writer lands first
  // Its bytes are free to write again...
  EXPECT_NO_THROW(Start(ledger, 1));
  // ... while those of the writers still in flight are not: the report names the one the
  // new copy races.
  for (const auto& [slot, writer] : {std::pair{0, first}, std::pair{2, third}}) {
    try {
      Start(ledger, slot);
      ADD_FAILURE() << "a second copy into slot " << slot << " was not reported";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kRace);
      EXPECT_NE(std::string(e.what()).find("that DMA '" + writer + "'"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace tpusim::modules
