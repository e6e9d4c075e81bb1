// The CLI's pieces on their own: the metric table every report reads, the sweep's value
// syntax, the progress line and the gnuplot script.

#include "tools/tpusim/run_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "tools/tpusim/cli.h"
#include "tools/tpusim/plot.h"
#include "tools/tpusim/point_runner.h"
#include "tools/tpusim/sweep_axis.h"

namespace tpusim::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Every member of RunMetrics has its row: a member added without one changes the size.
TEST(MetricTable, HasOneRowPerMetricWithItsOwnKey) {
  EXPECT_EQ(sizeof(RunMetrics), MetricFields().size() * sizeof(RunMetrics::Value));
  std::set<std::string> keys, headers;
  for (const MetricField& field : MetricFields()) {
    EXPECT_TRUE(keys.insert(field.key).second) << field.key;
    EXPECT_TRUE(headers.insert(field.header).second) << field.header;
    // Each row's member is its own: FieldOf finds this very row.
    EXPECT_EQ(&FieldOf(field.value), &field) << field.key;
    EXPECT_GT(std::string(field.description).size(), 5u) << field.key;
  }
}

TEST(MetricTable, JsonReadsBackWhatItWrote) {
  RunMetrics metrics;
  metrics.sim_seconds = 1.5e-6;
  metrics.busbw = 45e9;
  metrics.peak_hbm_bytes = 1 << 20;
  metrics.correct = 0;
  metrics.events = 12;
  nlohmann::ordered_json json;
  WriteMetrics(metrics, json);
  EXPECT_DOUBLE_EQ(json["sim_time_ns"].get<double>(), 1500);
  EXPECT_DOUBLE_EQ(json["busbw_gbps"].get<double>(), 45);
  EXPECT_TRUE(json["peak_hbm_bytes"].is_number_unsigned());
  EXPECT_EQ(json["correct"], false);
  EXPECT_TRUE(json["algbw_gbps"].is_null());
  const RunMetrics back = ReadMetrics(json);
  EXPECT_DOUBLE_EQ(*back.sim_seconds, 1.5e-6);
  EXPECT_DOUBLE_EQ(*back.busbw, 45e9);
  EXPECT_EQ(*back.correct, 0);
  EXPECT_FALSE(back.algbw.has_value());
  EXPECT_EQ(HumanValue(FieldOf(&RunMetrics::sim_seconds), back), "1.500 us");
  EXPECT_EQ(FixedValue(FieldOf(&RunMetrics::sim_seconds), back), "1.500");
  EXPECT_EQ(HumanValue(FieldOf(&RunMetrics::correct), back), "WRONG");
  EXPECT_EQ(HumanValue(FieldOf(&RunMetrics::algbw), back), "-");
  EXPECT_EQ(CsvValue(FieldOf(&RunMetrics::algbw), back), "");
}

TEST(SweepAxis, ListsAndRangesOfSizesAndNumbers) {
  EXPECT_THAT(ParseSweepAxis("sweep", "--param", "bytes=4K:64K:x4").values,
              ElementsAre("4096", "16384", "65536"));
  EXPECT_THAT(ParseSweepAxis("sweep", "--param", "m=256:1024").values,
              ElementsAre("256", "512", "1024"));
  EXPECT_THAT(ParseSweepAxis("sweep", "--param", "time-limit=1e-6:1e-3:x10").values,
              ElementsAre("1e-06", "1e-05", "0.0001", "0.001"));
  const SweepAxis list = ParseSweepAxis("sweep", "--param", "dtype=bf16,f32");
  EXPECT_EQ(list.name, "dtype");
  EXPECT_THAT(list.values, ElementsAre("bf16", "f32"));
  EXPECT_THAT(ParseSweepAxis("sweep", "--param", "device_order=0,1;1,0").values,
              ElementsAre("0,1", "1,0"));
  EXPECT_EQ(ParseSweepAxis("sweep", "--param", "chunks-in-flight=1").name, "chunks_in_flight");
  EXPECT_THROW(ParseSweepAxis("sweep", "--param", "bytes=4K:1M:x1"), UsageError);
  EXPECT_THROW(ParseSweepAxis("sweep", "--param", "x=0:1"), UsageError);
  EXPECT_THROW(ParseSweepAxis("sweep", "--param", "x=1e-9:1:x1.000001"), UsageError);
}

TEST(ProgressLine, SaysPointsDoneElapsedAndTimeLeft) {
  EXPECT_EQ(ProgressLine(3, 12, 30),
            "[######..................]  3/12 points  0:30 elapsed  ETA 1:30");
  EXPECT_THAT(ProgressLine(0, 12, 1), Not(HasSubstr("ETA")));
  EXPECT_THAT(ProgressLine(12, 12, 4000), HasSubstr("1:06:40 elapsed"));
}

TEST(PlotScript, LogAxesWhereValuesSpanADecade) {
  Plot plot;
  plot.series = {PlotSeries{"ring", {1024, 1 << 20}, {2, 3}, false},
                 PlotSeries{"bound", {1024, 1 << 20}, {1, 2}, true}};
  plot.x_bytes = true;
  const std::string script = PlotScript(plot, "out.svg");
  EXPECT_THAT(script, HasSubstr("set terminal svg"));
  EXPECT_THAT(script, HasSubstr("set logscale x 2"));
  EXPECT_THAT(script, Not(HasSubstr("set logscale y")));  // 1 to 3: under a decade
  EXPECT_THAT(script, HasSubstr("dashtype 2 linewidth 1.5 linecolor 1 title 'bound'"));
  plot.x_names = {"v5e-4x4", "v5e-16x16"};
  plot.series = {PlotSeries{"it's", {0, 1}, {1, 100}, false}};
  const std::string named = PlotScript(plot, "out.png");
  EXPECT_THAT(named, HasSubstr("set terminal pngcairo"));
  EXPECT_THAT(named, HasSubstr("set xtics ('v5e-4x4' 0, 'v5e-16x16' 1)"));
  EXPECT_THAT(named, HasSubstr("set logscale y"));
  EXPECT_THAT(named, HasSubstr("title 'it''s'"));
}

}  // namespace
}  // namespace tpusim::cli
