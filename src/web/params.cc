#include "web/params.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <string>

#include "collect/selection.h"

namespace gpuscope::web {
namespace {

// "0-7" or "0, 2, 5": the indices of the node's GPUs, for messages.
std::string IndexList(const std::set<unsigned>& values) {
  if (values.empty()) return "none";
  if (*values.rbegin() - *values.begin() + 1 == values.size() && values.size() > 2) {
    return fmt::format("{}-{}", *values.begin(), *values.rbegin());
  }
  return fmt::format("{}", fmt::join(values, ", "));
}

}  // namespace

std::string Quoted(std::string_view value) {
  std::string out = "'";
  for (char c : value.substr(0, 64)) {
    out += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return out + (value.size() > 64 ? "...'" : "'");
}

Result<std::vector<std::size_t>> SelectSmiIds(std::string_view ids, const Snapshot& snapshot,
                                              bool mig_selects_gpu) {
  // The messages below repeat the ids: only printable ones get that far.
  if (ids.size() > collect::kMaxSmiIdsChars ||
      !std::all_of(ids.begin(), ids.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
    return Status::InvalidArgument(fmt::format("id: {} is not a list of GPU ids", Quoted(ids)));
  }
  Result<collect::DeviceSelection> selection = collect::ParseSmiIds(ids);
  if (!selection.ok()) return selection.status().Context("id");
  selection->mig_selects_gpu = mig_selects_gpu;
  Result<std::vector<std::size_t>> slots = collect::SelectDevices(snapshot.gpus, *selection);
  if (!slots.ok()) return slots.status().Context("id");
  return slots;
}

std::optional<unsigned> ParseIndex(std::string_view text) {
  unsigned value = 0;
  if (text.empty() || text.size() > 9) return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Status CheckParameters(const http::Request& request,
                       std::initializer_list<std::string_view> allowed) {
  std::set<std::string_view> seen;
  for (const auto& [key, value] : request.query) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string names =
          allowed.size() == 0 ? "none" : fmt::format("{}", fmt::join(allowed, ", "));
      return Status::InvalidArgument(
          fmt::format("unknown parameter {} (this endpoint takes: {})", Quoted(key), names));
    }
    if (!seen.insert(key).second) {
      return Status::InvalidArgument(fmt::format("parameter {} given twice", Quoted(key)));
    }
  }
  return Status::Ok();
}

Result<std::vector<std::size_t>> SelectDevices(std::string_view gpu, std::string_view gi,
                                               const Snapshot& snapshot, bool allow_all) {
  std::vector<std::size_t> all(snapshot.gpus.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  if (gpu == "all" && allow_all) {
    if (!gi.empty()) return Status::InvalidArgument("gi: not allowed with gpu=all");
    return all;
  }
  std::set<unsigned> indices;
  for (const GpuInfo& info : snapshot.gpus) indices.insert(info.index);
  const std::optional<unsigned> index = ParseIndex(gpu);
  if (!index) {
    return Status::InvalidArgument(fmt::format("gpu: {} is not a GPU index{} (this node has {})",
                                               Quoted(gpu), allow_all ? " or all" : "",
                                               IndexList(indices)));
  }
  if (!indices.contains(*index)) {
    return Status::InvalidArgument(
        fmt::format("gpu: no GPU {} on this node (it has {})", *index, IndexList(indices)));
  }
  std::set<unsigned> instances;
  std::optional<std::size_t> parent;
  for (std::size_t slot : all) {
    const GpuInfo& info = snapshot.gpus[slot];
    if (info.index != *index) continue;
    if (info.is_mig()) instances.insert(*info.gpu_instance_id);
    if (!info.is_mig()) parent = slot;
  }
  if (gi.empty()) {
    if (parent) return std::vector<std::size_t>{*parent};
    return Status::InvalidArgument(fmt::format(
        "gi: GPU {} is split into MIG instances: add gi= one of {}", *index, IndexList(instances)));
  }
  const std::optional<unsigned> instance = ParseIndex(gi);
  for (std::size_t slot : all) {
    const GpuInfo& info = snapshot.gpus[slot];
    if (instance && info.index == *index && info.gpu_instance_id == instance) {
      return std::vector<std::size_t>{slot};
    }
  }
  return Status::InvalidArgument(fmt::format("gi: GPU {} has no GPU instance {} (it has {})",
                                             *index, Quoted(gi), IndexList(instances)));
}

}  // namespace gpuscope::web
