// The HLO text dialect tpusim reads (docs/hlo.md): every construct parses into what it says.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "hlo/parser.h"
#include "tests/hlo/hlo_test_support.h"

namespace tpusim::hlo {
namespace {

using ::testing::ElementsAre;
using testing::Entry;
using ::testing::HasSubstr;
using testing::ModulePath;
using testing::Parse;

const Instruction& Find(const Computation& computation, const std::string& name) {
  const int index = computation.FindInstruction(name);
  EXPECT_GE(index, 0) << name;
  return computation.instructions.at(static_cast<size_t>(index));
}

TEST(HloParser, DataParallelMlpFromJax) {
  const Module module = ParseModuleFile(ModulePath("mlp_data_parallel.hlo"));
  EXPECT_EQ(module.name, "jit_f");
  EXPECT_TRUE(module.is_scheduled);
  EXPECT_EQ(module.num_partitions, 8);
  EXPECT_EQ(module.replica_count, 1);
  ASSERT_EQ(module.computations.size(), 2u);
  EXPECT_EQ(module.entry, 1);
  const Computation& main = module.entry_computation();
  EXPECT_EQ(main.name, "main.18_spmd");
  EXPECT_TRUE(main.is_entry);
  EXPECT_EQ(main.root_instruction().name, "dot.1");
  ASSERT_EQ(main.parameters.size(), 3u);
  EXPECT_EQ(main.instructions[static_cast<size_t>(main.parameters[2])].name, "param.2");
  // The first dot reads the sharded activations and W1.
  const Instruction& dot = Find(main, "dot");
  EXPECT_EQ(dot.opcode, "dot");
  EXPECT_EQ(dot.shape.ToString(), "f32[2,128]{1,0}");
  EXPECT_THAT(dot.operand_names, ElementsAre("param", "param.1"));
  EXPECT_THAT(dot.operands,
              ElementsAre(main.FindInstruction("param"), main.FindInstruction("param.1")));
  ASSERT_TRUE(dot.metadata.has_value());
  EXPECT_EQ(dot.metadata->op_name, "jit(f)/jit(main)/dot_general");
  EXPECT_EQ(dot.metadata->source_line, 6);
  // The relu fusion calls the fused computation.
  const Instruction& fusion = Find(main, "broadcast_maximum_fusion");
  EXPECT_EQ(fusion.Called("calls"), 0);
  EXPECT_EQ(DecodeString(fusion.GetAttribute("kind")), "kLoop");
  // X is sharded on its rows over the 8 devices, W1 is replicated.
  const Instruction& x = Find(main, "param");
  ASSERT_TRUE(x.sharding.has_value());
  EXPECT_EQ(x.sharding->kind, HloSharding::Kind::kTiled);
  EXPECT_THAT(x.sharding->tile_assignment_dimensions, ElementsAre(8, 1));
  EXPECT_THAT(x.sharding->tile_assignment_devices, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_EQ(Find(main, "param.1").sharding->kind, HloSharding::Kind::kReplicated);
  // No collective in data parallelism.
  for (const Instruction& instruction : main.instructions) {
    EXPECT_THAT(instruction.opcode, ::testing::Not(HasSubstr("all-")));
  }
  EXPECT_THAT(
      DecodeBoolList(*module.FindHeaderAttribute("allow_spmd_sharding_propagation_to_parameters")),
      ElementsAre(false, false, false));
  ASSERT_TRUE(module.entry_computation_layout.has_value());
  EXPECT_EQ(module.entry_computation_layout->parameters.at(0).ToString(), "f32[2,32]{1,0}");
  EXPECT_EQ(module.entry_computation_layout->result.ToString(), "f32[2,32]{1,0}");
}

TEST(HloParser, FsdpMlpGathersBothWeightsBeforeTheDots) {
  const Module module = ParseModuleFile(ModulePath("mlp_fsdp.hlo"));
  const Computation& main = module.entry_computation();
  const Instruction& gather_w1 = Find(main, "all-gather");
  const Instruction& gather_w2 = Find(main, "all-gather.1");
  EXPECT_EQ(gather_w1.opcode, "all-gather");
  EXPECT_THAT(DecodeIntList(gather_w1.GetAttribute("dimensions")), ElementsAre(1));
  EXPECT_THAT(DecodeIntList(gather_w2.GetAttribute("dimensions")), ElementsAre(0));
  EXPECT_EQ(DecodeInt(gather_w1.GetAttribute("channel_id")), 1);
  EXPECT_TRUE(DecodeBool(gather_w1.GetAttribute("use_global_device_ids")));
  EXPECT_EQ(gather_w1.shape.ToString(), "f32[32,128]{1,0}");
  EXPECT_EQ(Find(main, "dot").operands[1], main.FindInstruction("all-gather"));
  EXPECT_EQ(Find(main, "dot.1").operands[1], main.FindInstruction("all-gather.1"));
  EXPECT_LT(main.FindInstruction("all-gather"), main.FindInstruction("dot"));
  EXPECT_EQ(Find(main, "param.1").sharding->tile_assignment_dimensions,
            (std::vector<int64_t>{1, 8}));
}

TEST(HloParser, TensorParallelMlpAllReducesThePartialSums) {
  const Module module = ParseModuleFile(ModulePath("mlp_tensor_parallel.hlo"));
  ASSERT_EQ(module.computations.size(), 3u);
  const Computation& main = module.entry_computation();
  const Instruction& all_reduce = main.root_instruction();
  EXPECT_EQ(all_reduce.opcode, "all-reduce");
  const int add = all_reduce.Called("to_apply");
  ASSERT_GE(add, 0);
  EXPECT_EQ(module.computations[static_cast<size_t>(add)].name, "add.clone");
  EXPECT_EQ(module.FindComputation("%add.clone"), &module.computations[static_cast<size_t>(add)]);
  EXPECT_EQ(module.computations[static_cast<size_t>(add)].root_instruction().opcode, "add");
  EXPECT_EQ(all_reduce.operands[0], main.FindInstruction("dot.1"));
}

TEST(HloParser, HeaderAttributesAreTypedAndAllKeptInOrder) {
  const Module module = ParseModuleFile(ModulePath("collectives.hlo"));
  std::vector<std::string> names;
  for (const Attribute& attribute : module.header_attributes)
    names.push_back(attribute.name);
  EXPECT_THAT(names, ElementsAre("is_scheduled", "entry_computation_layout", "num_partitions",
                                 "replica_count", "input_output_alias", "frontend_attributes",
                                 "some_future_option"));
  ASSERT_EQ(module.input_output_aliases.size(), 1u);
  EXPECT_THAT(module.input_output_aliases[0].output_index, ElementsAre(1));
  EXPECT_EQ(module.input_output_aliases[0].parameter_number, 0);
  EXPECT_FALSE(module.input_output_aliases[0].must_alias);
  const Attribute* unknown = module.FindHeaderAttribute("some_future_option");
  ASSERT_NE(unknown, nullptr);
  EXPECT_EQ(unknown->text(), "{a=1 b=\"two\"}");
  EXPECT_EQ(unknown->value.Find("b")->value, "two");
  EXPECT_EQ(unknown->location.line(), 1);
  EXPECT_THAT(DecodeFrontendAttributes(*module.FindHeaderAttribute("frontend_attributes")),
              ElementsAre(std::pair<std::string, std::string>("fingerprint_before_lhs", "3f2a")));
  EXPECT_EQ(module.entry_computation_layout->result.ToString(),
            "(f32[64,128]{1,0}, f32[8,128]{1,0})");
}

TEST(HloParser, DebugTablesAfterTheHeaderAreKept) {
  const Module module = ParseModuleFile(ModulePath("collectives.hlo"));
  ASSERT_EQ(module.debug_tables.size(), 4u);
  EXPECT_EQ(module.debug_tables[0].name, "FileNames");
  EXPECT_EQ(module.debug_tables[0].rows.at(0),
            (std::pair<int64_t, std::string>(1, "\"/tmp/model.py\"")));
  EXPECT_EQ(module.debug_tables[3].name, "StackFrames");
  EXPECT_EQ(module.debug_tables[3].rows.at(0).second, "{file_location_id=1 parent_frame_id=0}");
  const Instruction& x = Find(module.entry_computation(), "x");
  EXPECT_EQ(x.metadata->stack_frame_id, 1);
  // An empty table and one this reader does not know are read the same way.
  const Module other = Parse(
      "HloModule m\n\nFunctionNames\n\nMoreNames\n7 \"x\"\n\nENTRY %e {\n  ROOT %c = f32[] "
      "constant(1)\n}\n");
  ASSERT_EQ(other.debug_tables.size(), 2u);
  EXPECT_TRUE(other.debug_tables[0].rows.empty());
  EXPECT_EQ(other.debug_tables[1].rows.at(0).first, 7);
}

TEST(HloParser, CollectivesAsyncPairsAndControlDependencies) {
  const Module module = ParseModuleFile(ModulePath("collectives.hlo"));
  const Computation& main = module.entry_computation();
  const Instruction& start = Find(main, "all-gather-start");
  EXPECT_EQ(start.shape.ToString(), "(f32[8,128]{1,0}, f32[64,128]{1,0})");
  ASSERT_TRUE(start.backend_config.has_value());
  EXPECT_EQ((*start.backend_config)["collective_backend_config"]["is_sync"], true);
  const Instruction& permute = Find(main, "collective-permute-start");
  ASSERT_TRUE(permute.backend_config.has_value());  // a JSON string is decoded too
  EXPECT_EQ((*permute.backend_config)["is_sync"], false);
  EXPECT_EQ(permute.backend_config_text, "{\"is_sync\":false}");
  const Instruction& custom = Find(main, "custom-call");
  EXPECT_FALSE(custom.backend_config.has_value());  // not JSON: kept as text
  EXPECT_EQ(custom.backend_config_text, "not json");
  EXPECT_EQ(DecodeString(custom.GetAttribute("custom_call_target")), "Sharding");
  EXPECT_EQ(DecodeString(custom.GetAttribute("api_version")), "API_VERSION_ORIGINAL");
  const Instruction& done = Find(main, "async-done");
  EXPECT_THAT(done.control_predecessors, ElementsAre(main.FindInstruction("reduce-scatter")));
  const Instruction& async_start = Find(main, "async-start");
  EXPECT_EQ(module.computations[static_cast<size_t>(async_start.Called("calls"))].name,
            "wrapped_negate_computation");
  EXPECT_THAT(DecodeFrontendAttributes(async_start.GetAttribute("frontend_attributes")),
              ElementsAre(std::pair<std::string, std::string>("_xla_stream_annotation", "1")));
  const Instruction& conditional = Find(main, "conditional");
  ASSERT_EQ(conditional.called_computations.size(), 2u);
  EXPECT_EQ(conditional.called_computations[0].attribute, "branch_computations");
  EXPECT_EQ(
      module.computations[static_cast<size_t>(conditional.called_computations[1].computation)].name,
      "branch_b");
  const Instruction& root = main.root_instruction();
  ASSERT_EQ(root.sharding->kind, HloSharding::Kind::kTuple);
  EXPECT_EQ(root.sharding->tuple_elements.at(1).tile_assignment_dimensions,
            (std::vector<int64_t>{8, 1}));
}

TEST(HloParser, WhileLoopWithTuplesAndKnownTripCount) {
  const Module module = ParseModuleFile(ModulePath("while_loop.hlo"));
  const Computation& main = module.entry_computation();
  const Instruction& loop = Find(main, "while");
  EXPECT_EQ(module.computations[static_cast<size_t>(loop.Called("condition"))].name, "condition");
  EXPECT_EQ(module.computations[static_cast<size_t>(loop.Called("body"))].name, "body");
  EXPECT_EQ((*loop.backend_config)["known_trip_count"]["n"], "4");
  EXPECT_EQ(main.root_instruction().tuple_index, 1);
  const Computation& condition = module.computations[0];
  EXPECT_EQ(DecodeComparisonDirection(condition.root_instruction().GetAttribute("direction")),
            ComparisonDirection::kLt);
  ASSERT_EQ(condition.signature_parameters.size(), 1u);
  EXPECT_EQ(condition.signature_parameters[0].second.ToString(), "(s32[], f32[4])");
  EXPECT_EQ(condition.signature_result->ToString(), "pred[]");
  const Instruction& twos = Find(module.computations[1], "twos");
  EXPECT_THAT(twos.literal_values, ElementsAre(2, 2, 2, 2));
}

TEST(HloParser, NamesWithoutPercentNoSignaturesNoEntryAndNoRoot) {
  const Module module = ParseModuleFile(ModulePath("shapes_and_ops.hlo"));
  EXPECT_EQ(module.entry_computation().name, "main");  // the last computation
  const Computation& compare = *module.FindComputation("compare_gt");
  EXPECT_FALSE(compare.signature_result.has_value());
  EXPECT_EQ(compare.root_instruction().name, "gt");  // no ROOT: the last instruction
  EXPECT_TRUE(compare.root_instruction().is_root);
  EXPECT_EQ(DecodeString(compare.root_instruction().GetAttribute("comparison_type")), "TOTALORDER");
}

TEST(HloParser, ShapesLayoutsAndElementTypes) {
  const Module module = ParseModuleFile(ModulePath("shapes_and_ops.hlo"));
  const Computation& main = module.entry_computation();
  const Instruction& image = Find(main, "image");
  ASSERT_TRUE(image.shape.layout.has_value());
  EXPECT_THAT(image.shape.layout->minor_to_major, ElementsAre(3, 2, 1, 0));
  EXPECT_EQ(image.shape.layout->tiles, "T(8,128)(2,1)");
  EXPECT_EQ(image.shape.layout->memory_space, 1);
  EXPECT_EQ(image.shape.ToString(), "f32[1,8,8,3]{3,2,1,0:T(8,128)(2,1)S(1)}");
  EXPECT_EQ(Find(main, "kernel").shape.element_type, PrimitiveType::kBF16);
  const Shape& dynamic = Find(main, "dynamic").shape;
  EXPECT_THAT(dynamic.dynamic_dimensions, ElementsAre(true, false));
  EXPECT_EQ(dynamic.ToString(), "f32[<=8,4]{1,0}");
  EXPECT_EQ(Find(main, "unbounded").shape.ToString(false), "f32[?,4]");
  EXPECT_TRUE(Find(main, "tok").shape.IsToken());
  const Shape& packed = Find(main, "packed").shape;
  EXPECT_EQ(packed.layout->element_size_in_bits, 4);
  EXPECT_EQ(packed.ByteSize(), 8);
  EXPECT_EQ(Find(main, "fp8").shape.element_type, PrimitiveType::kF8E4M3FN);
  const Shape& out = main.root_instruction().shape;
  ASSERT_TRUE(out.IsTuple());
  EXPECT_EQ(out.tuple_shapes.size(), 7u);
  EXPECT_EQ(out.tuple_shapes[1].ToString(), "(f32[8]{0}, s32[8]{0})");
}

TEST(HloParser, ConstantLiterals) {
  const Module module = ParseModuleFile(ModulePath("shapes_and_ops.hlo"));
  const Computation& main = module.entry_computation();
  EXPECT_THAT(Find(main, "zero").literal_values, ElementsAre(0));
  EXPECT_EQ(Find(main, "zero").literal_text, "0");
  EXPECT_TRUE(std::isinf(Find(main, "neg_inf").literal_values.at(0)));
  EXPECT_LT(Find(main, "neg_inf").literal_values.at(0), 0);
  EXPECT_TRUE(std::isnan(Find(main, "not_a_number").literal_values.at(0)));
  EXPECT_THAT(Find(main, "yes").literal_values, ElementsAre(1));
  EXPECT_THAT(Find(main, "vector").literal_values, ElementsAre(1, 2, 3));
  EXPECT_THAT(Find(main, "matrix").literal_values, ElementsAre(1, 2.5, -3, 4e-05));
  const Instruction& elided = Find(main, "elided");
  EXPECT_TRUE(elided.literal_elided);
  EXPECT_TRUE(elided.literal_values.empty());
  EXPECT_EQ(elided.literal_text, "{...}");
  EXPECT_THAT(Find(main, "complex").literal_values, ElementsAre(1, 2, 3, -4));
}

TEST(HloParser, ArrayGeometryAttributesDecode) {
  const Module module = ParseModuleFile(ModulePath("shapes_and_ops.hlo"));
  const Computation& main = module.entry_computation();
  const Instruction& conv = Find(main, "conv");
  const std::vector<WindowDimension> window = DecodeWindow(conv.GetAttribute("window"));
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].size, 3);
  EXPECT_EQ(window[0].stride, 2);
  EXPECT_EQ(window[1].padding_high, 1);
  const ConvolutionDimensionNumbers numbers = DecodeDimLabels(conv.GetAttribute("dim_labels"));
  EXPECT_EQ(numbers.input_feature_dimension, 3);
  EXPECT_EQ(numbers.kernel_output_feature_dimension, 3);
  EXPECT_THAT(numbers.output_spatial_dimensions, ElementsAre(1, 2));
  EXPECT_THAT(DecodePrecisions(conv.GetAttribute("operand_precision")),
              ElementsAre(Precision::kHighest, Precision::kDefault));
  EXPECT_EQ(DecodePadding(Find(main, "padded").GetAttribute("padding")).at(1),
            (PaddingDimension{1, 1, 0}));
  EXPECT_EQ(DecodeSlice(Find(main, "sliced").GetAttribute("slice")).at(2), (SliceRange{1, 5, 1}));
  EXPECT_EQ(Find(main, "pooled").Called("to_apply"), module.FindComputationIndex("max_f32"));
  const Instruction& gather = Find(main, "gather");
  EXPECT_THAT(DecodeIntList(gather.GetAttribute("slice_sizes")), ElementsAre(1, 4));
  EXPECT_EQ(DecodeInt(gather.GetAttribute("index_vector_dim")), 1);
  EXPECT_THAT(DecodeIntList(Find(main, "scatter").GetAttribute("scatter_dims_to_operand_dims")),
              ElementsAre(0));
  EXPECT_THAT(DecodeIntList(Find(main, "dslice").GetAttribute("dynamic_slice_sizes")),
              ElementsAre(2, 4));
  EXPECT_TRUE(DecodeBool(Find(main, "sort").GetAttribute("is_stable")));
  EXPECT_EQ(DecodeInt(Find(main, "iota").GetAttribute("iota_dimension")), 0);
  EXPECT_EQ(Find(main, "dus").operands.size(), 4u);
}

TEST(HloParser, InstructionsSpanLinesAndCommentsAreSkipped) {
  const Module module = Parse(
      "HloModule m // the header\n"
      "# a hash comment line\n"
      "ENTRY %main (p: f32[2]) -> f32[2] {\n"
      "  %p = f32[2]{0} parameter(0)  /* block\n comment */\n"
      "  ROOT %n = f32[2]{0}\n"
      "      negate(f32[2]{0} %p),\n"
      "      metadata={op_name=\"n\"\n"
      "                source_line=3}\n"
      "}\n");
  const Instruction& root = module.entry_computation().root_instruction();
  EXPECT_EQ(root.name, "n");
  EXPECT_EQ(root.location.line(), 6);  // the block comment spans a line
  EXPECT_EQ(root.location.column(), 8);
  EXPECT_EQ(root.metadata->source_line, 3);
  EXPECT_EQ(root.attributes.at(0).location.line(), 8);
}

TEST(HloParser, UnknownAttributesAreKeptGenerically) {
  const Module module =
      Parse(Entry("  ROOT %c = f32[] constant(1), future={x=[1,2] y={3} z=\"s\"}, flag=on, "
                  "opaque={\"k\": [1, {\"v\": 2}]}"));
  const Instruction& c = module.entry_computation().root_instruction();
  ASSERT_EQ(c.attributes.size(), 3u);
  const AttrValue& future = c.attributes[0].value;
  ASSERT_TRUE(future.IsList());
  EXPECT_EQ(future.items.at(0).key, "x");
  EXPECT_EQ(future.items.at(0).kind, AttrValue::Kind::kBracket);
  EXPECT_EQ(future.items.at(1).items.at(0).text, "3");
  EXPECT_EQ(future.items.at(2).kind, AttrValue::Kind::kString);
  EXPECT_EQ(c.attributes[1].value.text, "on");
  const AttrValue& opaque = c.attributes[2].value;
  ASSERT_EQ(opaque.items.at(0).kind, AttrValue::Kind::kPair);
  EXPECT_EQ(opaque.items.at(0).items.at(0).value, "k");
  EXPECT_EQ(opaque.items.at(0).items.at(1).text, "[1, {\"v\": 2}]");
}

TEST(HloParser, BareOperandsAndTypedOperandsResolveAlike) {
  const Module module =
      Parse(Entry("  %a = f32[2]{0} parameter(0)\n  %b = f32[2]{0} parameter(1)\n"
                  "  %t = (f32[2]{0}, (f32[2]{0}, token[])) parameter(2)\n"
                  "  %s = f32[2]{0} add(f32[2]{0} %a, b)\n"
                  "  ROOT %g = (f32[2]{0}, token[]) get-tuple-element((f32[2]{0}, (f32[2]{0}, "
                  "token[])) %t), index=1"));
  const Computation& main = module.entry_computation();
  EXPECT_THAT(Find(main, "s").operands, ElementsAre(0, 1));
  EXPECT_EQ(main.root_instruction().tuple_index, 1);
  EXPECT_EQ(main.root_instruction().shape.ToString(), "(f32[2]{0}, token[])");
}

TEST(HloParser, ComputationAttributesAfterTheSignature) {
  const Module module = Parse(
      "HloModule m\n%host (p: f32[]) -> f32[], execution_thread=\"host\" {\n  ROOT %p = f32[] "
      "parameter(0)\n}\n"
      "ENTRY %main {\n  %x = f32[] parameter(0)\n  ROOT %c = f32[] call(%x), to_apply=%host\n}\n");
  const Computation& host = module.computations.at(0);
  ASSERT_EQ(host.attributes.size(), 1u);
  EXPECT_EQ(DecodeString(host.attributes[0]), "host");
}

TEST(HloParser, ReadsAFileAndNamesItInErrors) {
  const std::string path = ModulePath("while_loop.hlo");
  EXPECT_EQ(ParseModuleFile(path).file_name, path);
}

}  // namespace
}  // namespace tpusim::hlo
