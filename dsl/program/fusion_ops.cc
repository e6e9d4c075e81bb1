// The ops XLA's compiler makes rather than a user writes: a fusion (one kernel computing a
// whole computation), a custom call charged from its own cost estimate, and the device's
// index (partition-id, replica-id).
//
// A fusion is charged as one kernel: the roofline of its inner dots (MXU), its inner
// elementwise work (VPU) and its own operands and results through HBM once (docs/
// time-model.md), not as the sum of its inner ops each touching HBM.

#include "dsl/program/context.h"
#include "dsl/program/op_registry.h"

namespace tpusim::dsl {

namespace {

std::string Type(const ShapeDtype& t) {
  return TypeString(t.dtype, t.shape);
}

OpDef Fusion() {
  OpDef def;
  def.name = "fusion";
  def.summary = "XLA's fusion: `computation` run as one kernel on the operands";
  def.min_operands = 0;
  def.max_operands = -1;
  def.attributes = {
      AttrSpec::Computation("computation", "what it computes"),
      AttrSpec::Of(
          base::Param::String("kind", "kLoop, kInput, kOutput or kCustom (all are charged alike)")
              .Default("kLoop"))};
  def.shape = [](const OpTyping& t) {
    const Computation& c = t.attrs.at("computation").AsComputation();
    const std::vector<ShapeDtype> params = c.parameter_types();
    if (params.size() != t.operands.size()) {
      ThrowOpError(t.op, "%" + c.name() + " takes " + std::to_string(params.size()) +
                             " parameters, but the fusion passes " +
                             std::to_string(t.operands.size()) + " operands.");
    }
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].shape != t.operands[i].shape || params[i].dtype != t.operands[i].dtype) {
        ThrowOpError(t.op, "operand " + std::to_string(i) + " is " + Type(t.operands[i]) +
                               " but %" + c.name() + "'s parameter " + std::to_string(i) + " is " +
                               Type(params[i]) + ".");
      }
    }
    return c.result_types();
  };
  def.compute = [](const OpCompute& c) {
    return c.attrs.at("computation").AsComputation().Evaluate(c.operands);
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>& r) {
    XlaWork work = t.attrs.at("computation").AsComputation().Work();
    work.hbm_read_bytes = Bytes(t.operands);
    work.hbm_write_bytes = Bytes(r);
    return work;
  };
  return def;
}

OpDef CostEstimate() {
  OpDef def;
  def.name = "cost_estimate";
  def.summary =
      "an opaque op (a custom call) charged from the cost its producer estimated: "
      "flops on the MXU, bytes_accessed through HBM; no numerics";
  def.min_operands = 0;
  def.max_operands = -1;
  def.attributes = {
      AttrSpec::Of(base::Param::IntLists("result_shapes", "the results' shapes")),
      AttrSpec::Of(base::Param::Strings("result_dtypes", "the results' dtypes")),
      AttrSpec::Of(base::Param::Double("flops", "MXU FLOPs").Default(0.0)),
      AttrSpec::Of(
          base::Param::Double("transcendentals", "elementwise transcendentals").Default(0.0)),
      AttrSpec::Of(
          base::Param::Double("bytes_accessed", "HBM bytes read and written").Default(0.0)),
      AttrSpec::Of(DTypeAttr("dtype", "the dots' operand dtype").Default("bf16"))};
  def.shape = [](const OpTyping& t) {
    const auto& shapes = t.attrs.at("result_shapes").AsIntLists();
    const auto& dtypes = t.attrs.at("result_dtypes").AsStrings();
    if (shapes.size() != dtypes.size()) {
      ThrowOpError(t.op, "result_shapes and result_dtypes differ in length.");
    }
    std::vector<ShapeDtype> out;
    for (size_t i = 0; i < shapes.size(); ++i)
      out.push_back({Shape(shapes[i].begin(), shapes[i].end()), ParseDType(dtypes[i])});
    return out;
  };
  def.work = [](const OpTyping& t, const std::vector<ShapeDtype>&) {
    XlaWork work;
    const double flops = t.attrs.at("flops").AsFloat();
    if (flops > 0)
      work.dots.push_back({flops, MxuInputOf(t.attrs.at("dtype").AsDType()), Precision::kDefault});
    work.vector_ops = t.attrs.at("transcendentals").AsFloat() * 8;
    // XLA's estimate does not say which of the bytes are reads: time does not care.
    work.hbm_read_bytes = t.attrs.at("bytes_accessed").AsFloat();
    return work;
  };
  return def;
}

OpDef DeviceIndex() {
  OpDef def;
  def.name = "device_index";
  def.summary =
      "this device's number in a numbering of the mesh (XLA's partition-id and "
      "replica-id): values[logical device id]; free";
  def.min_operands = def.max_operands = 0;
  def.attributes = {
      AttrSpec::Of(base::Param::Ints("values", "the number of each device, by logical id")),
      AttrSpec::Of(DTypeAttr("dtype", "the result's dtype").Default("uint32"))};
  def.shape = [](const OpTyping& t) {
    const auto& values = t.attrs.at("values").AsInts();
    if (static_cast<int>(values.size()) != t.mesh.devices()) {
      ThrowOpError(t.op, "values has " + std::to_string(values.size()) + " entries but " +
                             t.mesh.Describe() + " has " + std::to_string(t.mesh.devices()) +
                             " devices; give one per device.");
    }
    return std::vector<ShapeDtype>{{Shape{}, t.attrs.at("dtype").AsDType()}};
  };
  def.run = [](OpRun& r) {
    if (!r.ctx.functional()) return;
    Array out(Shape{}, r.results[0].dtype());
    out.SetFlat(0, static_cast<double>(r.attrs.at("values").AsInts()[r.ctx.device_id()]));
    r.ctx.Write(r.results[0], out);
  };
  return def;
}

}  // namespace

void RegisterFusionOps(OpRegistry& registry) {
  registry.Add(Fusion());
  registry.Add(CostEstimate());
  registry.Add(DeviceIndex());
}

}  // namespace tpusim::dsl
