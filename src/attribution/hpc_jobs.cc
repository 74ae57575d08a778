#include "attribution/hpc_jobs.h"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include "base/config_file.h"
#include "base/text.h"

namespace gpuscope::attribution {

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
    unsigned gpu = 0;
    const auto [end, parse_error] = std::from_chars(name.data(), name.data() + name.size(), gpu);
    if (parse_error != std::errc() || end != name.data() + name.size()) continue;
    if (!entry.is_regular_file(error)) continue;
    // Read without blocking and bounded: the file may have been replaced by a
    // FIFO since the listing. Removed by an epilog, or refused: no jobs.
    const Result<std::string> text =
        base::ReadRegularFile(entry.path().string(), "HPC job mapping file", kMaxHpcJobFileBytes);
    if (!text.ok()) continue;
    std::vector<std::string> ids = ParseHpcJobFile(*text);
    if (!ids.empty()) jobs[gpu] = std::move(ids);
  }
  return jobs;
}

}  // namespace gpuscope::attribution
