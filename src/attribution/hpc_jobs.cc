#include "attribution/hpc_jobs.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "base/config_file.h"
#include "base/text.h"

namespace gpuscope::attribution {
namespace {

// A decimal number and nothing else (no sign, no spaces).
std::optional<unsigned> Number(std::string_view s) {
  unsigned n = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return n;
}

// "GPU-" or "MIG-" and a UUID's hex digits and dashes (no '/', no '.').
bool IsUuid(std::string_view s, std::string_view prefix) {
  if (!s.starts_with(prefix) || s.size() == prefix.size() || s.size() > 64) return false;
  return std::all_of(s.begin() + prefix.size(), s.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == '-';
  });
}

}  // namespace

bool HpcGpuName::Names(const GpuInfo& device) const {
  switch (kind) {
    case Kind::kIndex:
      return device.index == number;
    case Kind::kMinor:
      return device.minor_number == number;
    case Kind::kUuid:
      return device.uuid == uuid;
    case Kind::kMigUuid:
      return device.is_mig() && device.mig_uuid == uuid;
  }
  return false;
}

std::optional<HpcGpuName> ParseHpcGpuName(std::string_view name) {
  using Kind = HpcGpuName::Kind;
  if (auto index = Number(name)) return HpcGpuName{Kind::kIndex, *index, ""};
  if (name.starts_with("nvidia")) {
    if (auto minor = Number(name.substr(6))) return HpcGpuName{Kind::kMinor, *minor, ""};
  }
  if (IsUuid(name, "GPU-")) return HpcGpuName{Kind::kUuid, 0, std::string(name)};
  if (IsUuid(name, "MIG-")) return HpcGpuName{Kind::kMigUuid, 0, std::string(name)};
  return std::nullopt;
}

std::vector<std::string> ParseHpcJobFile(std::string_view text) {
  std::vector<std::string> jobs;
  while (!text.empty()) {
    const std::string_view job = base::Trim(base::PopLine(text), " \t\r");
    if (!job.empty() && std::find(jobs.begin(), jobs.end(), job) == jobs.end()) {
      jobs.emplace_back(job);
    }
  }
  return jobs;
}

Result<HpcJobMap> ReadHpcJobDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  if (error) return Status::NotFound("HPC job mapping directory " + dir + ": " + error.message());
  HpcJobMap jobs;
  for (const fs::directory_entry& entry : it) {
    const std::string name = entry.path().filename().string();
    if (!ParseHpcGpuName(name)) continue;
    if (!entry.is_regular_file(error)) continue;
    // Read without blocking and bounded: the file may have been replaced by a
    // FIFO since the listing. Removed by an epilog, or refused: no jobs.
    const Result<std::string> text =
        base::ReadRegularFile(entry.path().string(), "HPC job mapping file", kMaxHpcJobFileBytes);
    if (!text.ok()) continue;
    std::vector<std::string> ids = ParseHpcJobFile(*text);
    if (!ids.empty()) jobs[name] = std::move(ids);
  }
  return jobs;
}

}  // namespace gpuscope::attribution
