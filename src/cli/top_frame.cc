#include "cli/top_frame.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string_view>
#include <vector>

#include "cli/query_format.h"
#include "gpuscope/attribution.h"

namespace gpuscope::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// Readable names in kClockReasonTable order.
constexpr std::array<const char*, 9> kReasonNames = {
    "idle",       "app clocks", "SW power cap",   "HW slowdown",  "sync boost",
    "SW thermal", "HW thermal", "HW power brake", "display clock"};
static_assert(kReasonNames.size() == kClockReasonTable.size());

constexpr const char* kRed = "31";
constexpr const char* kGreen = "32";
constexpr const char* kYellow = "33";
constexpr const char* kBold = "1";

std::string Paint(const std::string& text, const char* code, bool color) {
  if (!color) return text;
  return std::string("\x1b[") + code + "m" + text + "\x1b[0m";
}

std::string Fmt(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

std::string Pad(std::string s, std::size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s;
}

// At most `width` bytes (no limit when width <= 0), never splitting a UTF-8
// sequence: a process or GPU name may be non-ASCII.
std::string Clip(std::string s, int width) {
  if (width <= 0 || s.size() <= static_cast<std::size_t>(width)) return s;
  std::size_t end = static_cast<std::size_t>(width);
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  s.resize(end);
  return s;
}

// "62%", "-" when absent, "n/a (no GPM)" when the GPU has no GPM at all.
std::string Activity(const GpuInfo& gpu, const GpuSample& s, Metric m) {
  if (std::optional<double> v = s.Find(m)) return Fmt("%.0f%%", *v);
  return gpu.gpm_supported ? "-" : "n/a (no GPM)";
}

std::string Rate(double bytes_per_s) {
  const char* units[] = {"B/s", "KB/s", "MB/s", "GB/s"};
  int u = 0;
  while (bytes_per_s >= 1000 && u < 3) {
    bytes_per_s /= 1000;
    ++u;
  }
  return Fmt(u == 0 ? "%.0f " : "%.1f ", bytes_per_s) + units[u];
}

std::string Pair(const GpuSample& s, Metric used, Metric limit, const char* unit) {
  std::optional<double> a = s.Find(used), b = s.Find(limit);
  return (a ? Fmt("%.0f", *a) : "-") + " / " + (b ? Fmt("%.0f", *b) : "-") + " " + unit;
}

std::string Header(const Snapshot& snap, const FrameOptions& o) {
  const SystemInfo& sys = snap.system;
  std::string line = "gpuscope top   host " + (sys.hostname.empty() ? "?" : sys.hostname) +
                     "   driver " + (sys.driver_version.empty() ? "?" : sys.driver_version) +
                     "   CUDA " + (sys.cuda_version.empty() ? "?" : sys.cuda_version);
  if (snap.timestamp > 0) {
    std::time_t t = static_cast<std::time_t>(snap.timestamp);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[16];
    std::strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
    line += std::string("   ") + buf;
  }
  std::string out = Paint(Clip(line, o.width), kBold, o.color) + "\n";
  if (o.simulated) {
    out += "simulated node (scenario " + (o.scenario.empty() ? "default" : o.scenario) + ")\n";
  }
  if (!o.subtitle.empty()) out += Clip(o.subtitle, o.width) + "\n";
  if (!snap.nvml_up) {
    out += Paint("NVML unavailable: " + snap.nvml_error, kRed, o.color) + "\n";
  }
  return out;
}

std::string UtilLines(const GpuInfo& gpu, const GpuSample& s, int bar, bool color) {
  std::optional<double> util = s.Find(Metric::kGpuUtil);
  // No bar without a value: an empty bar would read as 0%.
  std::string out = "  util   " +
                    (util ? Bar(*util, bar) + " " + Fmt("%3.0f%%", *util)
                          : Pad("n/a", static_cast<std::size_t>(bar) + 5)) +
                    "   SM active " + Activity(gpu, s, Metric::kSmActive) + "   tensor " +
                    Activity(gpu, s, Metric::kTensorActive);
  if (s.Has(Metric::kDramActive)) out += "   DRAM " + Activity(gpu, s, Metric::kDramActive);
  std::optional<double> sm = s.Find(Metric::kSmActive);
  // Utilization counts time with any kernel running; SM active says how much
  // of the chip that kernel keeps busy.
  if (util && sm && *util >= 80 && *sm < 50) {
    out += "  " + Paint("(busy, but most SMs idle)", kYellow, color);
  }
  out += "\n";
  std::optional<double> used = s.Find(Metric::kMemoryUsed), total = s.Find(Metric::kMemoryTotal);
  const double percent = used && total && *total > 0 ? 100 * *used / *total : 0;
  out += "  memory " + Bar(percent, bar) + " " + Fmt("%3.0f%%", percent) + "   " +
         (used ? Fmt("%.0f", std::floor(*used / kMiB)) : "-") + " / " +
         (total ? Fmt("%.0f", std::floor(*total / kMiB)) : "-") + " MiB\n";
  return out;
}

std::string PhysicsLines(const GpuSample& s, bool color) {
  std::string temp = s.Has(Metric::kGpuTemp) ? Fmt("%.0f C", s.Get(Metric::kGpuTemp)) : "-";
  if (s.Has(Metric::kSlowdownTemp)) temp += Fmt(" (slowdown %.0f C)", s.Get(Metric::kSlowdownTemp));
  std::string out = "  power " + Pair(s, Metric::kPowerUsage, Metric::kPowerLimit, "W") +
                    "   temp " + temp + "   SM clock " +
                    Pair(s, Metric::kSmClock, Metric::kMaxSmClock, "MHz") + "\n";
  std::string throttle = "-";
  if (std::optional<double> bits = s.Find(Metric::kClockReasons)) {
    const uint64_t mask = static_cast<uint64_t>(*bits);
    throttle = ThrottleNames(mask);
    if ((mask & ~uint64_t{0x1}) != 0) throttle = Paint(throttle, kYellow, color);
  }
  std::string pcie = "-";
  std::optional<double> rx = s.Find(Metric::kPcieRxBytesRate),
                        tx = s.Find(Metric::kPcieTxBytesRate);
  if (rx || tx) pcie = "rx " + (rx ? Rate(*rx) : "-") + "  tx " + (tx ? Rate(*tx) : "-");
  return out + "  throttle " + throttle + "   PCIe " + pcie + "\n";
}

std::string GpuBlock(const Snapshot& snap, std::size_t i, const FrameOptions& o) {
  const GpuInfo& gpu = snap.gpus[i];
  const GpuSample& s = snap.samples[i];
  // The live screen keeps room for the activity beside the bar.
  const int bar =
      o.height > 0 ? std::clamp(o.width - 60, 10, 30) : std::clamp(o.width - 40, 10, 42);
  std::string title = Clip("GPU " + std::to_string(gpu.index) + "  " + gpu.name, o.width - 24);
  if (gpu.is_mig()) {
    title = "  MIG " + gpu.mig_profile + " (GPU " + std::to_string(gpu.index) + ", GI " +
            std::to_string(*gpu.gpu_instance_id) + ")";
  }
  std::string out = Paint(Pad(title, 40), kBold, o.color) + "  ";
  if (s.state == GpuState::kLost) {
    return out + Paint("LOST: " + s.state_reason, kRed, o.color) + "\n";
  }
  if (s.state == GpuState::kStale) {
    out += Paint("STALE: " + s.state_reason, kRed, o.color);
  } else if (s.state == GpuState::kError) {
    out += Paint("ERROR: " + s.state_reason, kRed, o.color);
  } else {
    out += Paint("OK", kGreen, o.color);
  }
  out += '\n';
  out += UtilLines(gpu, s, bar, o.color);
  if (snap.attribution) {
    for (const Holder& h : snap.attribution->Of(gpu)) {
      out += Clip("  serves " + h.Describe(), o.width) + "\n";
    }
  }
  if (gpu.is_mig()) return out;
  out += PhysicsLines(s, o.color);
  if (i < o.verdicts.size() && !o.verdicts[i].empty()) {
    out += Clip("  verdict " + o.verdicts[i], o.width) + "\n";
  }
  return out;
}

std::string Processes(const Snapshot& snap, int width) {
  std::string out = "Processes:\n  GPU      PID    Memory  Name\n";
  bool any = false;
  for (std::size_t i = 0; i < snap.gpus.size() && i < snap.samples.size(); ++i) {
    if (snap.gpus[i].is_mig()) continue;  // listed with the parent
    for (const ProcessInfo* p : ProcessesOnGpu(snap, i)) {
      any = true;
      std::string memory =
          p->used_memory_bytes ? Fmt("%.0fMiB", std::floor(*p->used_memory_bytes / kMiB)) : "N/A";
      char buf[64];
      std::snprintf(buf, sizeof(buf), "  %3u  %7u  %8s  ", snap.gpus[i].index, p->pid,
                    memory.c_str());
      out += Clip(buf + (p->name.empty() ? std::string("N/A") : p->name) + ProcessServes(snap, *p),
                  width) +
             "\n";
    }
  }
  return any ? out : out + "  No running processes found\n";
}

// "H100 80GB HBM3" for "NVIDIA H100 80GB HBM3": the row has no room to spare.
std::string ShortName(const std::string& name) {
  constexpr std::string_view kVendor = "NVIDIA ";
  return name.starts_with(kVendor) ? name.substr(kVendor.size()) : name;
}

std::string Percent(const GpuSample& s, Metric m) {
  std::optional<double> v = s.Find(m);
  return v ? Fmt("%.0f%%", *v) : "-";
}

// "70.0/79.6" GiB, the unit in the column header.
std::string MemoryGiB(const GpuSample& s) {
  std::optional<double> used = s.Find(Metric::kMemoryUsed), total = s.Find(Metric::kMemoryTotal);
  constexpr double kGiB = 1024.0 * kMiB;
  return (used ? Fmt("%.1f", *used / kGiB) : "-") + "/" +
         (total ? Fmt("%.1f", *total / kGiB) : "-");
}

// The state column: OK, or the first throttle reason, or what went wrong.
std::string StateText(const GpuSample& s, bool* bad, bool* warn) {
  *bad = s.state == GpuState::kLost || s.state == GpuState::kStale || s.state == GpuState::kError;
  *warn = false;
  if (s.state == GpuState::kLost) return "LOST";
  if (s.state == GpuState::kStale) return "STALE";
  if (s.state == GpuState::kError) return "ERROR";
  if (std::optional<double> bits = s.Find(Metric::kClockReasons)) {
    const uint64_t mask = static_cast<uint64_t>(*bits) & ~uint64_t{0x1};  // idle is no news
    if (mask != 0) {
      *warn = true;
      std::string names = ThrottleNames(mask);
      return names.substr(0, names.find(','));
    }
  }
  return "OK";
}

constexpr const char* kRowHeader =
    "  GPU Name               Util   SM  Mem GiB      Temp  Power W    State";

std::string GpuRowLine(const Snapshot& snap, std::size_t i, bool selected, const FrameOptions& o) {
  const GpuInfo& gpu = snap.gpus[i];
  const GpuSample& s = snap.samples[i];
  char buf[160];
  if (gpu.is_mig()) {
    std::snprintf(buf, sizeof(buf), "       MIG %-12.12s %4s %4s  %-11s", gpu.mig_profile.c_str(),
                  Percent(s, Metric::kGpuUtil).c_str(), Percent(s, Metric::kSmActive).c_str(),
                  MemoryGiB(s).c_str());
    return ClipVisible(buf, o.width);
  }
  std::optional<double> temp = s.Find(Metric::kGpuTemp), power = s.Find(Metric::kPowerUsage),
                        limit = s.Find(Metric::kPowerLimit);
  std::string watts =
      (power ? Fmt("%.0f", *power) : "-") + "/" + (limit ? Fmt("%.0f", *limit) : "-");
  std::snprintf(buf, sizeof(buf), "%s%3u %-18.18s %4s %4s  %-11s %4s  %-9s  ", selected ? ">" : " ",
                gpu.index, ShortName(gpu.name).c_str(), Percent(s, Metric::kGpuUtil).c_str(),
                Percent(s, Metric::kSmActive).c_str(), MemoryGiB(s).c_str(),
                temp ? Fmt("%.0fC", *temp).c_str() : "-", watts.c_str());
  bool bad = false, warn = false;
  const std::string state = StateText(s, &bad, &warn);
  const std::string line = ClipVisible(
      buf + (bad || warn ? Paint(state, bad ? kRed : kYellow, o.color) : state), o.width);
  return selected ? Paint(line, kBold, o.color) : line;
}

// The selected GPU's block and processes, for the live screen.
std::string Details(const Snapshot& snap, std::size_t i, const FrameOptions& o) {
  FrameOptions narrow = o;
  narrow.width = std::min(o.width, 100);
  std::string out = GpuBlock(snap, i, narrow);
  for (std::size_t m = 0; m < snap.gpus.size(); ++m) {
    if (snap.gpus[m].is_mig() && snap.gpus[m].index == snap.gpus[i].index) {
      out += GpuBlock(snap, m, narrow);
    }
  }
  std::string procs = "Processes on GPU " + std::to_string(snap.gpus[i].index) + ":\n";
  bool any = false;
  for (const ProcessInfo* p : ProcessesOnGpu(snap, i)) {
    any = true;
    std::string memory =
        p->used_memory_bytes ? Fmt("%.0fMiB", std::floor(*p->used_memory_bytes / kMiB)) : "N/A";
    char buf[64];
    std::snprintf(buf, sizeof(buf), "  %7u  %8s  ", p->pid, memory.c_str());
    procs +=
        buf + (p->name.empty() ? std::string("N/A") : p->name) + ProcessServes(snap, *p) + "\n";
  }
  return out + (any ? procs : procs + "  No running processes found\n");
}

// The live screen: at most o.height lines of at most o.width columns.
std::string RenderScreen(const Snapshot& snapshot, const FrameOptions& o) {
  std::string text = Header(snapshot, o) + Paint(kRowHeader, kBold, o.color) + "\n";
  std::size_t whole = 0, selected_slot = snapshot.gpus.size();
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    const bool is_selected = !snapshot.gpus[i].is_mig() && whole == o.selected;
    if (is_selected) selected_slot = i;
    text += GpuRowLine(snapshot, i, is_selected, o) + "\n";
    if (!snapshot.gpus[i].is_mig()) ++whole;
  }
  if (snapshot.gpus.empty() && snapshot.nvml_up) text += "No GPUs were found\n";
  if (selected_slot < snapshot.gpus.size()) text += "\n" + Details(snapshot, selected_slot, o);
  // Cut to the screen: every line to the width, the tail to the height.
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(ClipVisible(text.substr(start, end - start), o.width));
    start = end + 1;
  }
  const std::size_t height = static_cast<std::size_t>(std::max(o.height, 2));
  if (lines.size() > height) {
    const std::size_t hidden = lines.size() - (height - 1);
    lines.resize(height - 1);
    lines.push_back(ClipVisible(
        "... " + std::to_string(hidden) + " more lines (a taller terminal, or top --once)",
        o.width));
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i)
    out += lines[i] + (i + 1 < lines.size() ? "\n" : "");
  return out;
}

}  // namespace

std::string Bar(double percent, int width) {
  const int cells = std::max(width - 2, 1);
  const double clamped = std::clamp(std::isfinite(percent) ? percent : 0.0, 0.0, 100.0);
  const int filled = static_cast<int>(std::lround(clamped / 100.0 * cells));
  std::string out = "[";
  out.append(filled, '#').append(cells - filled, '.') += ']';
  return out;
}

std::string ThrottleNames(uint64_t bits) {
  std::string out;
  for (std::size_t r = 0; r < kClockReasonTable.size(); ++r) {
    if ((bits & kClockReasonTable[r].bit) == 0) continue;
    out += (out.empty() ? "" : ", ") + std::string(kReasonNames[r]);
  }
  return out.empty() ? "none" : out;
}

std::string RenderFrame(const Snapshot& snapshot, const FrameOptions& options) {
  if (options.height > 0) return RenderScreen(snapshot, options);
  std::string out = Header(snapshot, options) + "\n";
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    out += GpuBlock(snapshot, i, options);
  }
  if (snapshot.gpus.empty() && snapshot.nvml_up) out += "No GPUs were found\n";
  return out + "\n" + Processes(snapshot, options.width);
}

int TerminalWidth(int fd) {
  struct winsize size {};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 100;
}

int TerminalHeight(int fd) {
  struct winsize size {};
  if (ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_row > 0) return size.ws_row;
  return 24;
}

std::size_t WholeGpuCount(const Snapshot& snapshot) {
  return static_cast<std::size_t>(std::count_if(snapshot.gpus.begin(), snapshot.gpus.end(),
                                                [](const GpuInfo& g) { return !g.is_mig(); }));
}

std::string ClipVisible(const std::string& line, int width) {
  std::string out;
  int visible = 0;
  bool painted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b) {  // CSI: copy through its final byte
      std::size_t end = i + 1;
      if (end < line.size() && line[end] == '[') {
        ++end;
        while (end < line.size() && !(line[end] >= 0x40 && line[end] <= 0x7e)) ++end;
      }
      out.append(line, i, end - i + 1);
      painted = true;
      i = end;
      continue;
    }
    if ((c & 0xC0) != 0x80) {  // a character starts here
      if (visible == width) break;
      ++visible;
    }
    out += line[i];
  }
  if (painted && out.size() < line.size()) out += "\x1b[0m";
  return out;
}

}  // namespace gpuscope::cli
