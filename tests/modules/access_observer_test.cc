// The model reports its accesses and synchronisations to whoever observes the slice
// (sim/access_observer.h), not to a race detector it knows of: a recording observer of the
// test's own, attached in place of the race checker, sees a core's store and load, a DMA's
// start and both completions under the id it handed out, each wait's acquisition, a remote
// signal's leaving and arriving under one id, and a free. The race checker is attached to
// functional runs with race_check only.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "sim/access_observer.h"
#include "sim/race_check.h"
#include "sim/simulation.h"
#include "tests/modules/module_support.h"
#include "tests/support/test_support.h"

namespace tpusim::modules {
namespace {

using base::BufferHandle;
using base::SemaphoreHandle;

std::string Name(SemaphoreHandle s) {
  return "sem " + std::to_string(s.chip) + "." + std::to_string(s.index);
}

// Writes each report as a line: "chip.core what ...".
class Recorder final : public sim::AccessObserver {
 public:
  void BeginScope(ChipId chip, uint32_t core, std::string_view name) override {
    Add(chip, core, "begin " + std::string(name));
  }
  void EndScope(ChipId chip, uint32_t core) override { Add(chip, core, "end"); }
  void CoreAccess(ChipId chip, uint32_t core, const base::Region& region, bool write,
                  std::string_view what, Picoseconds) override {
    Add(chip, core,
        std::string(write ? "store " : "load ") + std::string(what) + " of " +
            std::to_string(region.box.bytes()) + " B");
  }
  uint32_t DmaStarted(ChipId chip, uint32_t core, const base::DmaRequest& request,
                      Picoseconds) override {
    const uint32_t id = 100 + next_++;
    Add(chip, core, "dma " + request.label.str() + " #" + std::to_string(id));
    return id;
  }
  void DmaSent(uint32_t dma, const SemaphoreHandle* send) override {
    lines.push_back("sent #" + std::to_string(dma) + (send ? " to " + Name(*send) : ""));
  }
  void DmaLanded(uint32_t dma, SemaphoreHandle recv) override {
    lines.push_back("landed #" + std::to_string(dma) + " to " + Name(recv));
  }
  uint32_t SignalSent(ChipId chip, uint32_t core) override {
    const uint32_t id = 200 + next_++;
    Add(chip, core, "signal #" + std::to_string(id));
    return id;
  }
  void SignalArrived(uint32_t signal, SemaphoreHandle target) override {
    lines.push_back("arrived #" + std::to_string(signal) + " at " + Name(target));
  }
  void Acquired(ChipId chip, uint32_t core, SemaphoreHandle semaphore) override {
    Add(chip, core, "acquired " + Name(semaphore));
  }
  void Freed(BufferHandle buffer) override {
    lines.push_back("freed " + std::to_string(buffer.chip) + "." + std::to_string(buffer.index));
  }

  std::vector<std::string> lines;

 private:
  void Add(ChipId chip, uint32_t core, const std::string& what) {
    lines.push_back(std::to_string(chip) + "." + std::to_string(core) + " " + what);
  }
  uint32_t next_ = 0;
};

base::EngineOptions Functional(bool race_check) {
  base::EngineOptions options;
  options.functional = true;
  options.race_check = race_check;
  return options;
}

TEST(AccessObserver, TheRaceCheckerObservesOnlyFunctionalRunsThatCheckRaces) {
  const auto topology = testing::MakeTopology({2}, {false});
  sim::Simulation checked(topology, Functional(true));
  EXPECT_NE(dynamic_cast<sim::RaceCheck*>(checked.slice().state().observer()), nullptr);
  sim::Simulation unchecked(topology, Functional(false));
  EXPECT_EQ(unchecked.slice().state().observer(), nullptr);
  sim::Simulation timing(topology, TimingOnly());
  EXPECT_EQ(timing.slice().state().observer(), nullptr);
}

TEST(AccessObserver, AnObserverOfItsOwnSeesEveryAccessAndSynchronisation) {
  constexpr uint64_t kBytes = 256;
  sim::Simulation simulation(testing::MakeTopology({2}, {false}), Functional(false));
  auto recorder = std::make_unique<Recorder>();
  Recorder& seen = *recorder;
  simulation.slice().state().Observe(std::move(recorder));
  const BufferHandle dst = simulation.Allocate(1, base::MemorySpace::kHbm, kBytes, "dst");
  const SemaphoreHandle recv = simulation.AddSemaphore(1, base::SemaphoreKind::kDma, "recv");
  const SemaphoreHandle send = simulation.AddSemaphore(0, base::SemaphoreKind::kDma, "send");
  const SemaphoreHandle done = simulation.AddSemaphore(0, base::SemaphoreKind::kRegular, "done");
  const base::ByteBox box{0, {kBytes}, {1}, 1};
  // Chip 0 stores into its VMEM, copies it to chip 1 and reads it back once it has left; chip 1
  // waits for it and signals back; chip 0 waits for both, then frees its buffer.
  const base::RunOutcome outcome = simulation.Run([&](base::CorePort& core) {
    if (core.chip() == 0) {
      const BufferHandle src = core.Allocate(base::MemorySpace::kVmem, kBytes, "src", {});
      const std::vector<uint8_t> bytes(kBytes, 7);
      core.BeginScope("step", {});
      core.Store({src, box}, bytes.data(), "fill");
      base::DmaRequest copy;
      copy.source = {src, box};
      copy.destination = {dst, box};
      copy.has_send_semaphore = true;
      copy.send_semaphore = send;
      copy.recv_semaphore = recv;
      copy.label = "copy";
      core.StartDma(copy);
      core.Wait(send, kBytes, base::WaitKind::kDmaSend, "copy");
      std::vector<uint8_t> back(kBytes);
      core.Load({src, box}, back.data(), "check");
      core.Wait(done, 1, base::WaitKind::kSemaphore, "done");
      core.EndScope();
      core.Free(src);
    } else {
      core.Wait(recv, kBytes, base::WaitKind::kDmaRecv, "copy");
      core.Signal(done, 1);
    }
  });
  ASSERT_TRUE(outcome.ok) << outcome.error;
  // In the order the model made them: the DMA's completions and the signal's arrival come
  // from the calendar, between the cores' own reports.
  const std::vector<std::string> expected = {
      "0.0 begin step",
      "0.0 store fill of 256 B",
      "0.0 dma copy #100",
      "sent #100 to sem 0." + std::to_string(send.index),
      "0.0 acquired sem 0." + std::to_string(send.index),
      "0.0 load check of 256 B",
      "landed #100 to sem 1." + std::to_string(recv.index),
      "1.0 acquired sem 1." + std::to_string(recv.index),
      "1.0 signal #201",
      "arrived #201 at sem 0." + std::to_string(done.index),
      "0.0 acquired sem 0." + std::to_string(done.index),
      "0.0 end",
      "freed 0.0",
  };
  EXPECT_EQ(seen.lines, expected);
}

}  // namespace
}  // namespace tpusim::modules
