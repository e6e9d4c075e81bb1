#include "hlo/sharding.h"

#include <string>
#include <unordered_set>

#include "hlo/decoder_support.h"
#include "hlo/replica_groups.h"

namespace tpusim::hlo {

std::vector<int64_t> HloSharding::DataTileDimensions() const {
  size_t trailing = last_tile_dims.size() + (replicate_on_last_tile_dim ? 1 : 0);
  if (trailing > tile_assignment_dimensions.size()) trailing = tile_assignment_dimensions.size();
  return {tile_assignment_dimensions.begin(),
          tile_assignment_dimensions.end() - static_cast<std::ptrdiff_t>(trailing)};
}

namespace {

using detail::FailIn;

// Skips a balanced {...} (metadata inside a sharding).
void SkipBraces(Lexer& lexer, const Attribute& attribute) {
  int depth = 0;
  do {
    const char c = lexer.Peek();
    if (lexer.AtEnd()) FailIn(lexer, attribute, "'}' to close the sharding's metadata");
    if (c == '"') {
      (void)lexer.ScanString();
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') --depth;
    lexer.Advance();
  } while (depth > 0);
}

void ReadTileAssignment(Lexer& lexer, const Attribute& attribute, HloSharding& sharding) {
  lexer.SkipSpace();
  const size_t start = lexer.offset();
  // The dimensions come first in both forms; '<=' after them means the iota form.
  const std::vector<int64_t> dims =
      detail::ReadBracketedDims(lexer, attribute, "the tile dimensions, as in devices=[2,1]<=[2]");
  int64_t count = 1;
  for (const int64_t dim : dims) {
    if (__builtin_mul_overflow(count, dim, &count) || count > kMaxExpandedDevices) {
      lexer.FailAt(start, "at most " + std::to_string(kMaxExpandedDevices) + " devices in " +
                              attribute.name);
    }
  }
  sharding.kind = HloSharding::Kind::kTiled;
  sharding.tile_assignment_dimensions = dims;
  if (lexer.Slice(lexer.offset(), lexer.offset() + 2) == "<=") {
    lexer.Seek(start);
    sharding.tile_assignment_devices = detail::ReadIota(lexer, attribute).Expand();
    return;
  }
  std::unordered_set<int64_t> seen;
  do {
    lexer.SkipSpace();
    const size_t at = lexer.offset();
    int64_t device = 0;
    if (!lexer.ScanInt(device)) FailIn(lexer, attribute, "a device id of the tile assignment");
    if (sharding.tile_assignment_devices.size() == static_cast<size_t>(count)) {
      lexer.FailAt(at, std::to_string(count) +
                           " devices, as many as the tile dimensions hold, in " + attribute.name);
    }
    if (device < 0 || !seen.insert(device).second) {
      lexer.FailAt(at,
                   "distinct device ids of at least 0 in the tile assignment of " + attribute.name);
    }
    sharding.tile_assignment_devices.push_back(device);
  } while (lexer.Consume(','));
  if (sharding.tile_assignment_devices.size() != static_cast<size_t>(count)) {
    FailIn(lexer, attribute, "more device ids: the tile dimensions hold " + std::to_string(count));
  }
}

HloSharding ReadSharding(Lexer& lexer, const Attribute& attribute, int depth) {
  lexer.SkipSpace();
  if (depth >= kMaxNestingDepth)
    lexer.FailAt(lexer.offset(), "tuple shardings nested at most 64 deep");
  if (!lexer.Consume('{')) FailIn(lexer, attribute, "'{' to open a sharding");
  HloSharding sharding;
  lexer.SkipSpace();
  if (lexer.Peek() == '{' || lexer.Peek() == '}') {
    sharding.kind = HloSharding::Kind::kTuple;
    if (lexer.Consume('}')) return sharding;
    do {
      sharding.tuple_elements.push_back(ReadSharding(lexer, attribute, depth + 1));
    } while (lexer.Consume(','));
    if (!lexer.Consume('}')) FailIn(lexer, attribute, "',' or '}' in the tuple sharding");
    return sharding;
  }
  bool has_kind = false;
  auto set_kind = [&](HloSharding::Kind kind, size_t at) {
    if (has_kind) lexer.FailAt(at, "one kind of sharding, not two, in " + attribute.name);
    has_kind = true;
    sharding.kind = kind;
  };
  while (!lexer.Consume('}')) {
    lexer.SkipSpace();
    const size_t at = lexer.offset();
    if (lexer.ConsumeWord("replicated")) {
      set_kind(HloSharding::Kind::kReplicated, at);
    } else if (lexer.ConsumeWord("manual")) {
      set_kind(HloSharding::Kind::kManual, at);
    } else if (lexer.ConsumeWord("unknown")) {
      set_kind(HloSharding::Kind::kUnknown, at);
    } else if (lexer.ConsumeWord("maximal")) {
      set_kind(HloSharding::Kind::kMaximal, at);
    } else if (lexer.ConsumeText("device=")) {
      sharding.device = lexer.ExpectInt("a device id after device=");
    } else if (lexer.ConsumeText("devices=")) {
      set_kind(HloSharding::Kind::kTiled, at);
      ReadTileAssignment(lexer, attribute, sharding);
    } else if (lexer.ConsumeWord("last_tile_dim_replicate")) {
      sharding.replicate_on_last_tile_dim = true;
    } else if (lexer.ConsumeText("last_tile_dims={")) {
      do {
        sharding.last_tile_dims.emplace_back(
            lexer.ExpectName("a subgroup kind (manual, replicated...) in last_tile_dims"));
      } while (lexer.Consume(','));
      if (!lexer.Consume('}')) FailIn(lexer, attribute, "',' or '}' in last_tile_dims");
    } else if (lexer.ConsumeText("metadata=")) {
      lexer.SkipSpace();
      SkipBraces(lexer, attribute);
    } else if (lexer.ConsumeWord("shard_as")) {
      sharding.shard_as = lexer.ExpectInt("a group id after shard_as");
    } else if (lexer.ConsumeWord("shard_like")) {
      sharding.shard_like = lexer.ExpectInt("a group id after shard_like");
    } else {
      FailIn(lexer, attribute,
             "a sharding item (replicated, manual, maximal, device=, devices=, "
             "last_tile_dim_replicate, "
             "last_tile_dims=, metadata=) or '}'");
    }
  }
  if (!has_kind)
    lexer.FailAt(
        lexer.offset() - 1,
        "a kind of sharding (replicated, manual, maximal or devices=) in " + attribute.name);
  if (sharding.kind == HloSharding::Kind::kMaximal && sharding.device < 0) {
    lexer.FailAt(lexer.offset() - 1, "device=N in a maximal sharding");
  }
  const size_t trailing =
      sharding.last_tile_dims.size() + (sharding.replicate_on_last_tile_dim ? 1 : 0);
  if (sharding.IsTiled() && trailing > sharding.tile_assignment_dimensions.size()) {
    lexer.FailAt(lexer.offset() - 1,
                 "no more trailing subgroup dimensions than tile dimensions in " + attribute.name);
  }
  return sharding;
}

}  // namespace

HloSharding DecodeSharding(const Attribute& attribute) {
  Lexer lexer = detail::ValueLexer(attribute, attribute.value);
  HloSharding sharding = ReadSharding(lexer, attribute, 0);
  lexer.SkipSpace();
  if (!lexer.AtEnd()) FailIn(lexer, attribute, "the end of the sharding");
  return sharding;
}

}  // namespace tpusim::hlo
