// What a mistyped command line gets: a sentence that names the argument at fault and what
// to write instead, never Boost's own wording, and never an argument ignored with exit 0.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RunTpusim;

struct Misuse {
  std::string args;
  std::string message;
};

void PrintTo(const Misuse& m, std::ostream* os) {
  *os << "tpusim " << m.args;
}

class UsageWording : public ::testing::TestWithParam<Misuse> {};

TEST_P(UsageWording, NamesTheArgumentAndTheFix) {
  const auto r = RunTpusim(GetParam().args);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_THAT(r.err, HasSubstr("--help'"));
  // Boost's phrasings, which say neither which argument nor what to do.
  EXPECT_THAT(r.err, Not(HasSubstr("positional options")));
  EXPECT_THAT(r.err, Not(HasSubstr("is invalid")));
  EXPECT_THAT(r.err, Not(HasSubstr("cannot be specified more than once")));
}

INSTANTIATE_TEST_SUITE_P(
    Commands, UsageWording,
    ::testing::Values(
        Misuse{"list extra",
               "'extra' is an argument too many (list takes none besides its options)"},
        Misuse{"topologies v5e-2x2",
               "'v5e-2x2' is an argument too many (topologies takes none besides its options)"},
        Misuse{"--version now", "--version takes no arguments, and 'now' is one"},
        Misuse{"run all_gather_ring abc --topology v5e-2x2 --bytes 4K",
               "'abc' is an argument too many (run takes one besides its options); remove it, "
               "or put it right after the option it is the value of."},
        Misuse{"check-trace a.pftrace b.pftrace", "'b.pftrace' is an argument too many"},
        Misuse{"run all_gather_ring --topology v5e-2x2 --bytes 4K --time-limit soon",
               "--time-limit takes a number, and 'soon' is not one; write e.g. --time-limit 2."},
        Misuse{"run all_gather_ring --topology v5e-2x2 --bytes 4K --bytes 8K",
               "--bytes is given more than once; give it once."},
        Misuse{"run all_gather_ring --bytes 4K --topology", "--topology needs a value after it."},
        Misuse{"run seed003 --topology v5e-2x2",
               "'seed003' is a family of entries (seed003/a, seed003/b"},
        Misuse{"run seed003 --topology v5e-2x2",
               "name one, e.g. tpusim run seed003/a, or compare them all with tpusim compare "
               "seed003."},
        Misuse{"run all_gather_ring --topology v5e-2x2 --bytes 4K --trace ''",
               "--trace is given an empty value; give a value, or leave the option out."},
        Misuse{"compare all_gather_ring all_gather_bidi --topology v5e-2x2 --bytes 4K "
               "--trace-dir ''",
               "--trace-dir is given an empty value"},
        Misuse{"bench all_gather_ring --topology v5e-2x2 --bytes 4K --sweep bytes=4K,8K",
               "--bytes and --sweep both set 'bytes'; drop --bytes"},
        Misuse{"describe --models --chip 0,0",
               "--models lists the models every topology can choose, so it takes no topology, "
               "--chip, --slices, --slow-chip or --slow-link"},
        Misuse{"describe v5e-2x2 --models", "so it takes no topology, --chip, --slices"},
        Misuse{"describe v5e-2x2 --topology v5e-2x4",
               "the topology is given twice, as 'v5e-2x2' and as --topology 'v5e-2x4'"},
        Misuse{"run all_gather_ring --topology v5e-2x2 --bytes 4K --wall-limit -1",
               "--wall-limit -1 is out of range: give host seconds from 0 (no limit) to "
               "1000000."},
        Misuse{"hlo-info a.hlo b.hlo", "'b.hlo' is an argument too many (hlo-info takes one"}));

TEST(UsageWording, SwitchesAndDefaultsAreNotEmptyValues) {
  // A switch (--timing-only) and an option left at its default hold no text either; only
  // an empty value the user typed is refused.
  const auto r = RunTpusim("run all_gather_ring --topology v5e-2x2 --bytes 4K --timing-only");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto models = RunTpusim("describe --models");
  EXPECT_EQ(models.exit_code, 0) << models.err;
  EXPECT_THAT(models.out, HasSubstr("roofline"));
}

TEST(UsageWording, TheOneArgumentMayAlsoBeAnOption) {
  const auto operand = RunTpusim("describe v5e-2x2");
  const auto option = RunTpusim("describe --topology v5e-2x2");
  ASSERT_EQ(operand.exit_code, 0) << operand.err;
  EXPECT_EQ(operand.out, option.out);
}

}  // namespace
}  // namespace tpusim
