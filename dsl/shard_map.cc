#include "dsl/shard_map.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "base/core_port.h"
#include "dsl/matmul_memo.h"
#include "dsl/program/call_instance.h"
#include "dsl/program/runtime.h"

namespace tpusim::dsl {

namespace {

// The engines of runs with RunConfig::leave_model_at_exit, never destroyed: held from a
// pointer that is never freed, so they stay reachable and exit does not destroy them.
std::vector<std::unique_ptr<base::Engine>>& ModelsLeftAtExit() {
  static auto* models = new std::vector<std::unique_ptr<base::Engine>>();
  return *models;
}

// "'x'", "'x' and 'y'".
std::string AxesText(const std::vector<std::string>& axes) {
  std::string text;
  for (size_t i = 0; i < axes.size(); ++i)
    text += (i == 0 ? "'" : i + 1 == axes.size() ? " and '" : ", '") + axes[i] + "'";
  return text;
}

// Whether two replicas of a block agree: exactly for integers; for floats within rounding,
// since each device may sum a reduction in its own order (a psum's result differs in its
// last bits from device to device). Another device's data, as an axis left out of an
// out_spec by mistake gives, differs far beyond that.
Comparison CompareReplicas(const Array& replica, const Array& canonical) {
  if (replica.SameBytes(canonical)) return {};
  const DType dtype = canonical.dtype();
  if (dtype != DType::kF32 && dtype != DType::kBF16) return CompareExact(replica, canonical);
  const double rtol = dtype == DType::kF32 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -2);
  double scale = 0;
  for (int64_t i = 0, elements = canonical.size(); i < elements; ++i) {
    const double v = std::abs(canonical.GetFlat(i));
    if (std::isfinite(v)) scale = std::max(scale, v);
  }
  return CompareClose(replica, canonical, rtol, rtol * scale);
}

// An out_spec that leaves out a mesh axis says the value is the same along it; JAX refuses
// one that differs there (it must be replicated, e.g. by a psum). A functional run
// compares each device's block with the copy assembling uses; "" when all agree.
std::string ReplicaMismatch(const Mesh& mesh, const PartitionSpec& spec,
                            const std::vector<Array>& blocks, const std::string& output) {
  int first = -1;
  std::vector<int> differing;
  std::string detail;
  for (int device = 0; device < mesh.devices(); ++device) {
    const int canonical = spec.CanonicalReplica(mesh, device);
    if (canonical == device || (first >= 0 && canonical != first)) continue;
    const Comparison c = CompareReplicas(blocks[device], blocks[canonical]);
    if (c.equal) continue;
    if (first < 0) {
      first = canonical;
      detail = c.detail;
    }
    differing.push_back(device);
  }
  if (first < 0) return "";
  std::string devices;
  for (size_t i = 0; i < differing.size(); ++i)
    devices += (i == 0                      ? ""
                : i + 1 == differing.size() ? " and "
                                            : ", ") +
               std::to_string(differing[i]);
  const std::string axes = AxesText(spec.ReplicatedAxes(mesh));
  return output + " has out_spec " + spec.Describe() + ", which says it is the same on every " +
         "device along " + axes + ", but device" + (differing.size() > 1 ? "s " : " ") + devices +
         (differing.size() > 1 ? " hold" : " holds") + " other values than device " +
         std::to_string(first) + " (" + detail +
         "). JAX refuses this: make the value the same along " + axes + " (e.g. psum it over " +
         axes + "), or give it an out_spec that names the axis it differs along.";
}

// What a NaN result or a run out of memory may come from: the buffers the run read before
// anything wrote them (they read as NaN, or an integer's largest value, which as a size or
// index asks for too much). "" when there are none.
std::string UnwrittenReadsNote(const base::RunStats& stats) {
  const auto& reads = stats.unwritten_reads;
  if (reads.empty()) return "";
  constexpr size_t kShown = 4;
  std::string list;
  for (size_t i = 0; i < reads.size() && i < kShown; ++i)
    list += (i ? ", " : "") + reads[i];
  if (reads.size() > kShown) list += " and " + std::to_string(reads.size() - kShown) + " more";
  return "The run read memory that nothing had written, which reads as NaN (integers: the "
         "dtype's largest value): " +
         list +
         ". Write it before reading it (fill an accumulator, wait for the DMA that fills a "
         "buffer).";
}

// A reference computed in f32 (or better) misses the chip's one-pass dots by bf16
// rounding; the user's likely fix is the precision, not the kernel.
std::string OnePassNote(const base::RunStats& stats) {
  uint64_t dots = 0;
  for (const base::CoreStats& core : stats.cores)
    dots += core.f32_dots_at_one_pass;
  if (dots == 0) return "";
  return "The run's dots of f32 operands ran at DEFAULT precision: one bf16 pass, as on the chip, "
         "which "
         "rounds their operands to bf16 (about 3 significant digits). For f32 accuracy run "
         "them at precision HIGHEST (the entry's precision parameter, or the dot's precision "
         "argument), or compare with a bf16 tolerance";
}

}  // namespace

PallasCall pallas_call(std::string name, KernelFn kernel, GridSpec grid_spec,
                       std::vector<ShapeDtype> out_shape, CompilerParams compiler_params,
                       InputOutputAliases input_output_aliases) {
  PallasCall call;
  call.name = std::move(name);
  call.kernel = std::move(kernel);
  call.grid_spec = std::move(grid_spec);
  call.out_shape = std::move(out_shape);
  call.compiler_params = std::move(compiler_params);
  call.input_output_aliases = std::move(input_output_aliases);
  return call;
}

ShardMap::ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call)
    : mesh_(std::move(mesh)),
      in_specs_(std::move(in_specs)),
      out_specs_(std::move(out_specs)),
      call_(std::move(call)),
      name_(call_->name) {
  if (out_specs_.size() != call_->out_shape.size()) {
    throw Error(ErrorKind::kInvalidArgument, call_->name + ": shard_map has " +
                                                 std::to_string(out_specs_.size()) +
                                                 " out_specs but the pallas_call has " +
                                                 std::to_string(call_->out_shape.size()) +
                                                 " outputs; give one PartitionSpec per output.");
  }
  for (size_t o = 0; o < out_specs_.size(); ++o) {
    const Shape& block = call_->out_shape[o].shape;
    if (out_specs_[o].entries().size() > block.size()) {
      throw Error(ErrorKind::kInvalidArgument, call_->name + ": out_specs[" + std::to_string(o) +
                                                   "] " + out_specs_[o].Describe() + " names " +
                                                   std::to_string(out_specs_[o].entries().size()) +
                                                   " dimensions, but output " + std::to_string(o) +
                                                   " has rank " + std::to_string(block.size()) +
                                                   " (block shape " + ShapeString(block) +
                                                   "); give at most one entry per dimension.");
    }
  }
  CheckSpecAxes();
  CheckPallasCall(*call_, in_specs_.size());
  // BlockSpecs are checked against the operands' shapes in Run (CallInstance).
  body_ = [call = *call_](ProgramContext& ctx, const std::vector<Value>& inputs) {
    return ctx.pallas_call(call, inputs);
  };
}

ShardMap::ShardMap(Mesh mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, ProgramBody body, std::string name)
    : mesh_(std::move(mesh)),
      in_specs_(std::move(in_specs)),
      out_specs_(std::move(out_specs)),
      body_(std::move(body)),
      name_(std::move(name)) {
  CheckSpecAxes();
}

void ShardMap::CheckSpecAxes() const {
  for (const auto* specs : {&in_specs_, &out_specs_}) {
    for (const auto& spec : *specs) {
      for (const auto& entry : spec.entries()) {
        for (const auto& axis : entry.axes)
          mesh_.AxisIndex(axis);  // throws, naming the mesh's axes
      }
    }
  }
}

const PallasCall& ShardMap::call() const {
  if (!call_) {
    throw Error(ErrorKind::kInvalidArgument,
                name_ + " is a program, not a single pallas_call; it has no call().");
  }
  return *call_;
}

ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, PallasCall call) {
  return ShardMap(mesh, std::move(in_specs), std::move(out_specs), std::move(call));
}

ShardMap shard_map(const Mesh& mesh, std::vector<PartitionSpec> in_specs,
                   std::vector<PartitionSpec> out_specs, ProgramBody body, std::string name) {
  return ShardMap(mesh, std::move(in_specs), std::move(out_specs), std::move(body),
                  std::move(name));
}

std::string ShardMap::InputName(size_t i) const {
  if (call_ && i < call_->in_names.size()) return call_->in_names[i];
  return "in" + std::to_string(i);
}

std::string ShardMap::OutputName(size_t i) const {
  std::string name = "output " + std::to_string(i);
  if (call_ && i < call_->out_names.size()) name += " ('" + call_->out_names[i] + "')";
  return name;
}

std::vector<ShapeDtype> ShardMap::InputBlocks(const std::vector<Array>& inputs) const {
  if (inputs.size() != in_specs_.size()) {
    throw Error(ErrorKind::kInvalidArgument, name_ + " takes " + std::to_string(in_specs_.size()) +
                                                 " inputs, got " + std::to_string(inputs.size()) +
                                                 ".");
  }
  std::vector<ShapeDtype> in_blocks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_blocks.push_back(
        ShapeDtype{in_specs_[i].BlockShape(mesh_, inputs[i].shape(), "input " + InputName(i)),
                   inputs[i].dtype()});
  }
  return in_blocks;
}

void ShardMap::Check(const std::vector<Array>& inputs) const {
  const std::vector<ShapeDtype> in_blocks = InputBlocks(inputs);
  if (call_) CallInstance(mesh_, *call_, in_blocks);
}

RunResult ShardMap::Run(const std::vector<Array>& inputs, const base::RunConfig& config) const {
  const MatmulMemoRun memo;
  const std::vector<ShapeDtype> in_blocks = InputBlocks(inputs);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (config.functional && !inputs[i].has_data()) {
      throw Error(ErrorKind::kInvalidArgument,
                  name_ + ": input " + InputName(i) +
                      " is a placeholder without data; functional runs need real inputs.");
    }
    if (call_ && static_cast<int>(i) < call_->grid_spec.num_scalar_prefetch &&
        !inputs[i].has_data()) {
      throw Error(ErrorKind::kInvalidArgument,
                  name_ + ": scalar-prefetch input " + InputName(i) +
                      " is a placeholder without data, but index maps read its values even in "
                      "timing-only runs; pass its real values.");
    }
  }
  // A kernel's BlockSpecs fail here, before the run, as they always have.
  if (call_) CallInstance(mesh_, *call_, in_blocks);

  std::unique_ptr<base::Engine> engine = base::BuildEngine(mesh_.topology(), config);
  ProgramRun run(mesh_, *engine, config);

  std::vector<std::vector<Value>> device_inputs(mesh_.devices());
  // Per input, the buffer written first for each block of it: a device whose block is the
  // same (a replicated input, or one sharded along fewer axes than the mesh has) shares it.
  std::vector<std::map<Shape, base::BufferHandle>> written(inputs.size());
  for (int device = 0; device < mesh_.devices(); ++device) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      Value v = Value::Allocate(run.hbm[device], in_blocks[i], InputName(i));
      const Array& input = inputs[i];
      auto block = [this, &input, i, device] {
        return InputBlock(static_cast<int>(i), input, device);
      };
      if (config.functional) {
        const auto [first, fresh] = written[i].try_emplace(
            in_specs_[i].BlockOffsets(mesh_, input.shape(), device), v.buffer());
        if (fresh) {
          const Array values = block();
          engine->WriteHost(v.buffer(), values.data(), values.nbytes());
        } else {
          engine->CopyHost(first->second, v.buffer());
        }
      } else if (input.has_data()) {
        v.set_host_values(block);  // for scalar prefetch in timing-only runs, sliced on demand
      }
      device_inputs[device].push_back(v);
    }
  }

  RunResult result;
  static_cast<base::RunOutcome&>(result) = engine->Run(
      [&](base::CorePort& port) {
        run.RunDevice(port, body_, device_inputs[port.chip()], out_specs_);
      },
      name_);
  const std::string unwritten = UnwrittenReadsNote(result.stats);
  if (result.error_kind == ErrorKind::kCapacity && !unwritten.empty())
    result.error += " " + unwritten;
  if (result.ok) {
    const std::string divergence = run.CheckAfterRun();
    if (!divergence.empty()) {
      result.ok = false;
      result.error_kind = ErrorKind::kInvalidArgument;
      result.error = divergence;
    }
  }
  for (int device = 0; device < mesh_.devices(); ++device) {
    result.peak_hbm_bytes.push_back(run.hbm[device]->peak_bytes());
    result.async_wait.push_back(run.devices[device].async_wait);
    if (run.devices[device].end > run.devices[result.critical_device].end)
      result.critical_device = device;
  }
  result.op_times = std::move(run.devices[result.critical_device].op_times);
  result.collectives = std::move(run.devices[result.critical_device].collectives);
  if (config.functional && result.ok) {
    // Each output buffer's bytes move out of the model, once: a buffer that is two outputs
    // (an output aliased to another) is copied from the first.
    std::map<std::tuple<uint32_t, int, uint32_t, uint32_t>, const Array*> taken;
    for (size_t o = 0; o < out_specs_.size(); ++o) {
      const ShapeDtype block = run.outputs[0][o].type();
      std::vector<Array> per_device;
      per_device.reserve(static_cast<size_t>(mesh_.devices()));
      for (int device = 0; device < mesh_.devices(); ++device) {
        const base::BufferHandle buffer = run.outputs[device][o].buffer();
        const auto key =
            std::make_tuple(buffer.chip, static_cast<int>(buffer.space), buffer.core, buffer.index);
        const auto first = taken.find(key);
        Array out = Array::Placeholder(block.shape, block.dtype);
        if (first != taken.end()) {
          out.bytes() = first->second->bytes();
        } else {
          out.ShareBytes(engine->TakeHost(buffer));
        }
        per_device.push_back(std::move(out));
        if (first == taken.end()) taken.emplace(key, &per_device.back());
      }
      const std::string mismatch =
          config.check_replication
              ? ReplicaMismatch(mesh_, out_specs_[o], per_device, OutputName(o))
              : std::string();
      if (!mismatch.empty() && result.ok) {
        result.ok = false;
        result.error_kind = ErrorKind::kInvalidArgument;
        result.error = mismatch;
      }
      result.outputs.push_back(AssembleOutput(static_cast<int>(o), per_device));
      result.device_outputs.push_back(std::move(per_device));
    }
  }
  run.Detach();
  if (config.leave_model_at_exit) {
    engine->LeaveForExit();
    ModelsLeftAtExit().push_back(std::move(engine));
  }
  return result;
}

Array ShardMap::ExpectedBlock(int output, const Array& global, int device) const {
  const auto& spec = out_specs_[output];
  const Shape block = spec.BlockShape(mesh_, global.shape(), "expected output");
  return global.Slice(spec.BlockOffsets(mesh_, global.shape(), device), block);
}

Array ShardMap::InputBlock(int input, const Array& global, int device) const {
  const PartitionSpec& spec = in_specs_[static_cast<size_t>(input)];
  const Shape block = spec.BlockShape(mesh_, global.shape(), InputName(static_cast<size_t>(input)));
  return global.Slice(spec.BlockOffsets(mesh_, global.shape(), device), block);
}

Array ShardMap::AssembleOutput(int output, const std::vector<Array>& blocks) const {
  const PartitionSpec& spec = out_specs_[static_cast<size_t>(output)];
  const Shape global = spec.GlobalShape(mesh_, blocks.at(0).shape());
  Array assembled(global, blocks[0].dtype());
  for (int device = 0; device < mesh_.devices(); ++device) {
    if (spec.IsCanonicalReplica(mesh_, device))
      assembled.Place(blocks[static_cast<size_t>(device)],
                      spec.BlockOffsets(mesh_, global, device));
  }
  return assembled;
}

Comparison CheckAgainstReference(const ShardMap& program, const RunResult& result,
                                 const std::vector<Array>& expected, double rtol, double atol) {
  Comparison c;
  if (result.device_outputs.size() != expected.size()) {
    c.equal = false;
    c.detail = "the run produced " + std::to_string(result.device_outputs.size()) +
               " outputs (none in timing-only mode), expected " + std::to_string(expected.size());
    return c;
  }
  for (size_t o = 0; o < expected.size(); ++o) {
    const PartitionSpec& spec = program.out_specs()[o];
    // Devices whose outputs are the very same bytes (DMAs shared them) and whose expected
    // blocks are the same block of the reference are checked once.
    std::vector<std::pair<const Array*, Shape>> checked;
    for (int device = 0; device < program.mesh().devices(); ++device) {
      const Array& actual = result.device_outputs[o][device];
      const Shape offsets = spec.BlockOffsets(program.mesh(), expected[o].shape(), device);
      if (std::any_of(checked.begin(), checked.end(), [&](const auto& done) {
            return done.second == offsets && done.first->SharesBytesWith(actual);
          })) {
        continue;
      }
      checked.emplace_back(&actual, offsets);
      const Array want = program.ExpectedBlock(static_cast<int>(o), expected[o], device);
      Comparison d = CompareClose(actual, want, rtol, atol);
      if (!d.equal) {
        // One coordinate vector: begin() and end() of two temporaries would be two arrays.
        const std::vector<int> coords = program.mesh().CoordsOf(device);
        d.detail = "output " + std::to_string(o) + " on device " + std::to_string(device) + " " +
                   ShapeString(Shape(coords.begin(), coords.end())) + ": " + d.detail;
        const std::string unwritten = UnwrittenReadsNote(result.stats);
        if (!unwritten.empty()) d.detail += ". " + unwritten;
        if (want.dtype() == DType::kF32) {
          const std::string one_pass = OnePassNote(result.stats);
          if (!one_pass.empty()) d.detail += ". " + one_pass;
        }
        return d;
      }
    }
  }
  return c;
}

}  // namespace tpusim::dsl
