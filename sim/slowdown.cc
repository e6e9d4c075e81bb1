#include "sim/slowdown.h"

#include <cmath>
#include <string>

#include "base/errors.h"
#include "base/text.h"

namespace tpusim::sim {

namespace {

// "must be a finite number greater than 0 (1 is nominal, 2 twice as slow)."
void CheckFactor(double factor, const std::string& entry, const std::string& what) {
  if (std::isfinite(factor) && factor > 0) return;
  throw Error(ErrorKind::kInvalidArgument,
              entry + " is " + base::NumberText(factor) + "; each entry " + what +
                  " and must be a finite number greater than 0 (1 is nominal, 2 twice as "
                  "slow).");
}

std::string Entry(const char* field, size_t index) {
  std::string entry = field;
  entry += "[";
  entry += std::to_string(index);
  entry += "]";
  return entry;
}

// Bandwidth / factor, refused below kMinSlowedBytesPerSecond.
double Slowed(double bytes_per_second, double factor, const std::string& what,
              const std::string& entry) {
  const double slowed = bytes_per_second / factor;
  if (slowed >= kMinSlowedBytesPerSecond) return slowed;
  std::string message = entry;
  message += " is ";
  message += base::NumberText(factor);
  message += ", which would leave ";
  message += what;
  message += " at ";
  message += base::NumberText(slowed);
  message += " B/s, below the ";
  message += base::NumberText(kMinSlowedBytesPerSecond);
  message += " B/s that simulated time can count a DMA chunk at; give a factor of at most ";
  message += base::NumberText(bytes_per_second / kMinSlowedBytesPerSecond);
  message += ".";
  throw Error(ErrorKind::kInvalidArgument, message);
}

}  // namespace

void CheckSlowdowns(const base::EngineOptions& options, const Torus& torus) {
  const std::vector<double>& slowdown = options.chip_slowdown;
  if (slowdown.size() > torus.chips()) {
    throw Error(ErrorKind::kInvalidArgument,
                "chip_slowdown has " + std::to_string(slowdown.size()) +
                    " entries, but the slice has " + std::to_string(torus.chips()) +
                    " chips; give one factor per chip, or none.");
  }
  for (size_t chip = 0; chip < slowdown.size(); ++chip) {
    CheckFactor(slowdown[chip], Entry("chip_slowdown", chip),
                "multiplies one chip's compute time and divides its memories' bandwidth");
  }
  for (size_t i = 0; i < options.link_slowdown.size(); ++i) {
    const base::LinkSlowdown& slow = options.link_slowdown[i];
    const std::string entry = Entry("link_slowdown", i);
    CheckFactor(slow.factor, entry + ".factor", "divides one link's bandwidth");
    if (slow.chip >= torus.chips()) {
      throw Error(ErrorKind::kInvalidArgument,
                  entry + ".chip is " + std::to_string(slow.chip) + ", and the slice has " +
                      std::to_string(torus.chips()) + " chips; give a chip index from 0 to " +
                      std::to_string(torus.chips() - 1) + ".");
    }
    bool found = false;
    for (LinkId link : torus.LinksFrom(slow.chip))
      found = found || torus.link(link).name == slow.direction;
    if (!found) {
      std::string message = entry;
      message += " names the '";
      message += slow.direction;
      message += "' link of ";
      message += torus.Describe(slow.chip);
      message += ", which the slice does not have; its links are";
      for (LinkId link : torus.LinksFrom(slow.chip)) {
        message += " ";
        message += torus.link(link).name;
      }
      message += ".";
      throw Error(ErrorKind::kInvalidArgument, message);
    }
  }
}

double ChipSlowdown(const base::EngineOptions& options, ChipId chip) {
  return chip < options.chip_slowdown.size() ? options.chip_slowdown[chip] : 1.0;
}

void SlowChip(const base::EngineOptions& options, const Torus& torus, ChipId chip,
              config::ChipConfig& config) {
  const double factor = ChipSlowdown(options, chip);
  if (factor == 1) return;
  const std::string entry = Entry("chip_slowdown", chip);
  for (const auto& [memory, label] :
       {std::pair{config.mutable_hbm(), "HBM"}, std::pair{config.mutable_vmem(), "VMEM"},
        std::pair{config.mutable_smem(), "SMEM"}}) {
    std::string what = "the ";
    what += label;
    what += " of ";
    what += torus.Describe(chip);
    memory->set_bandwidth_bytes_per_s(Slowed(memory->bandwidth_bytes_per_s(), factor, what, entry));
  }
  config.mutable_dma()->set_issue_latency_ns(config.dma().issue_latency_ns() * factor);
}

double SlowedLinkBandwidth(const base::EngineOptions& options, const Torus& torus, LinkId link,
                           double bytes_per_second) {
  const Link& l = torus.link(link);
  for (size_t i = 0; i < options.link_slowdown.size(); ++i) {
    const base::LinkSlowdown& slow = options.link_slowdown[i];
    if (slow.chip != l.from || slow.direction != l.name) continue;
    std::string what = "the ";
    what += l.name;
    what += " link of ";
    what += torus.Describe(l.from);
    bytes_per_second =
        Slowed(bytes_per_second, slow.factor, what, Entry("link_slowdown", i) + ".factor");
  }
  return bytes_per_second;
}

}  // namespace tpusim::sim
