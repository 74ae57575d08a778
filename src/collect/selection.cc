#include "collect/selection.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "base/text.h"

namespace gpuscope::collect {
namespace {

bool IsMig(const GpuInfo& info) { return info.gpu_instance_id.has_value(); }

std::vector<std::string_view> Split(std::string_view text, char sep) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

bool ParseUnsigned(std::string_view s, unsigned* out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return !s.empty() && ec == std::errc() && ptr == end;
}

// "0,2-3" -> {0, 2, 3}.
Status ParseIdList(std::string_view list, std::vector<unsigned>* out) {
  for (std::string_view part : Split(list, ',')) {
    part = base::Trim(part);
    const std::size_t dash = part.find('-');
    unsigned lo = 0, hi = 0;
    const bool ok = dash == std::string_view::npos
                        ? ParseUnsigned(part, &lo) && (hi = lo, true)
                        : ParseUnsigned(part.substr(0, dash), &lo) &&
                              ParseUnsigned(part.substr(dash + 1), &hi) && lo <= hi;
    if (!ok || hi - lo > 4096) {
      return Status::InvalidArgument("bad device id \"" + std::string(part) +
                                     "\" (want a number or a range like 2-3)");
    }
    for (unsigned id = lo; id <= hi; ++id) out->push_back(id);
  }
  return Status::Ok();
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// Whether `id` (an index, GPU UUID or PCI bus id; not a MIG UUID) names the GPU
// that `info` is, or that holds it.
bool NamesGpuOf(const GpuInfo& info, std::string_view id) {
  unsigned index = 0;
  if (ParseUnsigned(id, &index)) return info.index == index;
  const std::string upper = Upper(id);
  if (upper.starts_with("GPU-")) return Upper(info.uuid) == upper;
  return !upper.starts_with("MIG-") && NormalizePciBusId(info.pci_bus_id) == NormalizePciBusId(id);
}

bool MatchesSmiId(const GpuInfo& info, std::string_view id) {
  const std::string upper = Upper(id);
  if (upper.starts_with("MIG-")) return IsMig(info) && Upper(info.mig_uuid) == upper;
  return !IsMig(info) && NamesGpuOf(info, id);
}

// The whole-GPU entry of the GPU that holds MIG instance `i` (itself when the
// list has none).
std::size_t ParentOf(const std::vector<GpuInfo>& all, std::size_t i) {
  for (std::size_t p = 0; p < all.size(); ++p) {
    if (!IsMig(all[p]) && all[p].index == all[i].index) return p;
  }
  return i;
}

Result<std::vector<std::size_t>> SelectSmi(const std::vector<GpuInfo>& all,
                                           const DeviceSelection& selection) {
  std::vector<std::size_t> picked;
  for (const std::string& id : selection.ids) {
    bool found = false;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (!MatchesSmiId(all[i], id)) continue;
      found = true;
      const std::size_t pick = selection.mig_selects_gpu && IsMig(all[i]) ? ParentOf(all, i) : i;
      if (std::find(picked.begin(), picked.end(), pick) == picked.end()) picked.push_back(pick);
    }
    // A list without the GPU's own entry (an agent run with -d i): the first of its instances,
    // which carry its index, UUID and bus id, stands for it.
    for (std::size_t i = 0; !found && selection.mig_selects_gpu && i < all.size(); ++i) {
      if (!IsMig(all[i]) || ParentOf(all, i) != i || !NamesGpuOf(all[i], id)) continue;
      found = true;
      if (std::find(picked.begin(), picked.end(), i) == picked.end()) picked.push_back(i);
    }
    if (!found) return Status::NotFound("no GPU matches id \"" + id + "\"");
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

// g:/i: lists: `number_of(i)` gives the id an entry answers to, or -1.
template <typename NumberOf>
Result<std::vector<std::size_t>> SelectNumbered(const std::vector<GpuInfo>& all,
                                                const std::vector<unsigned>& wanted,
                                                NumberOf number_of, const char* what) {
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const long n = number_of(i);
    if (n < 0) continue;
    if (wanted.empty() ||
        std::find(wanted.begin(), wanted.end(), static_cast<unsigned>(n)) != wanted.end()) {
      picked.push_back(i);
    }
  }
  for (unsigned id : wanted) {
    bool found = false;
    for (std::size_t i : picked) found = found || number_of(i) == static_cast<long>(id);
    if (!found)
      return Status::NotFound(std::string("no ") + what + " with id " + std::to_string(id));
  }
  return picked;
}

}  // namespace

Result<DeviceSelection> ParseDcgmDevices(std::string_view text) {
  text = base::Trim(text);
  DeviceSelection sel;
  if (text == "f") return sel;
  if (text.empty() || (text[0] != 'g' && text[0] != 'i') || (text.size() > 1 && text[1] != ':')) {
    return Status::InvalidArgument("bad --devices value \"" + std::string(text) +
                                   "\" (want f, g[:ids] or i[:ids])");
  }
  sel.kind = text[0] == 'g' ? DeviceSelection::Kind::kGpus : DeviceSelection::Kind::kInstances;
  if (text.size() > 2) {
    GPUSCOPE_RETURN_IF_ERROR(ParseIdList(text.substr(2), &sel.numbers).Context("--devices"));
  } else if (text.size() == 2) {
    return Status::InvalidArgument("--devices: empty id list after \"" + std::string(text) + "\"");
  }
  return sel;
}

Result<DeviceSelection> ParseSmiIds(std::string_view text) {
  if (text.size() > kMaxSmiIdsChars) {
    return Status::InvalidArgument("--id: the list is longer than " +
                                   std::to_string(kMaxSmiIdsChars) + " characters");
  }
  if (!std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7f; })) {
    return Status::InvalidArgument(
        "--id: a character that is not printable ASCII in the list (ids are indices, UUIDs "
        "or PCI bus ids)");
  }
  DeviceSelection sel;
  sel.kind = DeviceSelection::Kind::kSmiIds;
  for (std::string_view part : Split(text, ',')) {
    part = base::Trim(part);
    if (part.empty())
      return Status::InvalidArgument("--id: empty entry in \"" + std::string(text) + "\"");
    sel.ids.emplace_back(part);
  }
  return sel;
}

Result<std::vector<std::size_t>> SelectDevices(const std::vector<GpuInfo>& all,
                                               const DeviceSelection& selection) {
  using Kind = DeviceSelection::Kind;
  switch (selection.kind) {
    case Kind::kFlex: {
      std::vector<std::size_t> every(all.size());
      for (std::size_t i = 0; i < all.size(); ++i) every[i] = i;
      return every;
    }
    case Kind::kGpus:
      return SelectNumbered(
          all, selection.numbers,
          [&](std::size_t i) { return IsMig(all[i]) ? -1L : static_cast<long>(all[i].index); },
          "GPU");
    case Kind::kInstances: {
      std::vector<long> ordinal(all.size(), -1);
      long next = 0;
      for (std::size_t i = 0; i < all.size(); ++i) {
        if (IsMig(all[i])) ordinal[i] = next++;
      }
      return SelectNumbered(
          all, selection.numbers, [&](std::size_t i) { return ordinal[i]; }, "MIG instance");
    }
    case Kind::kSmiIds:
      return SelectSmi(all, selection);
  }
  return Status::Internal("unknown selection kind");
}

std::string NormalizePciBusId(std::string_view id) {
  std::string upper = Upper(base::Trim(id));
  const std::size_t colons = std::count(upper.begin(), upper.end(), ':');
  if (colons == 1) upper = "00000000:" + upper;
  const std::size_t first = upper.find(':');
  if (colons >= 1 && first < 8) upper.insert(0, 8 - first, '0');
  return upper;
}

}  // namespace gpuscope::collect
