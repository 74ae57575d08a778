#include "control.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "attach.h"

namespace gpuscope::sim {
namespace {

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// "3" -> {3}; "all" -> every GPU.
Result<std::vector<unsigned>> Targets(const Sim& sim, const std::string& word) {
  std::vector<unsigned> out;
  if (word == "all" || word == "*") {
    for (unsigned g = 0; g < sim.gpu_count(); ++g) out.push_back(g);
    return out;
  }
  char* end = nullptr;
  unsigned long g = std::strtoul(word.c_str(), &end, 10);
  if (word.empty() || *end != '\0' || g >= sim.gpu_count()) {
    return Status::InvalidArgument("bad GPU '" + word + "'");
  }
  out.push_back(static_cast<unsigned>(g));
  return out;
}

Status WriteStats(const Sim& sim, const std::string& path) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status::NotFound("cannot write " + tmp);
    out << CallStatsJson(sim.gpu_count());
    if (!out.flush()) return Status::Internal("write failed: " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return Status::Internal("rename " + path);
  return Status::Ok();
}

Status Inject(Sim& sim, const std::vector<std::string>& w) {
  if (w.size() < 3) return Status::InvalidArgument("usage: inject <gpu|all> <fault> [args]");
  auto targets = Targets(sim, w[1]);
  if (!targets.ok()) return targets.status();
  auto fault = FaultFromWords({w.begin() + 2, w.end()});
  if (!fault.ok()) return fault.status();
  for (unsigned g : *targets) sim.Inject(g, *fault);
  return Status::Ok();
}

Status Clear(Sim& sim, const std::vector<std::string>& w) {
  if (w.size() != 3) return Status::InvalidArgument("usage: clear <gpu|all> <fault|all>");
  auto targets = Targets(sim, w[1]);
  if (!targets.ok()) return targets.status();
  std::optional<FaultKind> kind;
  if (w[2] != "all") {
    FaultKind k;
    if (!ParseFaultKind(w[2], &k)) return Status::InvalidArgument("unknown fault '" + w[2] + "'");
    kind = k;
  }
  for (unsigned g : *targets) sim.Clear(g, kind);
  return Status::Ok();
}

// Writes `applied` (the control file's byte offset up to which every line has
// been applied) to <path>.ack, through a temp file and a rename so that a
// reader never sees a partial number: clients wait on it instead of sleeping.
void WriteAck(const std::string& path, long long applied) {
  const std::string ack = path + ".ack";
  const std::string tmp = ack + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << applied << "\n";
    if (!out.flush()) return;  // best effort: the client then times out and says so
  }
  std::rename(tmp.c_str(), ack.c_str());
}

}  // namespace

Status ApplyControlCommand(Sim& sim, const std::string& line) {
  std::vector<std::string> w = Words(line);
  if (w.empty() || w[0][0] == '#') return Status::Ok();
  if (w[0] == "inject") return Inject(sim, w);
  if (w[0] == "clear") return Clear(sim, w);
  if (w[0] == "attach") return AttachCommand(sim, w);
  if (w[0] == "detach") return DetachCommand(sim, w);
  if (w[0] == "stats" && w.size() == 2) return WriteStats(sim, w[1]);
  if (w[0] == "freeze" && w.size() == 2) {
    char* end = nullptr;
    double t = std::strtod(w[1].c_str(), &end);
    if (*end != '\0' || t < 0) return Status::InvalidArgument("bad time '" + w[1] + "'");
    sim.Freeze(t);
    return Status::Ok();
  }
  return Status::InvalidArgument("unknown command");
}

ControlChannel::ControlChannel(std::string path, Sim* sim) : path_(std::move(path)), sim_(sim) {
  // Only lines appended from now on count.
  std::ifstream in(path_, std::ios::ate | std::ios::binary);
  if (in) offset_ = static_cast<long long>(in.tellg());
  thread_ = std::thread([this] { Run(); });
}

ControlChannel::~ControlChannel() {
  stop_.store(true);
  thread_.join();
}

void ControlChannel::Run() {
  while (!stop_.load()) {
    Poll();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ControlChannel::Poll() {
  ReapExitedAttachments(*sim_);
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;
  in.seekg(0, std::ios::end);
  long long size = static_cast<long long>(in.tellg());
  if (size < offset_) offset_ = 0, partial_.clear();  // truncated: start over
  if (size == offset_) return;
  in.seekg(offset_);
  std::string chunk(static_cast<size_t>(size - offset_), '\0');
  in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  offset_ += in.gcount();
  partial_ += chunk.substr(0, static_cast<size_t>(in.gcount()));
  size_t nl;
  while ((nl = partial_.find('\n')) != std::string::npos) {
    std::string line = partial_.substr(0, nl);
    partial_.erase(0, nl + 1);
    Status st = ApplyControlCommand(*sim_, line);
    if (!st.ok()) {
      std::fprintf(stderr, "gpuscope-sim: control: '%s': %s (ignored)\n", line.c_str(),
                   st.message().c_str());
    }
  }
  WriteAck(path_, offset_ - static_cast<long long>(partial_.size()));
}

}  // namespace gpuscope::sim
