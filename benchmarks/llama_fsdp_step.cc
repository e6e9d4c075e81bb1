#include "benchmarks/llama_fsdp_step.h"

#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

namespace tpusim::bench {

namespace {

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// "bf16[1024,5120]{1,0}": row-major, as XLA prints a default layout.
std::string Type(const std::string& element, const std::vector<int64_t>& dims) {
  std::string layout = "{";
  for (size_t i = dims.size(); i-- > 0;) {
    layout += std::to_string(i);
    if (i) layout += ',';
  }
  return element + Dims(dims) + layout + "}";
}

// The dimensions of a printed type, "bf16[1024,5120]{1,0}" -> "1024x5120".
std::string DimsOf(const std::string& type) {
  const size_t open = type.find('['), close = type.find(']');
  std::string dims = type.substr(open + 1, close - open - 1);
  for (char& c : dims)
    if (c == ',') c = 'x';
  return dims;
}

std::string Float(double v) {
  std::ostringstream out;
  out.precision(9);
  out << v;
  return out.str();
}

// Writes a module: computations once each, then the entry's instructions.
class Writer {
 public:
  // A computation body: `params` are (name, type) and `lines` its instructions (the last is
  // the root). Written once per name.
  void Computation(const std::string& name,
                   const std::vector<std::pair<std::string, std::string>>& params,
                   const std::vector<std::string>& lines, const std::string& result) {
    if (!written_.insert(name).second) return;
    std::string signature;
    for (size_t i = 0; i < params.size(); ++i)
      signature += (i ? ", " : "") + params[i].first + ": " + Strip(params[i].second);
    computations_ += "%" + name + " (" + signature + ") -> " + Strip(result) + " {\n";
    for (size_t i = 0; i < params.size(); ++i) {
      computations_ += "  %" + params[i].first + " = " + params[i].second + " parameter(" +
                       std::to_string(i) + ")\n";
    }
    for (size_t i = 0; i < lines.size(); ++i)
      computations_ += "  " + std::string(i + 1 == lines.size() ? "ROOT " : "") + lines[i] + "\n";
    computations_ += "}\n\n";
  }

  // One entry instruction; returns its name.
  std::string Op(const std::string& name, const std::string& type, const std::string& call,
                 const std::string& op_name) {
    types_[name] = type;
    entry_ += "  %" + name + " = " + type + " " + call + ", metadata={op_name=\"jit(train_step)/" +
              op_name + "\" source_file=\"train.py\" source_line=" + std::to_string(++line_) +
              "}\n";
    return name;
  }
  // "bf16[...]{..} %name", as operands are printed.
  std::string Ref(const std::string& name) const { return types_.at(name) + " %" + name; }

  void Parameter(const std::string& name, const std::string& type, const std::string& sharding) {
    types_[name] = type;
    params_.push_back({name, type});
    entry_ += "  %" + name + " = " + type + " parameter(" + std::to_string(params_.size() - 1) +
              "), sharding=" + sharding + ", metadata={op_name=\"" + name + "\"}\n";
  }

  std::string Module(const std::string& root_tuple, const std::string& root_type,
                     const std::string& root_sharding) const {
    std::string layout = "(";
    std::string signature;
    for (size_t i = 0; i < params_.size(); ++i) {
      layout += (i ? ", " : "") + params_[i].second;
      signature += (i ? ", " : "") + params_[i].first + ": " + Strip(params_[i].second);
    }
    layout += ")->" + root_type;
    return "HloModule jit_train_step, is_scheduled=true, entry_computation_layout={" + layout +
           "}, num_partitions=8\n\n" + computations_ + "ENTRY %main_spmd (" + signature + ") -> " +
           Strip(root_type) + " {\n" + entry_ + "  ROOT %updated = " + root_type + " tuple(" +
           root_tuple + "), sharding=" + root_sharding + "\n}\n";
  }

 private:
  // A type without its layouts, as signatures print it.
  static std::string Strip(const std::string& type) {
    std::string out;
    int depth = 0;
    for (size_t i = 0; i < type.size(); ++i) {
      if (type[i] == '{' && i > 0 && type[i - 1] == ']') depth = 1;
      if (depth == 0) out += type[i];
      if (type[i] == '}' && depth) depth = 0;
    }
    return out;
  }

  std::set<std::string> written_;
  std::string computations_;
  std::string entry_;
  std::map<std::string, std::string> types_;
  std::vector<std::pair<std::string, std::string>> params_;
  int line_ = 0;
};

class Step {
 public:
  explicit Step(const LlamaConfig& c)
      : c_(c), t_(c.batch * c.seq), bh_(c.batch * c.heads), hd_(c.model / c.heads) {
    w_.Computation("add_f32", {{"a", "f32[]"}, {"b", "f32[]"}},
                   {"%s = f32[] add(f32[] %a, f32[] %b)"}, "f32[]");
    w_.Computation("max_f32", {{"a", "f32[]"}, {"b", "f32[]"}},
                   {"%m = f32[] maximum(f32[] %a, f32[] %b)"}, "f32[]");
  }

  std::string Build() {
    const std::string tokens = Type("bf16", {t_, c_.model});
    const std::string batch_sharded = "{devices=[8,1]<=[8]}";
    w_.Parameter("x", tokens, batch_sharded);
    w_.Parameter("dy", tokens, batch_sharded);
    for (int l = 0; l < c_.layers; ++l) {
      const std::string n = std::to_string(l);
      for (const auto& [name, rows, cols] : Weights()) {
        w_.Parameter(name + "." + n, Type("bf16", {rows / 8, cols}), batch_sharded);
      }
    }
    std::vector<Saved> saved;
    std::string h = "x";
    for (int l = 0; l < c_.layers; ++l)
      saved.push_back(Forward(l, h));
    std::string g = "dy";
    std::vector<std::string> updated(static_cast<size_t>(4 * c_.layers));
    for (int l = c_.layers - 1; l >= 0; --l)
      g = Backward(l, saved[static_cast<size_t>(l)], g, updated);
    std::string tuple, type = "(", sharding = "{";
    for (size_t i = 0; i < updated.size(); ++i) {
      if (i) {
        tuple += ", ";
        type += ", ";
      }
      tuple += w_.Ref(updated[i]);
      type += TypeOf(updated[i]);
      sharding += std::string(i ? ", " : "") + "{devices=[8,1]<=[8]}";
    }
    return w_.Module(tuple, type + ")", sharding + "}");
  }

 private:
  struct Saved {
    std::string h, norm1, qkv, q, k, v, probs, attn_flat, res1, norm2, gu, act;
  };

  std::vector<std::tuple<std::string, int64_t, int64_t>> Weights() const {
    const int64_t d = c_.model, f = c_.ffn;
    return {{"wqkv", d, 3 * d}, {"wo", d, d}, {"wgu", d, 2 * f}, {"wd", f, d}};
  }

  std::string TypeOf(const std::string& name) const {
    const std::string ref = w_.Ref(name);
    return ref.substr(0, ref.find(" %"));
  }

  std::string Gather(const std::string& weight, int64_t rows, int64_t cols, const std::string& n) {
    return w_.Op(
        "ag." + weight + "." + n + "." + std::to_string(++gathers_), Type("bf16", {rows, cols}),
        "all-gather(" + w_.Ref(weight + "." + n) + "), channel_id=" + std::to_string(++channel_) +
            ", replica_groups=[1,8]<=[8], dimensions={0}, use_global_device_ids=true",
        "layer" + n + "/all_gather");
  }

  // A fusion of kind `kind` calling `computation` on `operands`.
  std::string Fuse(const std::string& name, const std::string& type, const std::string& kind,
                   const std::string& computation, const std::vector<std::string>& operands,
                   const std::string& op_name) {
    std::string args;
    for (size_t i = 0; i < operands.size(); ++i)
      args += (i ? ", " : "") + w_.Ref(operands[i]);
    return w_.Op(name, type, "fusion(" + args + "), kind=" + kind + ", calls=%" + computation,
                 op_name);
  }

  // a[M,K] . b, contracting a's `lhs` and b's `rhs` dimension, as a kOutput fusion.
  std::string Matmul(const std::string& name, const std::string& a, const std::string& b, int lhs,
                     int rhs, const std::vector<int64_t>& out, const std::string& result,
                     const std::string& op_name) {
    const std::string ta = TypeOf(a), tb = TypeOf(b);
    const std::string computation = "matmul_" + std::to_string(lhs) + std::to_string(rhs) + "_" +
                                    DimsOf(ta) + "_" + DimsOf(tb) + "_" + result;
    const std::string acc = Type("f32", out);
    std::vector<std::string> lines = {"%dot = " + acc + " dot(" + ta + " %p0, " + tb +
                                      " %p1), lhs_contracting_dims={" + std::to_string(lhs) +
                                      "}, rhs_contracting_dims={" + std::to_string(rhs) + "}"};
    if (result == "bf16")
      lines.push_back("%out = " + Type("bf16", out) + " convert(" + acc + " %dot)");
    w_.Computation(computation, {{"p0", ta}, {"p1", tb}}, lines, Type(result, out));
    return Fuse(name, Type(result, out), "kOutput", computation, {a, b}, op_name);
  }

  // Batched [BH, ., .] dots: lhs/rhs contracting dims, batch dim 0.
  std::string BatchedMatmul(const std::string& name, const std::string& a, const std::string& b,
                            int lhs, int rhs, int64_t rows, int64_t cols, double scale,
                            const std::string& op_name) {
    const std::vector<int64_t> out = {bh_, rows, cols};
    const std::string ta = TypeOf(a), tb = TypeOf(b), acc = Type("f32", out);
    const std::string computation = "bmm_" + std::to_string(lhs) + std::to_string(rhs) + "_" +
                                    std::to_string(rows) + "x" + std::to_string(cols) +
                                    (scale != 1 ? "_scaled" : "");
    std::vector<std::string> lines = {"%dot = " + acc + " dot(" + ta + " %p0, " + tb +
                                      " %p1), lhs_batch_dims={0}, " + "lhs_contracting_dims={" +
                                      std::to_string(lhs) + "}, rhs_batch_dims={0}, " +
                                      "rhs_contracting_dims={" + std::to_string(rhs) + "}"};
    std::string last = "%dot";
    if (scale != 1) {
      lines.push_back("%scale = f32[] constant(" + Float(scale) + ")");
      lines.push_back("%scales = " + acc + " broadcast(f32[] %scale), dimensions={}");
      lines.push_back("%scaled = " + acc + " multiply(" + acc + " %dot, " + acc + " %scales)");
      last = "%scaled";
    }
    lines.push_back("%out = " + Type("bf16", out) + " convert(" + acc + " " + last + ")");
    w_.Computation(computation, {{"p0", ta}, {"p1", tb}}, lines, Type("bf16", out));
    return Fuse(name, Type("bf16", out), "kOutput", computation, {a, b}, op_name);
  }

  std::string RmsNorm(const std::string& name, const std::string& x, const std::string& op) {
    const std::string tx = TypeOf(x), f = Type("f32", {t_, c_.model}), row = Type("f32", {t_});
    w_.Computation(
        "rmsnorm", {{"p0", tx}},
        {"%c = " + f + " convert(" + tx + " %p0)",
         "%sq = " + f + " multiply(" + f + " %c, " + f + " %c)", "%zero = f32[] constant(0)",
         "%sum = " + row + " reduce(" + f + " %sq, f32[] %zero), dimensions={1}, to_apply=%add_f32",
         "%inv = f32[] constant(" + Float(1.0 / static_cast<double>(c_.model)) + ")",
         "%invs = " + row + " broadcast(f32[] %inv), dimensions={}",
         "%mean = " + row + " multiply(" + row + " %sum, " + row + " %invs)",
         "%eps = f32[] constant(1e-06)", "%epss = " + row + " broadcast(f32[] %eps), dimensions={}",
         "%var = " + row + " add(" + row + " %mean, " + row + " %epss)",
         "%r = " + row + " rsqrt(" + row + " %var)",
         "%rb = " + f + " broadcast(" + row + " %r), dimensions={0}",
         "%y = " + f + " multiply(" + f + " %c, " + f + " %rb)",
         "%out = " + tx + " convert(" + f + " %y)"},
        tx);
    return Fuse(name, tx, "kInput", "rmsnorm", {x}, op);
  }

  // The q, k or v part of qkv as [B*H, S, hd]; and back.
  std::string Split(const std::string& name, const std::string& qkv, int part,
                    const std::string& op) {
    const int64_t d = c_.model;
    const std::string tq = TypeOf(qkv), flat = Type("bf16", {t_, d});
    const std::string four = Type("bf16", {c_.batch, c_.seq, c_.heads, hd_});
    const std::string swapped = Type("bf16", {c_.batch, c_.heads, c_.seq, hd_});
    const std::string out = Type("bf16", {bh_, c_.seq, hd_});
    w_.Computation(
        "split" + std::to_string(part), {{"p0", tq}},
        {"%s = " + flat + " slice(" + tq + " %p0), slice={[0:" + std::to_string(t_) + "], [" +
             std::to_string(part * d) + ":" + std::to_string((part + 1) * d) + "]}",
         "%r = " + four + " reshape(" + flat + " %s)",
         "%t = " + swapped + " transpose(" + four + " %r), dimensions={0,2,1,3}",
         "%out = " + out + " reshape(" + swapped + " %t)"},
        out);
    return Fuse(name, out, "kLoop", "split" + std::to_string(part), {qkv}, op);
  }

  // Heads merged into the model dimension ([batch, heads, seq, hd] -> [tokens, model]).
  std::string Merge(const std::string& name, const std::string& a, const std::string& op) {
    return SwapHeads(name, a, op, "merge", Type("bf16", {c_.batch, c_.heads, c_.seq, hd_}),
                     Type("bf16", {c_.batch, c_.seq, c_.heads, hd_}), Type("bf16", {t_, c_.model}));
  }

  // And split out again ([batch, seq, heads, hd] -> [batch x heads, seq, hd]).
  std::string Unmerge(const std::string& name, const std::string& a, const std::string& op) {
    return SwapHeads(name, a, op, "unmerge", Type("bf16", {c_.batch, c_.seq, c_.heads, hd_}),
                     Type("bf16", {c_.batch, c_.heads, c_.seq, hd_}),
                     Type("bf16", {bh_, c_.seq, hd_}));
  }

  // A fusion that reshapes `a` to `four`, swaps its dimensions 1 and 2 (`swapped`) and
  // reshapes the result to `out`.
  std::string SwapHeads(const std::string& name, const std::string& a, const std::string& op,
                        const std::string& computation, const std::string& four,
                        const std::string& swapped, const std::string& out) {
    const std::string ta = TypeOf(a);
    w_.Computation(computation, {{"p0", ta}},
                   {"%r = " + four + " reshape(" + ta + " %p0)",
                    "%t = " + swapped + " transpose(" + four + " %r), dimensions={0,2,1,3}",
                    "%out = " + out + " reshape(" + swapped + " %t)"},
                   out);
    return Fuse(name, out, "kLoop", computation, {a}, op);
  }

  std::string Softmax(const std::string& name, const std::string& s, const std::string& op) {
    const std::string ts = TypeOf(s), f = Type("f32", {bh_, c_.seq, c_.seq});
    const std::string row = Type("f32", {bh_, c_.seq});
    w_.Computation(
        "softmax", {{"p0", ts}},
        {"%c = " + f + " convert(" + ts + " %p0)", "%low = f32[] constant(-inf)",
         "%max = " + row + " reduce(" + f + " %c, f32[] %low), dimensions={2}, to_apply=%max_f32",
         "%maxb = " + f + " broadcast(" + row + " %max), dimensions={0,1}",
         "%shift = " + f + " subtract(" + f + " %c, " + f + " %maxb)",
         "%e = " + f + " exponential(" + f + " %shift)", "%zero = f32[] constant(0)",
         "%sum = " + row + " reduce(" + f + " %e, f32[] %zero), dimensions={2}, to_apply=%add_f32",
         "%sumb = " + f + " broadcast(" + row + " %sum), dimensions={0,1}",
         "%p = " + f + " divide(" + f + " %e, " + f + " %sumb)",
         "%out = " + ts + " convert(" + f + " %p)"},
        ts);
    return Fuse(name, ts, "kInput", "softmax", {s}, op);
  }

  std::string SoftmaxGrad(const std::string& name, const std::string& dp, const std::string& p,
                          const std::string& op) {
    const std::string ts = TypeOf(p), f = Type("f32", {bh_, c_.seq, c_.seq});
    const std::string row = Type("f32", {bh_, c_.seq});
    w_.Computation(
        "softmax_grad", {{"p0", ts}, {"p1", ts}},
        {"%dp = " + f + " convert(" + ts + " %p0)", "%pr = " + f + " convert(" + ts + " %p1)",
         "%prod = " + f + " multiply(" + f + " %dp, " + f + " %pr)", "%zero = f32[] constant(0)",
         "%sum = " + row + " reduce(" + f +
             " %prod, f32[] %zero), dimensions={2}, to_apply=%add_f32",
         "%sumb = " + f + " broadcast(" + row + " %sum), dimensions={0,1}",
         "%diff = " + f + " subtract(" + f + " %dp, " + f + " %sumb)",
         "%ds = " + f + " multiply(" + f + " %pr, " + f + " %diff)",
         "%scale = f32[] constant(" + Float(1 / std::sqrt(static_cast<double>(hd_))) + ")",
         "%scales = " + f + " broadcast(f32[] %scale), dimensions={}",
         "%scaled = " + f + " multiply(" + f + " %ds, " + f + " %scales)",
         "%out = " + ts + " convert(" + f + " %scaled)"},
        ts);
    return Fuse(name, ts, "kLoop", "softmax_grad", {dp, p}, op);
  }

  // silu(g) * u, and its gradient with respect to [g, u].
  std::string SwiGlu(const std::string& name, const std::string& gu, const std::string& op) {
    const std::string tg = TypeOf(gu), half = Type("bf16", {t_, c_.ffn}),
                      f = Type("f32", {t_, c_.ffn});
    const std::string t = std::to_string(t_), ff = std::to_string(c_.ffn);
    w_.Computation(
        "swiglu", {{"p0", tg}},
        {"%g = " + half + " slice(" + tg + " %p0), slice={[0:" + t + "], [0:" + ff + "]}",
         "%u = " + half + " slice(" + tg + " %p0), slice={[0:" + t + "], [" + ff + ":" +
             std::to_string(2 * c_.ffn) + "]}",
         "%gf = " + f + " convert(" + half + " %g)", "%uf = " + f + " convert(" + half + " %u)",
         "%s = " + f + " logistic(" + f + " %gf)",
         "%silu = " + f + " multiply(" + f + " %gf, " + f + " %s)",
         "%y = " + f + " multiply(" + f + " %silu, " + f + " %uf)",
         "%out = " + half + " convert(" + f + " %y)"},
        half);
    return Fuse(name, half, "kLoop", "swiglu", {gu}, op);
  }

  std::string SwiGluGrad(const std::string& name, const std::string& dact, const std::string& gu,
                         const std::string& op) {
    const std::string tg = TypeOf(gu), half = Type("bf16", {t_, c_.ffn}),
                      f = Type("f32", {t_, c_.ffn});
    const std::string t = std::to_string(t_), ff = std::to_string(c_.ffn);
    const std::string full = Type("f32", {t_, 2 * c_.ffn});
    w_.Computation(
        "swiglu_grad", {{"p0", half}, {"p1", tg}},
        {"%g = " + half + " slice(" + tg + " %p1), slice={[0:" + t + "], [0:" + ff + "]}",
         "%u = " + half + " slice(" + tg + " %p1), slice={[0:" + t + "], [" + ff + ":" +
             std::to_string(2 * c_.ffn) + "]}",
         "%gf = " + f + " convert(" + half + " %g)", "%uf = " + f + " convert(" + half + " %u)",
         "%dy = " + f + " convert(" + half + " %p0)", "%s = " + f + " logistic(" + f + " %gf)",
         "%one = f32[] constant(1)", "%ones = " + f + " broadcast(f32[] %one), dimensions={}",
         "%oms = " + f + " subtract(" + f + " %ones, " + f + " %s)",
         "%goms = " + f + " multiply(" + f + " %gf, " + f + " %oms)",
         "%inner = " + f + " add(" + f + " %ones, " + f + " %goms)",
         "%dsilu = " + f + " multiply(" + f + " %s, " + f + " %inner)",
         "%dyu = " + f + " multiply(" + f + " %dy, " + f + " %uf)",
         "%dg = " + f + " multiply(" + f + " %dyu, " + f + " %dsilu)",
         "%silu = " + f + " multiply(" + f + " %gf, " + f + " %s)",
         "%du = " + f + " multiply(" + f + " %dy, " + f + " %silu)",
         "%both = " + full + " concatenate(" + f + " %dg, " + f + " %du), dimensions={1}",
         "%out = " + tg + " convert(" + full + " %both)"},
        tg);
    return Fuse(name, tg, "kLoop", "swiglu_grad", {dact, gu}, op);
  }

  std::string JoinQkv(const std::string& name, const std::string& dq, const std::string& dk,
                      const std::string& dv, const std::string& op) {
    const std::string ta = TypeOf(dq), flat = Type("bf16", {t_, c_.model});
    const std::string out = Type("bf16", {t_, 3 * c_.model});
    const std::string four = Type("bf16", {c_.batch, c_.heads, c_.seq, hd_});
    const std::string swapped = Type("bf16", {c_.batch, c_.seq, c_.heads, hd_});
    std::vector<std::string> lines;
    for (const char* p : {"p0", "p1", "p2"}) {
      const std::string s = p;
      lines.push_back("%r" + s + " = " + four + " reshape(" + ta + " %" + s + ")");
      lines.push_back("%t" + s + " = " + swapped + " transpose(" + four + " %r" + s +
                      "), dimensions={0,2,1,3}");
      lines.push_back("%f" + s + " = " + flat + " reshape(" + swapped + " %t" + s + ")");
    }
    lines.push_back("%out = " + out + " concatenate(" + flat + " %fp0, " + flat + " %fp1, " + flat +
                    " %fp2), dimensions={1}");
    w_.Computation("join_qkv", {{"p0", ta}, {"p1", ta}, {"p2", ta}}, lines, out);
    return Fuse(name, out, "kLoop", "join_qkv", {dq, dk, dv}, op);
  }

  std::string Add(const std::string& name, const std::string& a, const std::string& b,
                  const std::string& op) {
    return w_.Op(name, TypeOf(a), "add(" + w_.Ref(a) + ", " + w_.Ref(b) + ")", op);
  }

  Saved Forward(int l, std::string& h) {
    const std::string n = std::to_string(l), at = "layer" + n + "/";
    const int64_t d = c_.model, f = c_.ffn;
    Saved s;
    s.h = h;
    const std::string wqkv = Gather("wqkv", d, 3 * d, n), wo = Gather("wo", d, d, n);
    const std::string wgu = Gather("wgu", d, 2 * f, n), wd = Gather("wd", f, d, n);
    s.norm1 = RmsNorm("norm1." + n, h, at + "rms_norm");
    s.qkv = Matmul("qkv." + n, s.norm1, wqkv, 1, 0, {t_, 3 * d}, "bf16", at + "attention/qkv");
    s.q = Split("q." + n, s.qkv, 0, at + "attention/q");
    s.k = Split("k." + n, s.qkv, 1, at + "attention/k");
    s.v = Split("v." + n, s.qkv, 2, at + "attention/v");
    const std::string scores =
        BatchedMatmul("scores." + n, s.q, s.k, 2, 2, c_.seq, c_.seq,
                      1 / std::sqrt(static_cast<double>(hd_)), at + "attention/scores");
    s.probs = Softmax("probs." + n, scores, at + "attention/softmax");
    const std::string attn =
        BatchedMatmul("attn." + n, s.probs, s.v, 2, 1, c_.seq, hd_, 1, at + "attention/attend");
    s.attn_flat = Merge("attn_flat." + n, attn, at + "attention/merge_heads");
    const std::string o =
        Matmul("o." + n, s.attn_flat, wo, 1, 0, {t_, d}, "bf16", at + "attention/out");
    s.res1 = Add("res1." + n, h, o, at + "residual");
    s.norm2 = RmsNorm("norm2." + n, s.res1, at + "rms_norm");
    s.gu = Matmul("gu." + n, s.norm2, wgu, 1, 0, {t_, 2 * f}, "bf16", at + "mlp/gate_up");
    s.act = SwiGlu("act." + n, s.gu, at + "mlp/swiglu");
    const std::string down = Matmul("down." + n, s.act, wd, 1, 0, {t_, d}, "bf16", at + "mlp/down");
    h = Add("h." + std::to_string(l + 1), s.res1, down, at + "residual");
    return s;
  }

  // The gradient of weight `weight`, reduce-scattered, and its shard updated.
  std::string Update(const std::string& weight, const std::string& n, const std::string& a,
                     const std::string& g, int64_t rows, int64_t cols, const std::string& at) {
    const std::string grad =
        Matmul("d" + weight + "." + n, a, g, 0, 0, {rows, cols}, "f32", at + "grad/" + weight);
    const std::string shard_type = Type("f32", {rows / 8, cols});
    const std::string scattered =
        w_.Op("rs." + weight + "." + n, shard_type,
              "reduce-scatter(" + w_.Ref(grad) + "), channel_id=" + std::to_string(++channel_) +
                  ", replica_groups=[1,8]<=[8], use_global_device_ids=true, dimensions={0}, "
                  "to_apply=%add_f32",
              at + "grad/reduce_scatter");
    const std::string w = weight + "." + n, tw = TypeOf(w);
    w_.Computation(
        "sgd_" + std::to_string(rows) + "x" + std::to_string(cols),
        {{"p0", tw}, {"p1", shard_type}},
        {"%w = " + shard_type + " convert(" + tw + " %p0)", "%lr = f32[] constant(0.01)",
         "%lrs = " + shard_type + " broadcast(f32[] %lr), dimensions={}",
         "%step = " + shard_type + " multiply(" + shard_type + " %p1, " + shard_type + " %lrs)",
         "%new = " + shard_type + " subtract(" + shard_type + " %w, " + shard_type + " %step)",
         "%out = " + tw + " convert(" + shard_type + " %new)"},
        tw);
    return Fuse("new." + w, tw, "kLoop", "sgd_" + std::to_string(rows) + "x" + std::to_string(cols),
                {w, scattered}, at + "optimizer/sgd");
  }

  std::string Backward(int l, const Saved& s, const std::string& g,
                       std::vector<std::string>& updated) {
    const std::string n = std::to_string(l), at = "transpose(layer" + n + ")/";
    const int64_t d = c_.model, f = c_.ffn;
    // FSDP frees the gathered weights after the forward pass and gathers them again here.
    const std::string wqkv = Gather("wqkv", d, 3 * d, n), wo = Gather("wo", d, d, n);
    const std::string wgu = Gather("wgu", d, 2 * f, n), wd = Gather("wd", f, d, n);
    const size_t base = static_cast<size_t>(4 * l);
    const std::string dact = Matmul("dact." + n, g, wd, 1, 1, {t_, f}, "bf16", at + "mlp/down");
    updated[base + 3] = Update("wd", n, s.act, g, f, d, at);
    const std::string dgu = SwiGluGrad("dgu." + n, dact, s.gu, at + "mlp/swiglu");
    const std::string dnorm2 =
        Matmul("dnorm2." + n, dgu, wgu, 1, 1, {t_, d}, "bf16", at + "mlp/gate_up");
    updated[base + 2] = Update("wgu", n, s.norm2, dgu, d, 2 * f, at);
    const std::string g1 = Add("g1." + n, g, dnorm2, at + "residual");
    const std::string dflat =
        Matmul("dattn_flat." + n, g1, wo, 1, 1, {t_, d}, "bf16", at + "attention/out");
    updated[base + 1] = Update("wo", n, s.attn_flat, g1, d, d, at);
    const std::string dattn = Unmerge("dattn." + n, dflat, at + "attention/merge_heads");
    const std::string dprobs =
        BatchedMatmul("dprobs." + n, dattn, s.v, 2, 2, c_.seq, c_.seq, 1, at + "attention/attend");
    const std::string dv =
        BatchedMatmul("dv." + n, s.probs, dattn, 1, 1, c_.seq, hd_, 1, at + "attention/attend");
    const std::string dscores =
        SoftmaxGrad("dscores." + n, dprobs, s.probs, at + "attention/softmax");
    const std::string dq =
        BatchedMatmul("dq." + n, dscores, s.k, 2, 1, c_.seq, hd_, 1, at + "attention/scores");
    const std::string dk =
        BatchedMatmul("dk." + n, dscores, s.q, 1, 1, c_.seq, hd_, 1, at + "attention/scores");
    const std::string dqkv = JoinQkv("dqkv." + n, dq, dk, dv, at + "attention/qkv");
    const std::string dnorm1 =
        Matmul("dnorm1." + n, dqkv, wqkv, 1, 1, {t_, d}, "bf16", at + "attention/qkv");
    updated[base] = Update("wqkv", n, s.norm1, dqkv, d, 3 * d, at);
    return Add("g." + n, g1, dnorm1, at + "residual");
  }

  LlamaConfig c_;
  int64_t t_, bh_, hd_;
  Writer w_;
  int channel_ = 0;
  int gathers_ = 0;
};

}  // namespace

std::string LlamaFsdpStep(const LlamaConfig& config) {
  return Step(config).Build();
}

}  // namespace tpusim::bench
