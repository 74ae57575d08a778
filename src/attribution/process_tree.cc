#include "attribution/process_tree.h"

#include <pwd.h>

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

std::optional<unsigned> ParseParentPid(std::string_view stat) {
  // "pid (comm) state ppid ...": comm ends at the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos || close + 4 >= stat.size()) return std::nullopt;
  std::string_view rest = stat.substr(close + 2);  // "S 4241 ..."
  const std::size_t space = rest.find(' ');
  if (space != 1) return std::nullopt;
  rest.remove_prefix(2);
  return Number(rest.substr(0, rest.find(' ')));
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

std::optional<unsigned> ProcessTree::ParentOf(unsigned pid) const {
  return ParseParentPid(ReadFile(proc_root_ + "/" + std::to_string(pid) + "/stat"));
}

bool ProcessTree::Contains(unsigned pid) {
  if (pid == reaper_) return false;
  if (members_.contains(pid)) return true;
  std::vector<unsigned> chain;
  unsigned at = pid;
  for (int depth = 0; depth < kMaxDepth && at > 1 && at != reaper_; ++depth) {
    if (members_.contains(at)) break;
    chain.push_back(at);
    std::optional<unsigned> parent = ParentOf(at);
    if (!parent) return false;  // gone, or not a process
    at = *parent;
  }
  if (at != reaper_ && !members_.contains(at)) return false;
  members_.insert(chain.begin(), chain.end());
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
