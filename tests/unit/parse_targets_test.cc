#include <gtest/gtest.h>

#include <google/protobuf/text_format.h>

#include <string>

#include "topologies/parse_targets.h"

namespace tpusim::topologies {
namespace {

// Every kind of sub-message a topology has, the repeated ones twice (the second is made by
// the parse, not by MakeParseTargets).
const char* kEverySubMessage = R"pb(
  name: "t"
  chip {
    clock_hz: 1e9
    hbm {
      capacity_bytes: 1
      model: "row_buffer"
      parameter { name: "banks" value: 4 }
    }
    vmem { capacity_bytes: 2 }
    smem { bandwidth_bytes_per_s: 3 }
    dma { engines: 2 }
    cost {
      mxu_efficiency: 0.5
      parameter { name: "a" value: 1 }
      parameter { name: "b" }
    }
  }
  ici { hop_latency_ns: 5 forwarding: STORE_AND_FORWARD }
  mesh {
    shape: [ 2, 2 ]
    wraparound: [ true, false ]
  }
  link_override {
    chip: [ 0, 1 ]
    direction: "x+"
    latency_ns: 7
  }
  link_override {
    chip: [ 1, 1 ]
    direction: "y-"
    bandwidth_bytes_per_s: 8
  }
  chip_override {
    chip: [ 0, 0 ]
    hbm { bandwidth_bytes_per_s: 9 }
    dma { chunk_bytes: 4096 }
  }
  chip_override {
    chip: [ 1, 0 ]
    smem {
      capacity_bytes: 10
      parameter { name: "c" }
    }
  }
  dcn { chips_per_host: 2 }
  multislice { slices: 2 }
  chiplets { count: 2 }
)pb";

TEST(ParseTargets, LeaveAnEmptyMessage) {
  config::Topology topology;
  MakeParseTargets(topology);
  EXPECT_EQ(topology.ByteSizeLong(), 0u);
  EXPECT_FALSE(topology.has_chip());
  EXPECT_FALSE(topology.has_mesh());
  EXPECT_FALSE(topology.has_dcn());
  EXPECT_EQ(topology.link_override_size(), 0);
  EXPECT_EQ(topology.chip_override_size(), 0);
  EXPECT_FALSE(topology.chip().has_hbm());
  EXPECT_EQ(topology.chip().hbm().parameter_size(), 0);
  EXPECT_EQ(topology.DebugString(), "");
}

TEST(ParseTargets, ParseAsIntoAFreshMessage) {
  for (const std::string& text :
       {std::string(kEverySubMessage), std::string("mesh { shape: 4 }"), std::string("")}) {
    config::Topology fresh;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &fresh)) << text;
    config::Topology prepared;
    MakeParseTargets(prepared);
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &prepared)) << text;
    EXPECT_EQ(prepared.SerializeAsString(), fresh.SerializeAsString()) << text;
    EXPECT_EQ(prepared.DebugString(), fresh.DebugString()) << text;
    EXPECT_EQ(prepared.has_chip(), fresh.has_chip()) << text;
    EXPECT_EQ(prepared.chip().has_hbm(), fresh.chip().has_hbm()) << text;
    EXPECT_EQ(prepared.has_chiplets(), fresh.has_chiplets()) << text;
  }
}

}  // namespace
}  // namespace tpusim::topologies
