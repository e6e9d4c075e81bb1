#include "hlo/replica_groups.h"

#include <string>

#include "hlo/decoder_support.h"

namespace tpusim::hlo {

std::vector<int64_t> IotaTileAssignment::Expand() const {
  const size_t rank = reshape_dims.size();
  int64_t count = 1;
  for (const int64_t dim : reshape_dims)
    count *= dim;
  // Strides of the reshaped iota, then of each transposed dimension.
  std::vector<int64_t> input_strides(rank, 1);
  for (size_t k = rank; k-- > 1;)
    input_strides[k - 1] = input_strides[k] * reshape_dims[k];
  std::vector<int64_t> sizes(rank), strides(rank);
  for (size_t k = 0; k < rank; ++k) {
    const auto from = static_cast<size_t>(permutation[k]);
    sizes[k] = reshape_dims[from];
    strides[k] = input_strides[from];
  }
  std::vector<int64_t> devices;
  devices.reserve(static_cast<size_t>(count));
  std::vector<int64_t> index(rank, 0);
  int64_t value = 0;
  for (int64_t n = 0; n < count; ++n) {
    devices.push_back(value);
    // Odometer over the transposed dimensions, last fastest.
    for (size_t k = rank; k-- > 0;) {
      value += strides[k];
      if (++index[k] < sizes[k]) break;
      value -= strides[k] * sizes[k];
      index[k] = 0;
    }
  }
  return devices;
}

namespace detail {

std::vector<int64_t> ReadBracketedDims(Lexer& lexer, const Attribute& attribute,
                                       std::string_view what) {
  if (!lexer.Consume('['))
    FailIn(lexer, attribute, std::string("'[' to open ") + std::string(what));
  std::vector<int64_t> dims;
  do {
    const size_t at = (lexer.SkipSpace(), lexer.offset());
    int64_t value = 0;
    if (!lexer.ScanInt(value)) FailIn(lexer, attribute, "a dimension size");
    if (value < 1) lexer.FailAt(at, "a dimension size of at least 1 in " + attribute.name);
    if (dims.size() == static_cast<size_t>(kMaxNestingDepth)) {
      lexer.FailAt(at, "at most 64 dimensions in " + attribute.name);
    }
    dims.push_back(value);
  } while (lexer.Consume(','));
  if (!lexer.Consume(']')) FailIn(lexer, attribute, "',' or ']' in the dimensions");
  return dims;
}

namespace {

int64_t CountOf(Lexer& lexer, size_t at, const Attribute& attribute,
                const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (const int64_t dim : dims) {
    if (__builtin_mul_overflow(count, dim, &count) || count > kMaxExpandedDevices) {
      lexer.FailAt(
          at, "at most " + std::to_string(kMaxExpandedDevices) + " devices in " + attribute.name);
    }
  }
  return count;
}

}  // namespace

IotaTileAssignment ReadIota(Lexer& lexer, const Attribute& attribute) {
  IotaTileAssignment iota;
  const size_t dims_at = (lexer.SkipSpace(), lexer.offset());
  iota.dims = ReadBracketedDims(lexer, attribute, "the dimensions, as in [2,4]<=[8]");
  if (!lexer.ConsumeText("<="))
    FailIn(lexer, attribute, "'<=' and the iota dimensions, as in [2,4]<=[8]");
  const size_t reshape_at = (lexer.SkipSpace(), lexer.offset());
  iota.reshape_dims = ReadBracketedDims(lexer, attribute, "the iota dimensions, as in [2,4]<=[8]");
  const int64_t count = CountOf(lexer, dims_at, attribute, iota.dims);
  if (CountOf(lexer, reshape_at, attribute, iota.reshape_dims) != count) {
    lexer.FailAt(reshape_at, "iota dimensions with " + std::to_string(count) +
                                 " elements in all, as many as the dimensions before '<=', in " +
                                 attribute.name);
  }
  for (size_t k = 0; k < iota.reshape_dims.size(); ++k)
    iota.permutation.push_back(static_cast<int64_t>(k));
  if (lexer.Peek() == 'T') {
    const size_t perm_at = lexer.offset();
    lexer.Advance();
    if (!lexer.Consume('(')) FailIn(lexer, attribute, "'(' after T");
    std::vector<bool> seen(iota.reshape_dims.size(), false);
    iota.permutation.clear();
    do {
      int64_t k = 0;
      if (!lexer.ScanInt(k)) FailIn(lexer, attribute, "a dimension number in T(...)");
      if (k < 0 || static_cast<size_t>(k) >= seen.size() || seen[static_cast<size_t>(k)]) {
        lexer.FailAt(perm_at, "T(...) to list each of the " + std::to_string(seen.size()) +
                                  " iota dimensions once in " + attribute.name);
      }
      seen[static_cast<size_t>(k)] = true;
      iota.permutation.push_back(k);
    } while (lexer.Consume(','));
    if (!lexer.Consume(')')) FailIn(lexer, attribute, "',' or ')' in T(...)");
    if (iota.permutation.size() != seen.size()) {
      lexer.FailAt(perm_at, "T(...) to list each of the " + std::to_string(seen.size()) +
                                " iota dimensions once in " + attribute.name);
    }
  }
  return iota;
}

}  // namespace detail

namespace {

void CheckDevice(const Attribute& attribute, const AttrValue& item, int64_t device,
                 int64_t device_count, std::vector<bool>& seen) {
  if (device < 0 || device >= device_count) {
    attribute.Fail(item, "device ids from 0 to " + std::to_string(device_count - 1) +
                             " (the collective spans " + std::to_string(device_count) +
                             " devices)");
  }
  if (seen[static_cast<size_t>(device)]) {
    attribute.Fail(
        item, "each device in at most one group (device " + std::to_string(device) + " repeats)");
  }
  seen[static_cast<size_t>(device)] = true;
}

}  // namespace

ReplicaGroups DecodeReplicaGroups(const Attribute& attribute, int64_t device_count) {
  if (device_count < 1 || device_count > kMaxExpandedDevices) {
    throw Error(ErrorKind::kInvalidArgument, "DecodeReplicaGroups needs a device count from 1 to " +
                                                 std::to_string(kMaxExpandedDevices) + ", not " +
                                                 std::to_string(device_count) + ".");
  }
  const AttrValue& value = attribute.value;
  std::vector<bool> seen(static_cast<size_t>(device_count), false);
  ReplicaGroups groups;
  if (value.kind == AttrValue::Kind::kBracket) {
    Lexer lexer = detail::ValueLexer(attribute, value);
    const IotaTileAssignment iota = detail::ReadIota(lexer, attribute);
    lexer.SkipSpace();
    if (!lexer.AtEnd()) detail::FailIn(lexer, attribute, "the end of the iota replica groups");
    if (iota.dims.size() != 2) {
      attribute.Fail(value, "two dimensions [groups,group_size] before '<=', as in [2,4]<=[8]");
    }
    const std::vector<int64_t> devices = iota.Expand();
    const auto group_size = static_cast<size_t>(iota.dims[1]);
    for (size_t i = 0; i < devices.size(); ++i) {
      if (i % group_size == 0) groups.emplace_back();
      CheckDevice(attribute, value, devices[i], device_count, seen);
      groups.back().push_back(devices[i]);
    }
    return groups;
  }
  const char* what = "replica groups: {{0,1},{2,3}}, [2,4]<=[8] or {}";
  const std::vector<AttrValue>& lists = detail::ListItems(attribute, value, what);
  if (lists.empty()) {
    groups.emplace_back();
    for (int64_t device = 0; device < device_count; ++device)
      groups.back().push_back(device);
    return groups;
  }
  for (const AttrValue& list : lists) {
    std::vector<int64_t>& group = groups.emplace_back();
    for (const AttrValue& item : detail::ListItems(attribute, list, "a group such as {0,1}")) {
      const int64_t device = detail::IntOf(attribute, item, "a device id");
      CheckDevice(attribute, item, device, device_count, seen);
      group.push_back(device);
    }
    if (group.empty()) attribute.Fail(list, "a group with at least one device");
  }
  return groups;
}

std::vector<std::pair<int64_t, int64_t>> DecodeSourceTargetPairs(const Attribute& attribute) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const AttrValue& pair :
       detail::ListItems(attribute, attribute.value, "pairs such as {{0,1},{1,2}}")) {
    const std::vector<AttrValue>& items =
        detail::ListItems(attribute, pair, "a pair such as {0,1}");
    if (items.size() != 2) attribute.Fail(pair, "a pair {source,target} of two device ids");
    pairs.emplace_back(detail::IntOf(attribute, items[0], "a source device id"),
                       detail::IntOf(attribute, items[1], "a target device id"));
  }
  return pairs;
}

}  // namespace tpusim::hlo
