#include "jobs/run_notes.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

namespace gpuscope::jobs {
namespace {

// "GPU 0", "GPU 1 MIG 1g.10gb".
std::string Name(const GpuInfo& gpu) {
  std::string out = "GPU " + std::to_string(gpu.index);
  if (gpu.is_mig()) out += " MIG " + gpu.mig_profile;
  return out;
}

bool Touched(const Report& r, const GpuInfo& gpu) {
  return std::any_of(r.gpus.begin(), r.gpus.end(), [&](const GpuLine& g) {
    return g.uuid == gpu.uuid && (!gpu.is_mig() || g.mig_profile == gpu.mig_profile);
  });
}

using RunNoteCheck = std::optional<std::string> (*)(const Report&, const RunFacts&,
                                                    const NoteThresholds&);

std::optional<std::string> VisibleUntouched(const Report& r, const RunFacts& f,
                                            const NoteThresholds&) {
  if (!f.cuda_visible_devices) return std::nullopt;
  const std::vector<GpuInfo> visible = VisibleGpus(*f.cuda_visible_devices, f.gpus);
  std::vector<std::string> untouched;
  for (const GpuInfo& gpu : visible) {
    if (!Touched(r, gpu)) untouched.push_back(Name(gpu));
  }
  if (untouched.empty()) return std::nullopt;
  return fmt::format(
      "CUDA_VISIBLE_DEVICES={} gave the command {} GPU{}, and it never touched {} ({}): "
      "make it use them (one process per GPU, or data parallelism) or ask for fewer.",
      *f.cuda_visible_devices, visible.size(), visible.size() == 1 ? "" : "s", untouched.size(),
      fmt::join(untouched, ", "));
}

std::optional<std::string> FirstKernelLate(const Report&, const RunFacts& f,
                                           const NoteThresholds& t) {
  if (!f.first_kernel_seconds || *f.first_kernel_seconds < t.first_kernel_min_seconds) {
    return std::nullopt;
  }
  const double share = f.wall_seconds > 0 ? *f.first_kernel_seconds / f.wall_seconds : 0;
  return fmt::format(
      "The first GPU work came only {:.0f} s after the start ({:.0f}% of the wall time): data "
      "loading, compilation or start-up kept the GPUs waiting; cache the data set or compiled "
      "kernels, or load data in parallel.",
      *f.first_kernel_seconds, share * 100);
}

std::optional<std::string> Shared(const Report&, const RunFacts& f, const NoteThresholds&) {
  if (f.sharing.empty()) return std::nullopt;
  std::vector<std::string> who;
  for (const SharingProcess& p : f.sharing) {
    who.push_back(fmt::format("GPU {}: pid {} ({}{})", p.gpu, p.pid, p.name,
                              p.user.empty() ? "" : ", user " + p.user));
  }
  return fmt::format(
      "The command's GPUs were shared with processes that are not its own ({}): their use is "
      "not counted here, but they competed with the command for the GPU.",
      fmt::join(who, "; "));
}

struct RunNoteRule {
  std::string_view kind;
  RunNoteCheck check;
};

// Rules as data: one row per note kind, in the order notes print (after report's).
constexpr RunNoteRule kRunNoteRules[] = {
    {"visible_untouched", VisibleUntouched},
    {"first_kernel_late", FirstKernelLate},
    {"shared", Shared},
};

std::optional<std::size_t> Index(std::string_view text) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// The GPU one CUDA_VISIBLE_DEVICES entry names; nullptr when none (or an
// ambiguous prefix).
const GpuInfo* Named(std::string_view entry, const std::vector<GpuInfo>& gpus) {
  const GpuInfo* found = nullptr;
  for (const GpuInfo& gpu : gpus) {
    bool match = false;
    if (std::optional<std::size_t> index = Index(entry)) {
      match = !gpu.is_mig() && gpu.index == *index;
    } else if (entry.starts_with("MIG-")) {
      match = gpu.is_mig() && std::string_view(gpu.mig_uuid).starts_with(entry);
    } else if (entry.starts_with("GPU-")) {
      match = !gpu.is_mig() && std::string_view(gpu.uuid).starts_with(entry);
    }
    if (!match) continue;
    if (found) return nullptr;
    found = &gpu;
  }
  return found;
}

}  // namespace

std::vector<GpuInfo> VisibleGpus(const std::string& value, const std::vector<GpuInfo>& gpus) {
  std::vector<GpuInfo> out;
  std::string_view rest = value;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view entry = rest.substr(0, comma);
    while (!entry.empty() && entry.front() == ' ') entry.remove_prefix(1);
    while (!entry.empty() && entry.back() == ' ') entry.remove_suffix(1);
    const GpuInfo* gpu = Named(entry, gpus);
    if (!gpu) break;
    out.push_back(*gpu);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

std::vector<Note> RunNotes(const Report& report, const RunFacts& facts,
                           const NoteThresholds& thresholds) {
  std::vector<Note> out;
  for (const RunNoteRule& rule : kRunNoteRules) {
    if (auto text = rule.check(report, facts, thresholds)) {
      out.push_back({std::string(rule.kind), *text});
    }
  }
  return out;
}

std::string NoGpuLine(const std::string& command, double wall_seconds) {
  return fmt::format("gpuscope run: {} used no GPU ({:.1f} s wall time).\n", command, wall_seconds);
}

}  // namespace gpuscope::jobs
