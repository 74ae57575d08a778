#include "attribution/process_tree.h"

#include <pwd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <vector>

namespace gpuscope::attribution {
namespace {

// Deep enough for any real tree; a loop in a fake /proc ends here too.
constexpr int kMaxDepth = 1024;

std::optional<unsigned> Number(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return value;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<ProcStat> ParseStat(std::string_view stat) {
  // "pid (comm) state ppid ...": comm ends at the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view rest = stat.substr(close + 1);
  std::vector<std::string_view> fields;  // from field 3 (state) on
  while (fields.size() < 20) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) break;
    const std::size_t end = std::min(rest.find(' '), rest.size());
    fields.push_back(rest.substr(0, end));
    rest.remove_prefix(end);
  }
  if (fields.size() < 20) return std::nullopt;
  std::optional<unsigned> parent = Number(fields[1]);
  unsigned long long start = 0;
  const std::string_view s = fields[19];
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), start);
  if (!parent || error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return ProcStat{*parent, start};
}

std::optional<unsigned> ParseRealUid(std::string_view status) {
  std::size_t at = 0;
  while (at < status.size()) {
    std::size_t end = status.find('\n', at);
    if (end == std::string_view::npos) end = status.size();
    std::string_view line = status.substr(at, end - at);
    if (line.starts_with("Uid:")) {
      line.remove_prefix(4);
      while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
      return Number(line.substr(0, line.find_first_of(" \t")));
    }
    at = end + 1;
  }
  return std::nullopt;
}

ProcessTree::ProcessTree(unsigned reaper, std::string proc_root)
    : reaper_(reaper), proc_root_(std::move(proc_root)) {}

std::optional<ProcStat> ProcessTree::StatOf(unsigned pid) const {
  return ParseStat(ReadFile(proc_root_ + "/" + std::to_string(pid) + "/stat"));
}

bool ProcessTree::Known(unsigned pid, const ProcStat& stat) const {
  const auto it = members_.find(pid);
  return it != members_.end() && it->second == stat.start;
}

bool ProcessTree::Contains(unsigned pid) {
  if (pid == reaper_) return false;
  std::vector<std::pair<unsigned, unsigned long long>> chain;
  unsigned at = pid;
  for (int depth = 0; depth < kMaxDepth && at > 1 && at != reaper_; ++depth) {
    std::optional<ProcStat> stat = StatOf(at);
    if (!stat) {
      // Gone: a member whose parent exited between looks still counts.
      if (chain.empty() || !members_.contains(at)) return false;
      break;
    }
    if (Known(at, *stat)) break;
    members_.erase(at);  // a member's pid given to a later process, if it was one
    chain.push_back({at, stat->start});
    at = stat->parent;
  }
  if (at != reaper_ && !members_.contains(at)) return false;
  for (const auto& [member, start] : chain) members_[member] = start;
  return true;
}

std::string ProcessTree::UserOf(unsigned pid) const {
  std::optional<unsigned> uid =
      ParseRealUid(ReadFile(proc_root_ + "/" + std::to_string(pid) + "/status"));
  if (!uid) return "";
  passwd entry{}, *found = nullptr;
  std::vector<char> buffer(4096);
  if (getpwuid_r(*uid, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
    return found->pw_name;
  }
  return "uid " + std::to_string(*uid);
}

}  // namespace gpuscope::attribution
