// docs/hlo.md's examples, kept true: its C++ block is the body of RunDocExample below (the
// test compares them line by line), it runs on the doc's HLO block, and the doc's error
// message is the one the parser prints.

#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "hlo/parser.h"
#include "hlo/replica_groups.h"
#include "tests/hlo/hlo_test_support.h"
#include "tests/support/test_support.h"

namespace tpusim {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The first block fenced ```LANGUAGE in docs/hlo.md.
std::string DocBlock(const std::string& language) {
  const std::string doc = ReadFile(std::string(TPUSIM_SOURCE_DIR) + "/docs/hlo.md");
  const std::string fence = "```" + language + "\n";
  const size_t start = doc.find(fence);
  EXPECT_NE(start, std::string::npos) << language;
  const size_t body = start + fence.size();
  return doc.substr(body, doc.find("```", body) - body);
}

std::vector<std::string> TrimmedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) {
    const size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos) lines.push_back(line.substr(first));
  }
  return lines;
}

void RunDocExample(const std::string& path) {
  // BEGIN docs/hlo.md
  const hlo::Module module = hlo::ParseModuleFile(path);
  const hlo::Computation& main = module.entry_computation();
  for (const hlo::Instruction& instruction : main.instructions) {
    if (instruction.opcode == "all-reduce") {
      const hlo::ReplicaGroups groups = hlo::DecodeReplicaGroups(
          instruction.GetAttribute("replica_groups"), module.num_partitions);
      const hlo::Computation& reduction =
          module.computations[static_cast<size_t>(instruction.Called("to_apply"))];
      std::cout << instruction.name << " sums " << main.instructions[instruction.operands[0]].name
                << " over " << groups.size() << " group(s) with " << reduction.name << "\n";
    }
  }
  // END docs/hlo.md
}

TEST(HloDoc, CppExampleIsThisTestsCode) {
  const std::string source =
      ReadFile(std::string(TPUSIM_SOURCE_DIR) + "/tests/hlo/doc_example_test.cc");
  const size_t begin = source.find("// BEGIN docs/hlo.md\n");
  const size_t end = source.find("  // END docs/hlo.md");
  ASSERT_NE(begin, std::string::npos);
  EXPECT_EQ(TrimmedLines(source.substr(begin, end - begin)).size() - 1,
            TrimmedLines(DocBlock("cpp")).size());
  std::vector<std::string> code = TrimmedLines(source.substr(begin, end - begin));
  code.erase(code.begin());  // the BEGIN marker
  EXPECT_EQ(code, TrimmedLines(DocBlock("cpp")));
}

TEST(HloDoc, CppExampleRunsOnTheHloExample) {
  const std::string path = testing::TempPath("doc_example.hlo");
  std::ofstream(path) << DocBlock("hlo");
  std::ostringstream out;
  std::streambuf* saved = std::cout.rdbuf(out.rdbuf());
  RunDocExample(path);
  std::cout.rdbuf(saved);
  EXPECT_EQ(out.str(), "all-reduce sums dot over 1 group(s) with add.clone\n");
}

TEST(HloDoc, ErrorExampleIsWhatTheParserPrints) {
  try {
    (void)hlo::ParseModule(
        "HloModule m\nENTRY %e {\n  %p = f32[2]{0} parameter(0)\n  %dot = f32[2]{0} dot(%p "
        "%p)\n}\n",
        "model.hlo");
    FAIL() << "expected an error";
  } catch (const hlo::HloError& error) {
    EXPECT_EQ(std::string(error.what()) + "\n", DocBlock("text"));
  }
}

}  // namespace
}  // namespace tpusim
