// base::Label and the DSL's lazy copy labels (dsl/copy_label.h): the text a lazy label
// writes on its first read is the text the DSL wrote for every DMA before, it is written
// once and stays at one address, and copies share it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "base/label.h"
#include "dsl/copy_label.h"
#include "dsl/ref.h"

namespace tpusim {
namespace {

using dsl::CopyLabel;
using dsl::ds;
using dsl::DType;
using dsl::MemorySpace;
using dsl::Ref;

// The text async_copy and async_remote_copy wrote eagerly for every DMA.
std::string EagerText(const Ref& src, const Ref& dst, bool remote, int device) {
  return remote ? "remote copy " + src.Describe() + " -> device " + std::to_string(device) + " " +
                      dst.Describe()
                : "copy " + src.Describe() + " -> " + dst.Describe();
}

struct Refs {
  Ref x = Ref::Make(0, "x", {64, 32}, DType::kF32, MemorySpace::kAny);
  Ref out = Ref::Make(1, "out", {256}, DType::kBF16, MemorySpace::kVmem);
  Ref sems = Ref::Make(2, "recv_sems", {2}, DType::kInt32, MemorySpace::kSemaphore);
  Ref unnamed = Ref::Make(3, "", {4}, DType::kF32, MemorySpace::kVmem);
  Ref big = Ref::Make(4, "big", {int64_t{1} << 41}, DType::kInt8, MemorySpace::kAny);
};

TEST(CopyLabel, WritesTheTextTheEagerLabelHad) {
  Refs r;
  Ref lax = r.out;  // reads past its shape as uninitialized memory: negative starts
  lax.AllowOutOfBoundsViews(true);
  // Whole refs, one level of slicing, indices that drop a dimension, views of views, a
  // semaphore's view (no ".at"), negative and large numbers, an empty name.
  const std::vector<Ref> refs = {
      r.x,
      r.out,
      r.x.at(ds(8, 8)),
      r.x.at(3, ds(0, 16)),
      r.x.at(ds(8, 16)).at(2).at(ds(4, 4)),
      r.big.at(ds(int64_t{1} << 40, 5)),
      lax.at(ds(-4, 8)),
      r.sems.at(1),
      r.unnamed,
      r.unnamed.at(ds(0, 4)),
  };
  for (const Ref& src : refs) {
    for (const Ref& dst : refs) {
      for (const bool remote : {false, true}) {
        for (const int device : {0, 7, 4095}) {
          EXPECT_EQ(CopyLabel(src, dst, remote, device).str(), EagerText(src, dst, remote, device));
        }
      }
    }
  }
}

// The texts themselves, as reports and traces have always shown them (the test above
// compares with Describe(), which writes views the same way).
TEST(CopyLabel, WritesTheseTexts) {
  Refs r;
  Ref lax = r.out;
  lax.AllowOutOfBoundsViews(true);
  EXPECT_EQ(CopyLabel(r.x.at(3, ds(0, 16)), r.out.at(ds(16, 16)), true, 5).str(),
            "remote copy x.at[3, ds(0, 16)] -> device 5 out.at[ds(16, 16)]");
  EXPECT_EQ(CopyLabel(r.x.at(ds(8, 16)).at(2).at(ds(4, 4)), lax.at(ds(-4, 8)), false, 0).str(),
            "copy x.at[ds(8, 16)][2][ds(4, 4)] -> out.at[ds(-4, 8)]");
  EXPECT_EQ(CopyLabel(r.sems.at(1), r.unnamed, true, 4095).str(),
            "remote copy recv_sems[1] -> device 4095 ");
}

TEST(CopyLabel, WritesItsTextOnTheFirstReadOnlyAtOneAddress) {
  const Refs r;
  const base::Label label = CopyLabel(r.x.at(ds(0, 8)), r.out.at(ds(8, 8)), true, 3);
  ASSERT_NE(label.source(), nullptr);
  EXPECT_FALSE(label.source()->rendered());
  const std::string& first = label.str();
  EXPECT_TRUE(label.source()->rendered());
  EXPECT_EQ(first, "remote copy x.at[ds(0, 8)] -> device 3 out.at[ds(8, 8)]");
  EXPECT_EQ(&label.str(), &first);
}

TEST(CopyLabel, CopiesShareOneSourceAndTheTextOutlivesTheOriginalAndTheRefs) {
  base::Label copy;
  const std::string* text = nullptr;
  {
    Refs r;
    Ref src = r.x.at(ds(16, 16));
    const base::Label label = CopyLabel(src, r.sems.at(0), false, 0);
    copy = label;
    EXPECT_EQ(copy.source(), label.source());
    EXPECT_FALSE(copy.source()->rendered());  // copying does not write it
    text = &label.str();
    EXPECT_TRUE(copy.source()->rendered());  // one source: the copy's is written too
    src = Ref();                             // the refs go first, then the label they made
  }
  EXPECT_EQ(&copy.str(), text);
  EXPECT_EQ(copy.str(), "copy x.at[ds(16, 16)] -> recv_sems[0]");
}

TEST(CopyLabel, ALabelNeverReadIsNeverWritten) {
  const Refs r;
  std::vector<base::Label> labels;
  for (int i = 0; i < 4; ++i)
    labels.push_back(CopyLabel(r.out.at(ds(i, 1)), r.out.at(ds(i + 4, 1)), false, 0));
  std::vector<base::Label> copies = labels;
  copies.erase(copies.begin());
  for (const base::Label& label : labels)
    EXPECT_FALSE(label.source()->rendered());
  EXPECT_EQ(copies[0].str(), "copy out.at[ds(1, 1)] -> out.at[ds(5, 1)]");
  EXPECT_TRUE(labels[1].source()->rendered());
  EXPECT_FALSE(labels[0].source()->rendered());
}

// Once the process has a second thread the counts are locked adds: two threads copying and
// dropping one label leave it alive with its text (the sanitizer build would catch a source
// freed early).
TEST(Label, TwoThreadsCopyingOneLabelKeepItsCountRight) {
  const Refs r;
  const base::Label label = CopyLabel(r.x.at(ds(0, 8)), r.out.at(ds(8, 8)), true, 3);
  auto churn = [&label] {
    for (int i = 0; i < 100000; ++i) {
      base::Label copy = label;
      base::Label another = copy;
    }
  };
  std::thread other(churn);
  churn();
  other.join();
  const base::Label after = label;
  EXPECT_EQ(after.source(), label.source());
  EXPECT_EQ(after.str(), "remote copy x.at[ds(0, 8)] -> device 3 out.at[ds(8, 8)]");
}

TEST(Label, FromTextIsWrittenAlreadyAndCopiesShareIt) {
  const base::Label label("fuzz copy");
  ASSERT_NE(label.source(), nullptr);
  EXPECT_TRUE(label.source()->rendered());
  const base::Label copy = label;
  EXPECT_EQ(copy.source(), label.source());
  EXPECT_EQ(&copy.str(), &label.str());
  EXPECT_EQ(copy.str(), "fuzz copy");
}

TEST(Label, EmptyAndMovedFromLabelsReadAsEmptyText) {
  const base::Label empty;
  EXPECT_EQ(empty.source(), nullptr);
  EXPECT_EQ(empty.str(), "");
  base::Label from("dma 1");
  const base::Label to = std::move(from);
  EXPECT_EQ(to.str(), "dma 1");
  EXPECT_EQ(from.source(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(from.str(), "");          // NOLINT(bugprone-use-after-move)
}

TEST(Label, AssignmentReleasesTheOldTextAndSharesTheNew) {
  base::Label a("first");
  const base::Label b("second");
  a = b;
  EXPECT_EQ(a.source(), b.source());
  EXPECT_EQ(a.str(), "second");
  const base::Label& same = a;
  a = same;  // assigning a label to itself keeps it
  EXPECT_EQ(a.str(), "second");
  a = base::Label("third");
  EXPECT_EQ(a.str(), "third");
  EXPECT_EQ(b.str(), "second");
}

}  // namespace
}  // namespace tpusim
