// Device selection: which GPUs and MIG instances the sampler watches, from
// dcgm-exporter's `-d/--devices` syntax or nvidia-smi's `-i/--id` list.
//
//   f            every GPU; a MIG-enabled GPU also brings its MIG instances
//                (dcgm-exporter's flex mode lists only the instances there; we
//                keep the parent too, for power, temperature and health)
//   g[:ids]      whole GPUs only; ids are NVML indices, "0,2-3"
//   i[:ids]      MIG instances only; ids are node-wide ordinals of the MIG
//                instances in enumeration order, "0-3,6"
//   -i list      nvidia-smi: index, GPU or MIG UUID, or PCI bus id
//                ("00000000:18:00.0", "0000:18:00.0" or "18:00.0"), comma list
//
// Parsers are pure functions of text. Thread safety: plain values.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::collect {

struct DeviceSelection {
  enum class Kind { kFlex, kGpus, kInstances, kSmiIds };
  Kind kind = Kind::kFlex;
  std::vector<unsigned> numbers;  // g:/i: ids; empty = all of that kind
  std::vector<std::string> ids;   // kSmiIds: index, UUID or PCI bus id
  // kSmiIds: a MIG UUID selects the GPU that holds the instance (health
  // judges whole GPUs: a MIG instance has no board of its own), and in a
  // list without the GPU's own entry its first instance stands for it.
  bool mig_selects_gpu = false;
};

// "f", "g", "g:0,2-3", "i", "i:1". Errors name the bad part.
Result<DeviceSelection> ParseDcgmDevices(std::string_view text);
// An -i list is at most this long (every MIG UUID of an 8-GPU node fits twice):
// an agent's id= takes the same list, and its work is bounded by it.
inline constexpr std::size_t kMaxSmiIdsChars = 4096;

// "0", "0,1", "GPU-...", "00000000:18:00.0", "MIG-...". Ids are printable
// ASCII (no GPU id has anything else): a control character, or a list over
// kMaxSmiIdsChars, is InvalidArgument.
Result<DeviceSelection> ParseSmiIds(std::string_view text);

// Positions in `all` (kept in order) of the selected entries. An id that
// matches nothing is kNotFound naming the id.
Result<std::vector<std::size_t>> SelectDevices(const std::vector<GpuInfo>& all,
                                               const DeviceSelection& selection);

// "0000:18:00.0" or "18:00.0" -> "00000000:18:00.0" (upper case).
std::string NormalizePciBusId(std::string_view id);

}  // namespace gpuscope::collect
