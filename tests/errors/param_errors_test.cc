// Typed parameters (kernels/params.h): an unknown parameter, a value of the wrong type, one
// out of range or not among the allowed values, and a missing one are each a ParamError that
// names the parameter and what it allows; reading a parameter an entry did not declare is
// the entry's bug; an unsound declaration is reported when the registry is checked.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/params.h"
#include "kernels/registry.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

using kernels::Param;
using kernels::ParamError;
using kernels::ParamValues;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// One parameter of each type.
const std::vector<Param>& Declared() {
  static const std::vector<Param> params = {
      Param::Int("steps", "ring steps").Unit("steps").Default(3).Range(1, 16),
      Param::Bytes("chunk_bytes", "bytes per chunk").Auto("sized from VMEM").Range(1, 1 << 20),
      Param::Double("fraction", "share of the link").Default(0.5).Range(0.0, 1.0),
      Param::Bool("relay", "relay through the middle").Default(false),
      Param::String("axis", "mesh axis").Default("x"),
      Param::Enum("direction", {"right", "left"}, "where to send").Default("right"),
      Param::Bytes("bytes", "the size V").Min(1),
  };
  return params;
}

kernels::Params Bind(const ParamValues& given) {
  return kernels::BindParams("demo", Declared(), given);
}

// The ParamError `given` raises; fails the test when it raises none.
ParamError ErrorFor(const ParamValues& given) {
  try {
    Bind(given);
  } catch (const ParamError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_EQ(e.entry(), "demo");
    return e;
  }
  ADD_FAILURE() << "no ParamError";
  return ParamError({}, "");
}

TEST(Params, DefaultsFillInWhatIsNotGivenAndTextIsParsedByType) {
  const kernels::Params p = Bind({{"bytes", "64K"}, {"fraction", "0.25"}, {"relay", "true"}});
  EXPECT_EQ(p.Int("steps"), 3);
  EXPECT_EQ(p.Bytes("bytes"), 65536u);
  EXPECT_DOUBLE_EQ(p.Double("fraction"), 0.25);
  EXPECT_TRUE(p.Bool("relay"));
  EXPECT_EQ(p.String("axis"), "x");
  EXPECT_EQ(p.String("direction"), "right");
  EXPECT_FALSE(p.Has("chunk_bytes"));  // Auto(): the entry chooses
  EXPECT_TRUE(p.Declares("chunk_bytes"));
  const kernels::Params typed = Bind({{"bytes", uint64_t{4096}}, {"steps", 16}, {"relay", true}});
  EXPECT_EQ(typed.Int("steps"), 16);
  EXPECT_EQ(typed.Describe(), "steps=16 fraction=0.5 relay=true axis=x direction=right bytes=4096");
}

TEST(Params, AnUnknownParameterIsNamedWithWhatTheEntryTakes) {
  const ParamError e = ErrorFor({{"bytes", 1}, {"m", 3}, {"bm", 7}});
  EXPECT_THAT(e.params(), ElementsAre("bm", "m"));
  EXPECT_THAT(e.what(), HasSubstr("demo takes no parameters 'bm', 'm'"));
  EXPECT_THAT(e.what(),
              HasSubstr("its parameters are steps, chunk_bytes, fraction, relay, axis, direction, "
                        "bytes."));
}

TEST(Params, AWrongTypeNamesTheParameterAndWhatItTakes) {
  for (const auto& [given, name, message] :
       std::vector<std::tuple<ParamValues, std::string, std::string>>{
           {{{"bytes", "lots"}}, "bytes", "parameter 'bytes' is 'lots', not a size in bytes"},
           {{{"bytes", 1}, {"steps", "three"}},
            "steps",
            "parameter 'steps' is 'three', not a whole number"},
           {{{"bytes", 1}, {"steps", 2.5}},
            "steps",
            "parameter 'steps' is '2.5', not a whole number"},
           {{{"bytes", 1}, {"fraction", "half"}},
            "fraction",
            "parameter 'fraction' is 'half', not a finite number"},
           {{{"bytes", 1}, {"relay", "maybe"}},
            "relay",
            "parameter 'relay' is 'maybe', not true or false"},
           {{{"bytes", 1}, {"axis", 3}}, "axis", "parameter 'axis' is '3', not text"},
           {{{"bytes", "99999999999G"}}, "bytes", "more bytes than a 64-bit count holds"}}) {
    const ParamError e = ErrorFor(given);
    EXPECT_THAT(e.params(), ElementsAre(name));
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(Params, AValueOutOfRangeOrNotAllowedNamesTheAllowedValues) {
  for (const auto& [given, name, message] :
       std::vector<std::tuple<ParamValues, std::string, std::string>>{
           {{{"bytes", 1}, {"steps", 17}},
            "steps",
            "parameter 'steps' is 17, out of its range: allowed 1 to 16 (ring steps)"},
           {{{"bytes", 1}, {"steps", "0"}}, "steps", "allowed 1 to 16"},
           {{{"bytes", 0}},
            "bytes",
            "parameter 'bytes' is 0, out of its range: allowed at least 1"},
           {{{"bytes", 1}, {"chunk_bytes", "2M"}}, "chunk_bytes", "allowed 1 to 1048576 (1 MiB)"},
           {{{"bytes", 1}, {"fraction", 1.5}}, "fraction", "allowed 0 to 1"},
           {{{"bytes", 1}, {"direction", "up"}},
            "direction",
            "parameter 'direction' is 'up', not one of right, left (where to send)"}}) {
    const ParamError e = ErrorFor(given);
    EXPECT_THAT(e.params(), ElementsAre(name));
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

TEST(Params, AMissingRequiredParameterIsNamedWithItsDescription) {
  const ParamError e = ErrorFor({});
  EXPECT_THAT(e.params(), ElementsAre("bytes"));
  EXPECT_THAT(e.what(),
              HasSubstr("demo needs parameter 'bytes' (bytes: the size V), which has no default"));
}

TEST(Params, ReadingAnUndeclaredParameterIsTheEntrysBug) {
  const kernels::Params p = Bind({{"bytes", 1}});
  for (const auto& read : std::vector<std::function<void()>>{
           [&] { p.Int("m"); }, [&] { p.Int("bytes"); }, [&] { p.Bytes("chunk_bytes"); }}) {
    try {
      read();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kKernelMisuse);
      EXPECT_THAT(e.what(), HasSubstr("demo reads"));
    }
  }
}

TEST(Params, DeclarationsDescribeTheirTypeDefaultAndRange) {
  const auto& d = Declared();
  EXPECT_EQ(d[0].Summary(), "int, steps; default 3; 1 to 16");
  EXPECT_EQ(d[1].Summary(), "bytes; default auto (sized from VMEM); 1 to 1048576 (1 MiB)");
  EXPECT_EQ(d[5].Summary(), "enum; default right; one of right, left");
  EXPECT_EQ(d[6].Summary(), "bytes; required; at least 1");
  EXPECT_EQ(d[0].Problem(), "");
  EXPECT_THAT(Param::Int("n", "x").Default(0).Range(1, 4).Problem(),
              HasSubstr("the default of parameter 'n' is 0, out of its range"));
  EXPECT_THAT(Param::Enum("e", {"a"}, "x").Default("b").Problem(), HasSubstr("not one of a"));
  EXPECT_THAT(Param::Int("Bad-Name", "x").Problem(), HasSubstr("lower-case"));
}

// An int list (an op's dimensions, say) is declared like any parameter: text "0,2" or
// "{0,2}", a list or one number; its range bounds each element.
TEST(Params, AnIntListParsesItsTextAndItsRangeBoundsEachElement) {
  const std::vector<Param> declared = {
      Param::Ints("dims", "the dimensions reduced").Min(0),
      Param::Ints("strides", "steps").Default(std::vector<int64_t>{1, 1}).Range(1, 8)};
  const auto bind = [&](const ParamValues& given) {
    return kernels::BindParams("demo", declared, given);
  };
  EXPECT_THAT(bind({{"dims", "0,2"}}).Ints("dims"), ElementsAre(0, 2));
  EXPECT_THAT(bind({{"dims", "{1}"}}).Ints("dims"), ElementsAre(1));
  EXPECT_THAT(bind({{"dims", ""}}).Ints("dims"), ElementsAre());
  EXPECT_THAT(bind({{"dims", 3}}).Ints("strides"), ElementsAre(1, 1));
  EXPECT_THAT(bind({{"dims", std::vector<int64_t>{4, 5}}}).Ints("dims"), ElementsAre(4, 5));
  EXPECT_EQ(bind({{"dims", "0,2"}}).Describe(), "dims=0,2 strides=1,1");
  EXPECT_EQ(declared[1].Summary(), "int list; default 1,1; each 1 to 8");
  EXPECT_THAT(
      [&] {
        bind({{"dims", "0,-1"}});
      },
      ::testing::ThrowsMessage<ParamError>(
          HasSubstr("parameter 'dims' is 0,-1, out of its range: allowed each at least 0")));
  EXPECT_THAT(
      [&] {
        bind({{"dims", "0,x"}});
      },
      ::testing::ThrowsMessage<ParamError>(
          HasSubstr("parameter 'dims' is '0,x', not a list of whole numbers")));
  EXPECT_THAT(Param::Ints("s", "x").Default(std::vector<int64_t>{0}).Min(1).Problem(),
              HasSubstr("the default of parameter 's' is 0, out of its range"));
}

// The other lists are declared the same way: a list of int lists and of (int, int) pairs
// ("{0,1},{2,3}", or as HLO prints them, "{{0,1},{2,3}}"), of texts and of numbers; a range
// bounds each number, and a value of another shape names what the list takes.
TEST(Params, TheOtherListsParseTheirTextAndTheirRangeBoundsEachNumber) {
  const std::vector<Param> declared = {
      Param::IntLists("groups", "device groups").Default(base::IntLists{}).Min(0),
      Param::IntPairs("perm", "(source, destination) pairs").Default(base::IntPairs{}).Min(0),
      Param::Strings("axes", "mesh axes").Default(std::vector<std::string>{"x"}),
      Param::Doubles("weights", "shares").Default(std::vector<double>{0.5}).Range(0.0, 1.0)};
  const auto bind = [&](const ParamValues& given) {
    return kernels::BindParams("demo", declared, given);
  };
  EXPECT_EQ(bind({{"groups", "{0,1},{2,3}"}}).IntLists("groups"), (base::IntLists{{0, 1}, {2, 3}}));
  EXPECT_EQ(bind({{"groups", "{{0, 1}, {2}}"}}).IntLists("groups"), (base::IntLists{{0, 1}, {2}}));
  EXPECT_EQ(bind({{"groups", "[[3]]"}}).IntLists("groups"), (base::IntLists{{3}}));
  EXPECT_EQ(bind({{"groups", "{}"}}).IntLists("groups"), base::IntLists{});
  EXPECT_EQ(bind({{"perm", "{0,1},{1,0}"}}).IntPairs("perm"), (base::IntPairs{{0, 1}, {1, 0}}));
  EXPECT_EQ(bind({{"perm", base::IntLists{{2, 3}}}}).IntPairs("perm"), (base::IntPairs{{2, 3}}));
  EXPECT_THAT(bind({{"axes", "x, y"}}).Strings("axes"), ElementsAre("x", "y"));
  EXPECT_THAT(bind({{"axes", "['x', 'y']"}}).Strings("axes"), ElementsAre("x", "y"));
  EXPECT_THAT(bind({}).Strings("axes"), ElementsAre("x"));
  EXPECT_THAT(bind({{"weights", "0.25,1"}}).Doubles("weights"), ElementsAre(0.25, 1.0));
  EXPECT_THAT(bind({{"weights", 1}}).Doubles("weights"), ElementsAre(1.0));
  EXPECT_EQ(bind({{"groups", "{{0,1},{2,3}}"}, {"perm", "{0,1}"}, {"axes", "x,y"}}).Describe(),
            "groups={0,1},{2,3} perm={0,1} axes=x,y weights=0.5");
  EXPECT_EQ(declared[0].Summary(), "list of int lists; default ; each at least 0");
  EXPECT_EQ(declared[2].Summary(), "string list; default x");
  EXPECT_EQ(declared[3].Summary(), "double list; default 0.5; each 0 to 1");
  const auto refused = [&](const ParamValues& given) {
    try {
      bind(given);
    } catch (const ParamError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(refused({{"groups", "{0,-1}"}}),
              HasSubstr("parameter 'groups' is {0,-1}, out of its range: allowed each at least 0"));
  EXPECT_THAT(refused({{"groups", "0,1"}}),
              HasSubstr("parameter 'groups' is '0,1', not a list of int lists: write each list "
                        "in braces, separated by commas, e.g. {0,1},{2,3}"));
  EXPECT_THAT(refused({{"perm", "{0,1,2}"}}),
              HasSubstr("parameter 'perm' is '{0,1,2}', not a list of (int, int) pairs"));
  EXPECT_THAT(refused({{"perm", "{0,-2}"}}),
              HasSubstr("out of its range: allowed each at least 0"));
  EXPECT_THAT(refused({{"axes", "x,,y"}}), HasSubstr("not a list of texts"));
  EXPECT_THAT(refused({{"weights", "0.5,2"}}),
              HasSubstr("parameter 'weights' is 0.5,2, out of its range: allowed each 0 to 1"));
  EXPECT_THAT(refused({{"weights", "0.5,x"}}), HasSubstr("not a list of numbers"));
  EXPECT_THAT(refused({{"weights", "nan"}}), HasSubstr("out of its range"));
  // Without a range a double list holds any IEEE value, as a constant's values may be.
  EXPECT_TRUE(
      std::isinf(kernels::BindParams("demo", {Param::Doubles("values", "a constant's values")},
                                     {{"values", "1,-inf"}})
                     .Doubles("values")[1]));
  EXPECT_THAT(Param::Doubles("w", "x").Default(std::vector<double>{2}).Range(0.0, 1.0).Problem(),
              HasSubstr("the default of parameter 'w' is 2, out of its range"));
  EXPECT_THAT(Param::Strings("a", "x").Range(0, 1).Problem(),
              HasSubstr("has a range end that is not a string"));
}

// In a registry of its own, so that the process's one stays sound for the tests after it.
TEST(Params, TheRegistryReportsAnUnsoundDeclaration) {
  EXPECT_NO_THROW(kernels::Registry::Get().CheckRegistrations());
  kernels::Registry registry;
  kernels::KernelInfo info = *kernels::Registry::Get().Find("all_gather_ring");
  info.name = "all_gather_ring_twice_declared";
  info.params.push_back(info.params.front());
  registry.Add(info);
  try {
    registry.CheckRegistrations();
    FAIL() << "an unsound declaration was not reported";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("all_gather_ring_twice_declared: parameter 'axis' is declared "
                                    "twice"));
  }
}

// Each entry declares exactly what it takes: the collectives no matmul sizes, the matmul no
// bytes, and the reductions no int8.
TEST(Params, EntriesDeclareOnlyWhatTheyTake) {
  const auto names = [](const std::string& entry) {
    std::vector<std::string> list;
    for (const auto& p : testing::Entry(entry).params)
      list.push_back(p.name());
    return list;
  };
  EXPECT_THAT(names("all_gather_ring"), ElementsAre("axis", "bytes", "dtype", "direction"));
  EXPECT_THAT(names("reduce_scatter_ring"), ElementsAre("axis", "bytes", "dtype", "chunk_bytes",
                                                        "chunks_in_flight", "direction"));
  EXPECT_THAT(names("matmul"), ElementsAre("m", "k", "n", "dtype", "precision", "bm", "bk", "bn"));
  EXPECT_THAT(names("seed003/a"), ElementsAre("m", "k", "n"));
  EXPECT_THAT(testing::Entry("reduce_scatter_ring").FindParam("dtype")->values(),
              ElementsAre("bf16", "f32", "int32"));
  for (const auto& entry : kernels::Registry::Get().kernels()) {
    for (const auto& param : entry.params)
      EXPECT_EQ(param.Problem(), "") << entry.name;
  }
}

}  // namespace
}  // namespace tpusim
