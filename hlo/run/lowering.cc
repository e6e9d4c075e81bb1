#include "hlo/run/lowering.h"

#include <algorithm>
#include <set>

#include "hlo/run/types.h"

namespace tpusim::hlo::run {

namespace {

using dsl::Attr;
using dsl::Attributes;

// XLA opcode -> program op, for ops whose attributes need no translation.
const std::map<std::string, std::string>& PlainOps() {
  static const auto* ops = new std::map<std::string, std::string>{
      {"abs", "abs"},
      {"negate", "neg"},
      {"sign", "sign"},
      {"exponential", "exp"},
      {"exponential-minus-one", "expm1"},
      {"log", "log"},
      {"log-plus-one", "log1p"},
      {"tanh", "tanh"},
      {"logistic", "logistic"},
      {"sqrt", "sqrt"},
      {"rsqrt", "rsqrt"},
      {"cbrt", "cbrt"},
      {"sine", "sin"},
      {"cosine", "cos"},
      {"tan", "tan"},
      {"erf", "erf"},
      {"floor", "floor"},
      {"ceil", "ceil"},
      {"round-nearest-afz", "round"},
      {"round-nearest-even", "round_nearest_even"},
      {"is-finite", "is_finite"},
      {"not", "not"},
      {"add", "add"},
      {"subtract", "sub"},
      {"multiply", "multiply"},
      {"divide", "div"},
      {"remainder", "rem"},
      {"maximum", "max"},
      {"minimum", "min"},
      {"power", "pow"},
      {"atan2", "atan2"},
      {"and", "and"},
      {"or", "or"},
      {"xor", "xor"},
      {"shift-left", "shift_left"},
      {"shift-right-arithmetic", "shift_right_arithmetic"},
      {"shift-right-logical", "shift_right_logical"},
      {"select", "select"},
      {"clamp", "clamp"},
      {"copy", "copy"},
  };
  return *ops;
}

const std::set<std::string>& StructuralOps() {
  static const auto* ops = new std::set<std::string>{"parameter",
                                                     "tuple",
                                                     "get-tuple-element",
                                                     "bitcast",
                                                     "after-all",
                                                     "add-dependency",
                                                     "opt-barrier",
                                                     "while",
                                                     "call",
                                                     "conditional",
                                                     "async-start",
                                                     "async-update",
                                                     "async-done",
                                                     "copy-start",
                                                     "copy-done",
                                                     "all-gather-done",
                                                     "all-reduce-done",
                                                     "collective-permute-done",
                                                     "reduce-scatter-done",
                                                     "all-to-all-done",
                                                     "send",
                                                     "send-done",
                                                     "recv",
                                                     "recv-done",
                                                     "domain"};
  return *ops;
}

const std::set<std::string>& LoweredOpcodes() {
  static const auto* ops = new std::set<std::string>{"compare",        "convert",
                                                     "broadcast",      "reshape",
                                                     "transpose",      "slice",
                                                     "dynamic-slice",  "dynamic-update-slice",
                                                     "concatenate",    "pad",
                                                     "iota",           "reverse",
                                                     "constant",       "dot",
                                                     "convolution",    "reduce",
                                                     "reduce-window",  "sort",
                                                     "gather",         "scatter",
                                                     "fusion",         "partition-id",
                                                     "replica-id",     "custom-call",
                                                     "all-gather",     "all-reduce",
                                                     "reduce-scatter", "collective-permute",
                                                     "all-to-all",     "collective-broadcast"};
  return *ops;
}

[[noreturn]] void Unsupported(const Instruction& i, const std::string& why) {
  FailAt(i.location, "'" + i.name + "' (" + i.opcode + "): " + why);
}

dsl::ShapeDtype ResultType(const Instruction& i) {
  return TypeOf(i.shape, "the result of '" + i.name + "'");
}

std::vector<int64_t> Ints(const Instruction& i, const char* name) {
  return DecodeIntList(i.GetAttribute(name));
}

std::vector<int64_t> IntsOr(const Instruction& i, const char* name) {
  const Attribute* a = i.FindAttribute(name);
  return a ? DecodeIntList(*a) : std::vector<int64_t>{};
}

int64_t FirstDimension(const Instruction& i) {
  const std::vector<int64_t> dims = Ints(i, "dimensions");
  if (dims.size() != 1) Unsupported(i, "expected one dimension in dimensions={...}.");
  return dims[0];
}

dsl::Precision PrecisionOf(const Instruction& i) {
  const Attribute* a = i.FindAttribute("operand_precision");
  if (!a) a = i.FindAttribute("precision_config");
  dsl::Precision best = dsl::Precision::kDefault;
  if (!a) return best;
  for (Precision p : DecodePrecisions(*a)) {
    if (p == Precision::kHighest) best = dsl::Precision::kHighest;
    if (p == Precision::kHigh && best == dsl::Precision::kDefault) best = dsl::Precision::kHigh;
  }
  return best;
}

dsl::ComputationPtr Called(const Instruction& i, const char* attribute,
                           const LoweringContext& context) {
  const int index = i.Called(attribute);
  if (index < 0) Unsupported(i, std::string("needs ") + attribute + "=%computation.");
  return context.computation(index);
}

dsl::IntLists ToIntLists(const std::vector<std::vector<int>>& groups) {
  dsl::IntLists lists;
  for (const auto& g : groups)
    lists.emplace_back(g.begin(), g.end());
  return lists;
}

// Searches a JSON backend config for `key` at any depth.
const nlohmann::json* FindKey(const nlohmann::json& json, const std::string& key) {
  if (json.is_object()) {
    if (auto it = json.find(key); it != json.end()) return &*it;
    for (const auto& [k, v] : json.items()) {
      if (const nlohmann::json* found = FindKey(v, key)) return found;
    }
  } else if (json.is_array()) {
    for (const auto& v : json) {
      if (const nlohmann::json* found = FindKey(v, key)) return found;
    }
  }
  return nullptr;
}

double Number(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    try {
      return std::stod(j.get<std::string>());
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

LoweredOp LowerCollective(const Instruction& i, const std::string& base,
                          const LoweringContext& context) {
  const auto groups = ToIntLists(context.devices.Groups(i));
  if (base == "all-gather") {
    return {"all_gather",
            {{"replica_groups", groups}, {"axis", FirstDimension(i)}, {"tiled", true}},
            "all_gather collective"};
  }
  if (base == "reduce-scatter") {
    return {"psum_scatter",
            {{"replica_groups", groups}, {"scatter_dimension", FirstDimension(i)}, {"tiled", true}},
            "psum_scatter collective"};
  }
  if (base == "all-to-all") {
    const int64_t d = FirstDimension(i);
    return {"all_to_all",
            {{"replica_groups", groups}, {"split_axis", d}, {"concat_axis", d}, {"tiled", true}},
            "all_to_all collective"};
  }
  if (base == "all-reduce") {
    const std::string reducer = Called(i, "to_apply", context)->Reducer();
    const std::string op = reducer == "add" ? "psum" : reducer == "max" ? "pmax" : "pmin";
    if (reducer != "add" && reducer != "max" && reducer != "min") {
      Unsupported(i, "reduces with %" + context.module.computations[i.Called("to_apply")].name +
                         ", which is not an add, a maximum or a minimum of its two parameters; "
                         "those are the all-reduces tpusim models.");
    }
    return {op, {{"replica_groups", groups}}, op + " collective"};
  }
  if (base == "collective-broadcast") {
    return {"collective_broadcast",
            {{"replica_groups", groups}},
            "collective_broadcast collective (from each group's first device)"};
  }
  // collective-permute: one group of every device, in logical order; pairs as logical ids.
  std::vector<int64_t> everyone;
  for (int d = 0; d < context.devices.devices(); ++d)
    everyone.push_back(d);
  dsl::IntPairs perm;
  for (const auto& [s, t] : context.devices.Pairs(i))
    perm.emplace_back(s, t);
  return {"ppermute",
          {{"replica_groups", dsl::IntLists{everyone}}, {"perm", perm}},
          "ppermute collective"};
}

LoweredOp LowerCustomCall(const Instruction& i, const LoweringContext& context) {
  const std::string target = DecodeString(i.GetAttribute("custom_call_target"));
  if (target == "Sharding" || target == "SPMDFullToShardShape" ||
      target == "SPMDShardToFullShape") {
    Unsupported(i, "the module has not been through SPMD partitioning ('" + target +
                       "' custom calls are what partitioning removes). Dump the compiled "
                       "module: jax.jit(f).lower(*args).compile().as_text(), not "
                       "lowered.as_text().");
  }
  if (target != "tpu_custom_call") {
    Unsupported(i, "custom-call target '" + target +
                       "' is not modelled; only tpu_custom_call (a Pallas kernel) is. Set "
                       "unknown_ops to free to charge it nothing.");
  }
  const nlohmann::json config = i.backend_config.value_or(nlohmann::json::object());
  std::string kernel;
  if (const nlohmann::json* name = FindKey(config, "kernel_name"); name && name->is_string())
    kernel = name->get<std::string>();
  if (auto it = context.kernel_map.find(kernel); it != context.kernel_map.end()) {
    return {"pallas_call",
            {{"call_target_name", it->second}},
            "the registered kernel " + it->second + " (kernel_map)"};
  }
  const nlohmann::json* cost = FindKey(config, "cost_estimate");
  if (!cost) {
    Unsupported(i, "the Pallas kernel '" + kernel +
                       "' has no cost_estimate in its backend_config and no kernel_map entry; "
                       "map it to a registered kernel with kernel_map=" +
                       (kernel.empty() ? "NAME" : kernel) + "=ENTRY.");
  }
  dsl::IntLists shapes;
  std::vector<std::string> dtypes;
  const std::vector<Shape> results =
      i.shape.IsTuple() ? i.shape.tuple_shapes : std::vector<Shape>{i.shape};
  for (const Shape& s : results) {
    const dsl::ShapeDtype t = TypeOf(s, "a result of '" + i.name + "'");
    shapes.emplace_back(t.shape.begin(), t.shape.end());
    dtypes.emplace_back(dsl::DTypeName(t.dtype));
  }
  Attributes attrs = {{"result_shapes", shapes}, {"result_dtypes", dtypes}};
  for (const char* key : {"flops", "transcendentals", "bytes_accessed"}) {
    if (auto it = cost->find(key); it != cost->end()) attrs.emplace(key, Number(*it));
  }
  return {"cost_estimate", attrs, "its backend_config's cost_estimate (kernel '" + kernel + "')"};
}

}  // namespace

bool IsStructural(const std::string& opcode) {
  return StructuralOps().count(opcode) > 0;
}

bool IsKnownOpcode(const std::string& opcode) {
  return IsStructural(opcode) || PlainOps().count(opcode) > 0 ||
         LoweredOpcodes().count(BaseOpcode(opcode)) > 0;
}

bool IsCollective(const std::string& opcode) {
  const std::string base = BaseOpcode(opcode);
  return base == "all-gather" || base == "all-reduce" || base == "reduce-scatter" ||
         base == "collective-permute" || base == "all-to-all" || base == "collective-broadcast";
}

std::string BaseOpcode(const std::string& opcode) {
  for (const char* suffix : {"-start", "-done", "-update"}) {
    const std::string s = suffix;
    if (opcode.size() > s.size() && opcode.compare(opcode.size() - s.size(), s.size(), s) == 0)
      return opcode.substr(0, opcode.size() - s.size());
  }
  return opcode;
}

LoweredOp Lower(const Instruction& i, const LoweringContext& context) {
  const std::string& opcode = i.opcode;
  if (auto it = PlainOps().find(opcode); it != PlainOps().end())
    return {it->second, {}, "memory-bound (operands and result through HBM)"};
  const std::string base = BaseOpcode(opcode);
  if (IsCollective(base)) return LowerCollective(i, base, context);
  if (opcode == "compare") {
    const Attribute& d = i.GetAttribute("direction");
    return {"compare", {{"direction", d.text()}}, "memory-bound"};
  }
  if (opcode == "convert") {
    return {"convert_element_type", {{"new_dtype", ResultType(i).dtype}}, "memory-bound"};
  }
  if (opcode == "broadcast") {
    const dsl::ShapeDtype out = ResultType(i);
    return {"broadcast_in_dim",
            {{"shape", std::vector<int64_t>(out.shape.begin(), out.shape.end())},
             {"broadcast_dimensions", Ints(i, "dimensions")}},
            "memory-bound"};
  }
  if (opcode == "reshape") {
    const dsl::ShapeDtype out = ResultType(i);
    return {"reshape",
            {{"new_sizes", std::vector<int64_t>(out.shape.begin(), out.shape.end())}},
            "memory-bound (a copy; bitcasts are free)"};
  }
  if (opcode == "transpose") {
    return {"transpose", {{"permutation", Ints(i, "dimensions")}}, "memory-bound"};
  }
  if (opcode == "slice") {
    std::vector<int64_t> start, limit, strides;
    for (const SliceRange& r : DecodeSlice(i.GetAttribute("slice"))) {
      start.push_back(r.start);
      limit.push_back(r.limit);
      strides.push_back(r.stride);
    }
    return {"slice",
            {{"start_indices", start}, {"limit_indices", limit}, {"strides", strides}},
            "memory-bound (the slice only)"};
  }
  if (opcode == "dynamic-slice") {
    return {"dynamic_slice",
            {{"slice_sizes", Ints(i, "dynamic_slice_sizes")}},
            "memory-bound (the slice only)"};
  }
  if (opcode == "dynamic-update-slice") {
    return {"dynamic_update_slice", {}, "memory-bound (the update, in place)"};
  }
  if (opcode == "concatenate") {
    return {"concatenate", {{"dimension", FirstDimension(i)}}, "memory-bound"};
  }
  if (opcode == "pad") {
    dsl::IntLists config;
    for (const PaddingDimension& p : DecodePadding(i.GetAttribute("padding")))
      config.push_back({p.low, p.high, p.interior});
    return {"pad", {{"padding_config", config}}, "memory-bound"};
  }
  if (opcode == "iota") {
    const dsl::ShapeDtype out = ResultType(i);
    return {"iota",
            {{"shape", std::vector<int64_t>(out.shape.begin(), out.shape.end())},
             {"dtype", out.dtype},
             {"dimension", DecodeInt(i.GetAttribute("iota_dimension"))}},
            "memory-bound (writes its result)"};
  }
  if (opcode == "reverse") {
    return {"rev", {{"dimensions", Ints(i, "dimensions")}}, "memory-bound"};
  }
  if (opcode == "constant") {
    const dsl::ShapeDtype out = ResultType(i);
    Attributes attrs = {{"shape", std::vector<int64_t>(out.shape.begin(), out.shape.end())},
                        {"dtype", out.dtype}};
    if (!i.literal_elided && !i.literal_values.empty() && HasNumerics(i.shape.element_type))
      attrs.emplace("values", i.literal_values);
    return {"constant", attrs, "free (loaded with the program)"};
  }
  if (opcode == "dot") {
    Attributes attrs = {{"lhs_contracting_dims", IntsOr(i, "lhs_contracting_dims")},
                        {"rhs_contracting_dims", IntsOr(i, "rhs_contracting_dims")},
                        {"lhs_batch_dims", IntsOr(i, "lhs_batch_dims")},
                        {"rhs_batch_dims", IntsOr(i, "rhs_batch_dims")},
                        {"preferred_element_type", ResultType(i).dtype},
                        {"precision", PrecisionOf(i)}};
    return {"dot_general", attrs, "MXU roofline (FLOPs at the operands' passes, bytes in HBM)"};
  }
  if (opcode == "convolution") {
    const dsl::ShapeDtype out = ResultType(i);
    const ConvolutionDimensionNumbers dims = DecodeDimLabels(i.GetAttribute("dim_labels"));
    const Attribute* groups = i.FindAttribute("feature_group_count");
    return {"conv_general_dilated",
            {{"result_shape", std::vector<int64_t>(out.shape.begin(), out.shape.end())},
             {"result_dtype", out.dtype},
             {"kernel_output_feature_dim", dims.kernel_output_feature_dimension},
             {"feature_group_count", groups ? DecodeInt(*groups) : int64_t{1}},
             {"precision", PrecisionOf(i)}},
            "MXU roofline, as the dot it is"};
  }
  if (opcode == "reduce") {
    return {
        "reduce",
        {{"dimensions", Ints(i, "dimensions")}, {"computation", Called(i, "to_apply", context)}},
        "memory-bound"};
  }
  if (opcode == "reduce-window") {
    std::vector<int64_t> size, stride, base_dilation, window_dilation;
    dsl::IntLists padding;
    for (const WindowDimension& w : DecodeWindow(i.GetAttribute("window"))) {
      size.push_back(w.size);
      stride.push_back(w.stride);
      padding.push_back({w.padding_low, w.padding_high});
      base_dilation.push_back(w.base_dilation);
      window_dilation.push_back(w.window_dilation);
    }
    return {"reduce_window",
            {{"window_dimensions", size},
             {"window_strides", stride},
             {"padding", padding},
             {"base_dilations", base_dilation},
             {"window_dilations", window_dilation},
             {"computation", Called(i, "to_apply", context)}},
            "memory-bound (one VPU op per window element)"};
  }
  if (opcode == "sort") {
    const Attribute* stable = i.FindAttribute("is_stable");
    return {"sort",
            {{"dimension", FirstDimension(i)},
             {"is_stable", stable ? DecodeBool(*stable) : false},
             {"comparator", Called(i, "to_apply", context)}},
            "memory-bound (log2 n VPU ops per element)"};
  }
  if (opcode == "gather") {
    const dsl::ShapeDtype out = ResultType(i);
    return {"gather",
            {{"offset_dims", IntsOr(i, "offset_dims")},
             {"collapsed_slice_dims", IntsOr(i, "collapsed_slice_dims")},
             {"start_index_map", IntsOr(i, "start_index_map")},
             {"index_vector_dim", DecodeInt(i.GetAttribute("index_vector_dim"))},
             {"slice_sizes", Ints(i, "slice_sizes")},
             {"result_shape", std::vector<int64_t>(out.shape.begin(), out.shape.end())}},
            "memory-bound (indices, gathered slices)"};
  }
  if (opcode == "scatter") {
    return {"scatter",
            {{"update_window_dims", IntsOr(i, "update_window_dims")},
             {"inserted_window_dims", IntsOr(i, "inserted_window_dims")},
             {"scatter_dims_to_operand_dims", IntsOr(i, "scatter_dims_to_operand_dims")},
             {"index_vector_dim", DecodeInt(i.GetAttribute("index_vector_dim"))},
             {"computation", Called(i, "to_apply", context)}},
            "memory-bound (indices, updates, in place)"};
  }
  if (opcode == "fusion") {
    const Attribute* kind = i.FindAttribute("kind");
    return {"fusion",
            {{"computation", Called(i, "calls", context)},
             {"kind", kind ? kind->text() : std::string("kLoop")}},
            "one kernel: roofline of its MXU, VPU and HBM work"};
  }
  if (opcode == "partition-id" || opcode == "replica-id") {
    std::vector<int64_t> values;
    for (int d = 0; d < context.devices.devices(); ++d) {
      values.push_back(opcode == "partition-id" ? context.devices.PartitionOf(d)
                                                : context.devices.ReplicaOf(d));
    }
    return {"device_index", {{"values", values}, {"dtype", ResultType(i).dtype}}, "free"};
  }
  if (opcode == "custom-call") return LowerCustomCall(i, context);
  Unsupported(i, "the opcode '" + opcode +
                     "' is not modelled. Set unknown_ops to free to charge it nothing (it is "
                     "then listed in the report), or leave it out of the module.");
}

}  // namespace tpusim::hlo::run
