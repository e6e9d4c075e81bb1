// The documentation's examples, as a reader meets them. Every command a `sh` block of
// README.md or docs/ shows runs as written and exits 0; an unlabelled block right after
// one shows lines its last command prints; a transcript (`$ tpusim ...` and what follows)
// prints what it shows; and every C++ or CMake block is code from a file the build
// compiles. docs/sweep.md's and docs/hlo.md's own examples are run by
// tests/cli/sweep_engine_test.cc and tests/hlo/doc_example_test.cc.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "examples/first_kernel/ring_all_gather.h"
#include "kernels/registry.h"
#include "tests/docs/doc_snippets.h"
#include "tests/support/test_support.h"
#include "topologies/topology_loader.h"

namespace tpusim {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::RunShell;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Block {
  std::string doc;       // "README.md", "docs/dsl.md"
  int line = 0;          // of the opening fence
  int end = 0;           // of the closing one
  std::string language;  // "sh", "cpp", "" ...
  std::string text;
  std::string Where() const { return doc + ":" + std::to_string(line); }
};

std::vector<std::string> Docs() {
  std::vector<std::string> docs = {"README.md"};
  for (const auto& entry : fs::directory_iterator(fs::path(TPUSIM_SOURCE_DIR) / "docs"))
    if (entry.path().extension() == ".md")
      docs.push_back("docs/" + entry.path().filename().string());
  std::sort(docs.begin() + 1, docs.end());
  return docs;
}

std::vector<Block> BlocksOf(const std::string& doc) {
  std::istringstream in(ReadFile(fs::path(TPUSIM_SOURCE_DIR) / doc));
  std::vector<Block> blocks;
  std::string line;
  Block* open = nullptr;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.rfind("```", 0) == 0) {
      if (open) {
        open->end = number;
        open = nullptr;
      } else {
        blocks.push_back({doc, number, 0, line.substr(3), ""});
        open = &blocks.back();
      }
    } else if (open) {
      open->text += line + "\n";
    }
  }
  return blocks;
}

std::vector<Block> AllBlocks() {
  std::vector<Block> all;
  for (const std::string& doc : Docs())
    for (Block& b : BlocksOf(doc))
      all.push_back(std::move(b));
  return all;
}

// The block's commands: continuation lines joined, comments and `[optional]` parts dropped.
std::vector<std::string> CommandsOf(const Block& block) {
  std::vector<std::string> commands;
  std::istringstream in(block.text);
  std::string line, command;
  while (std::getline(in, line)) {
    if (const size_t hash = line.find(" #"); hash != std::string::npos) line.resize(hash);
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    const bool continued = !line.empty() && line.back() == '\\';
    if (continued) line.pop_back();
    command += line;
    if (continued) continue;
    command = std::regex_replace(command, std::regex(R"( \[[^\]]*\])"), "");
    command = std::regex_replace(command, std::regex(" +"), " ");
    if (command.find_first_not_of(' ') != std::string::npos)
      commands.push_back(command.substr(command.find_first_not_of(' ')));
    command.clear();
  }
  return commands;
}

// Commands the documents show that this test leaves to others, each with the reason.
std::string NotRunHere(const std::string& command) {
  if (command.rfind("make ", 0) == 0 || command.rfind("cmake ", 0) == 0 ||
      command.rfind("$HOME/", 0) == 0)
    return "set-up commands: CI runs them itself (.ci/run)";
  if (command.find("--load build-example/") != std::string::npos)
    return "the plugin example: tests/install/user_kernel_test.cmake builds it and runs these";
#ifndef TPUSIM_PYTHON_DIR
  if (command.find("build/python") != std::string::npos)
    return "the Python module, which this tree does not build (the sanitizer tree)";
#endif
  return "";
}

// A scratch directory laid out as the documents assume: the CLI at build/tools/tpusim/tpusim
// and on PATH, the Python module in build/python, examples/ and topologies/ from the source
// tree.
std::string Workspace() {
  const fs::path dir = testing::TempPath("doc_examples");
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  fs::create_directories(dir / "build/tools/tpusim");
  fs::create_directories(dir / "docs");
  fs::create_symlink(TPUSIM_BINARY, dir / "bin/tpusim");
  fs::create_symlink(TPUSIM_BINARY, dir / "build/tools/tpusim/tpusim");
#ifdef TPUSIM_PYTHON_DIR
  fs::create_directory_symlink(TPUSIM_PYTHON_DIR, dir / "build/python");
#endif
  for (const char* tree : {"examples", "topologies"})
    fs::create_directory_symlink(fs::path(TPUSIM_SOURCE_DIR) / tree, dir / tree);
  return dir.string();
}

CommandResult RunIn(const std::string& dir, const std::string& command) {
  return RunShell("cd '" + dir + "' && PATH='" + dir + "/bin':\"$PATH\" && " + command);
}

std::string Squeezed(const std::string& text) {
  return std::regex_replace(text, std::regex("[ \t]+"), " ");
}

// Whether `output` shows `expected`: each line of it, in order, within some line of the
// output after the previous one's; "..." alone skips lines, "(...)" within a line stands
// for any text.
std::string Unshown(const std::string& output, const std::string& expected) {
  std::vector<std::string> lines;
  std::istringstream out(Squeezed(output));
  for (std::string line; std::getline(out, line);)
    lines.push_back(line);
  size_t next = 0;
  std::istringstream want(Squeezed(expected));
  for (std::string line; std::getline(want, line);) {
    if (line.find_first_not_of(' ') == std::string::npos || line == "..." || line == " ...")
      continue;
    std::vector<std::string> pieces;
    for (size_t start = 0;;) {
      const size_t gap = line.find("(...)", start);
      pieces.push_back(line.substr(start, gap == std::string::npos ? gap : gap - start));
      if (gap == std::string::npos) break;
      start = gap + 5;
    }
    bool found = false;
    for (; next < lines.size() && !found; ++next) {
      size_t at = 0;
      found = true;
      for (const std::string& piece : pieces) {
        at = lines[next].find(piece.find_first_not_of(' ') == std::string::npos ? "" : piece, at);
        if (at == std::string::npos) {
          found = false;
          break;
        }
        at += piece.size();
      }
    }
    if (!found) return line;
  }
  return "";
}

bool Skipped(const std::string& doc) {
  return doc == "docs/sweep.md" || doc == "docs/hlo.md";
}

TEST(DocExamples, EveryShellCommandRunsAndShowsWhatTheDocSays) {
  const std::string dir = Workspace();
  const std::vector<Block> blocks = AllBlocks();
  int ran = 0;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const Block& block = blocks[b];
    if (block.language != "sh" || Skipped(block.doc)) continue;
    CommandResult last;
    bool last_ran = false;  // the output shown belongs to the block's last command
    for (const std::string& command : CommandsOf(block)) {
      last_ran = NotRunHere(command).empty();
      if (!last_ran) continue;
      last = RunIn(dir, command);
      ++ran;
      EXPECT_EQ(last.exit_code, 0) << block.Where() << ": `" << command << "` failed:\n"
                                   << last.err << last.out.substr(0, 2000);
    }
    // Output shown just below (a sentence or two between at most).
    if (last_ran && b + 1 < blocks.size() && blocks[b + 1].language.empty() &&
        blocks[b + 1].doc == block.doc && blocks[b + 1].line - block.end <= 6 &&
        blocks[b + 1].text.rfind("$ ", 0) != 0) {
      const std::string missing = Unshown(last.out + last.err, blocks[b + 1].text);
      EXPECT_EQ(missing, "") << blocks[b + 1].Where() << " shows a line the command above it "
                             << "does not print; it prints:\n"
                             << last.out;
    }
  }
  EXPECT_GE(ran, 10) << "the README's commands were not found";
}

TEST(DocExamples, EveryTranscriptPrintsWhatItShows) {
  const std::string dir = Workspace();
  int transcripts = 0;
  for (const Block& block : AllBlocks()) {
    if (!block.language.empty() || block.text.rfind("$ ", 0) != 0) continue;
    std::istringstream in(block.text);
    std::string line, command, shown;
    auto check = [&] {
      if (command.empty()) return;
      const CommandResult r = RunIn(dir, command);
      ++transcripts;
      EXPECT_EQ(Unshown(r.out + r.err, shown), "")
          << block.Where() << ": `" << command << "` prints:\n"
          << r.out << r.err;
    };
    while (std::getline(in, line)) {
      if (line.rfind("$ ", 0) == 0) {
        check();
        command = line.substr(2);
        shown.clear();
      } else {
        shown += line + "\n";
      }
    }
    check();
  }
  EXPECT_GE(transcripts, 3);
}

// What a C++ or CMake block must be found in: the text of every file the build compiles,
// comments and blanks dropped (so formatting cannot tell them apart).
std::string Normalised(std::string text) {
  text = std::regex_replace(text, std::regex("//[^\n]*|#[^\n]*\n"), "\n");
  text = std::regex_replace(text, std::regex(R"(\s+)"), "");
  return text;
}

TEST(DocExamples, EveryCodeBlockIsCodeTheBuildCompiles) {
  std::vector<std::pair<std::string, std::string>> sources;
  for (const auto& entry : fs::recursive_directory_iterator(TPUSIM_SOURCE_DIR)) {
    const std::string path = entry.path().string();
    const std::string ext = entry.path().extension().string();
    if (path.find("/build") != std::string::npos || path.find("/.git/") != std::string::npos)
      continue;
    if (ext == ".cc" || ext == ".h" || entry.path().filename() == "CMakeLists.txt")
      sources.emplace_back(path, Normalised(ReadFile(entry.path())));
  }
  int checked = 0;
  for (const Block& block : AllBlocks()) {
    if (block.language != "cpp" && block.language != "cmake") continue;
    ++checked;
    // "..." in a block stands for code the document leaves out.
    std::vector<std::string> pieces;
    const std::string text = Normalised(block.text);
    for (size_t start = 0;;) {
      const size_t gap = text.find("...", start);
      const std::string piece = text.substr(start, gap == std::string::npos ? gap : gap - start);
      if (!piece.empty()) pieces.push_back(piece);
      if (gap == std::string::npos) break;
      start = gap + 3;
    }
    bool found = false;
    for (const auto& [path, source] : sources) {
      size_t at = 0;
      found = true;
      for (const std::string& piece : pieces) {
        at = source.find(piece, at);
        if (at == std::string::npos) {
          found = false;
          break;
        }
        at += piece.size();
      }
      if (found) break;
    }
    EXPECT_TRUE(found) << block.Where() << ": this " << block.language
                       << " block is in no file the build compiles; copy it from one, or "
                          "compile it in tests/docs/:\n"
                       << block.text;
  }
  EXPECT_GE(checked, 10);
}

// The README's first kernel, run: every device ends with every shard, in axis order.
TEST(DocExamples, TheFirstKernelGathersEveryShard) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-4x4"));
  const int64_t shard = 4096;
  const dsl::ShardMap program = examples::RingAllGatherProgram(mesh, "x", shard, dsl::DType::kF32);
  const dsl::Array x = dsl::Array::Random({4 * shard}, dsl::DType::kF32, 7);
  const dsl::RunResult result = program.Run({x}, dsl::RunOptions{});
  ASSERT_TRUE(result.ok) << result.error;
  const dsl::Comparison c = dsl::CheckAgainstReference(program, result, {x});
  EXPECT_TRUE(c.equal) << c.detail;
  EXPECT_GT(result.time(), 0u);
}

// docs/dsl.md's snippets, run.
TEST(DocExamples, EveryWayOfBindingOperandsFindsTheSameRefs) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  dsl::GridSpec grid;
  grid.in_specs = {dsl::BlockSpec::Any()};
  grid.out_specs = {dsl::BlockSpec::Any()};
  grid.scratch_shapes = {dsl::ScratchSpec::DMA({}, "local_sem"),
                         dsl::ScratchSpec::DMA({1}, "send_sems"),
                         dsl::ScratchSpec::DMA({1}, "recv_sems")};
  dsl::PallasCall call =
      dsl::pallas_call("bind", docs::BindOperands(), grid, {{{256}, dsl::DType::kF32}});
  call.in_names = {"x"};
  call.out_names = {"out"};
  const dsl::ShardMap program = dsl::shard_map(mesh, {dsl::P{}}, {dsl::P{}}, call);
  dsl::RunOptions options;
  options.functional = false;
  const dsl::RunResult result =
      program.Run({dsl::Array::Placeholder({256}, dsl::DType::kF32)}, options);
  EXPECT_TRUE(result.ok) << result.error;
}

TEST(DocExamples, TheProgramSnippetRuns) {
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-2x2"));
  dsl::RunOptions options;
  options.functional = false;
  const dsl::RunResult result =
      docs::DocProgram(mesh).Run({dsl::Array::Placeholder({2048, 2048}, dsl::DType::kBF16),
                                  dsl::Array::Placeholder({2048, 1024}, dsl::DType::kBF16)},
                                 options);
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_GT(result.time(), 0u);
}

TEST(DocExamples, TheParameterExampleDeclaresWhatItSays) {
  const kernels::KernelInfo* info = kernels::Registry::Get().Find("my_ring");
  ASSERT_NE(info, nullptr);
  const kernels::Params params = info->Bind({{"bytes", "64K"}, {"chunks", "4"}});
  EXPECT_EQ(params.Int("chunks"), 4);
  EXPECT_EQ(params.String("direction"), "right");
  EXPECT_THROW(info->Bind({{"bytes", "64K"}, {"chunks", "0"}}), Error);
  const dsl::Mesh mesh(topologies::LoadTopology("v5e-4x4"));
  kernels::Params run = info->Bind({{"bytes", "64K"}});
  run.functional = true;
  kernels::Workload w = info->make(mesh, run);
  const dsl::RunResult result = w.program.Run(w.inputs, dsl::RunOptions{});
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_TRUE(dsl::CheckAgainstReference(w.program, result, w.expected).equal);
}

}  // namespace
}  // namespace tpusim
