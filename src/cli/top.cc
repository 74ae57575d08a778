#include "cli/top.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <ostream>

#include "analysis/report.h"
#include "base/log.h"
#include "cli/agent_source.h"
#include "cli/exit_codes.h"
#include "cli/options.h"
#include "cli/sim_clock.h"
#include "cli/stop.h"
#include "cli/top_frame.h"
#include "cli/top_terminal.h"
#include "collect/sampler.h"
#include "collect/selection.h"

namespace gpuscope::cli {
namespace {

constexpr const char* kClearScreen = "\x1b[H\x1b[2J";
constexpr double kVerdictEverySeconds = 5;
constexpr double kOnceGapSeconds = 0.5;

// The most confident finding of each GPU over the sampler's window (the
// agent's /api/v1/snapshot gives its own the same way).
std::vector<std::string> Verdicts(const Snapshot& snapshot, const Window& window) {
  analysis::RunOptions options;
  return serve::TopVerdicts(analysis::RunDiagnose(snapshot, window, options), snapshot.gpus.size(),
                            options.diagnose.min_span_seconds);
}

collect::SamplerOptions MakeSamplerOptions(const std::string& library, const TopArgs& args) {
  collect::SamplerOptions options;
  options.nvml_path = library;
  options.fast_interval_s = std::max(0.1, args.interval_seconds);
  options.slow_interval_s = std::max(options.slow_interval_s, options.fast_interval_s);
  options.pcie_interval_s = std::max(options.pcie_interval_s, options.fast_interval_s);
  options.window_span_s = analysis::DiagnoseOptions{}.window_seconds + 10;
  return options;
}

// Gives the snapshot of each frame; `due` is true when a new interval began
// (false for a redraw after a key). It may set the frame's verdicts.
using FrameSource = std::function<SnapshotPtr(bool due, FrameOptions& frame)>;

// The live screen: redrawn every interval and at once after a key; the
// session restores the terminal however the loop ends.
void RunScreen(const TopArgs& args, FrameOptions frame, std::ostream& out,
               const FrameSource& source) {
  using std::chrono::steady_clock;
  const auto step = std::chrono::duration_cast<steady_clock::duration>(
      std::chrono::duration<double>(args.interval_seconds));
  TerminalSession terminal(out, STDIN_FILENO);
  auto next = steady_clock::now();
  while (!StopRequested()) {
    const bool due = steady_clock::now() >= next;  // a frame is due (not only a key's redraw)
    if (due) {
      next += step;
      if (next < steady_clock::now()) next = steady_clock::now() + step;  // skip missed ones
    }
    SnapshotPtr snapshot = source(due, frame);
    const std::size_t gpus = WholeGpuCount(*snapshot);
    frame.selected = gpus == 0 ? 0 : std::min(frame.selected, gpus - 1);
    frame.width = TerminalWidth(STDOUT_FILENO);
    frame.height = TerminalHeight(STDOUT_FILENO);
    out << kClearScreen << RenderFrame(*snapshot, frame) << std::flush;
    // Keys until the next frame is due; a move redraws at once.
    Keys keys;
    while (!keys.any() && !StopRequested() && steady_clock::now() < next) {
      keys = terminal.WaitForKeys(
          std::chrono::duration_cast<std::chrono::milliseconds>(next - steady_clock::now()));
    }
    if (keys.quit) break;
    const long moved = static_cast<long>(frame.selected) + keys.move;
    frame.selected = static_cast<std::size_t>(std::max(0L, moved));  // clamped when drawn
  }
}

// The live screen of the sampler here: each frame its latest snapshot.
void RunLoop(collect::Sampler& sampler, const TopArgs& args, const CommonOptions& common,
             FrameOptions frame, std::ostream& out) {
  using std::chrono::steady_clock;
  // Refreshed with the verdicts; the sampler sets it on each snapshot before
  // publishing, so a frame reads the snapshot as it is.
  std::atomic<AttributionPtr> attribution;
  sampler.Decorate(
      [&attribution](Snapshot& snapshot) { snapshot.attribution = attribution.load(); });
  sampler.Start();
  auto next_verdict = steady_clock::now();
  RunScreen(args, std::move(frame), out, [&](bool, FrameOptions& f) {
    SnapshotPtr snapshot = sampler.Latest();
    if (steady_clock::now() >= next_verdict) {
      f.verdicts = Verdicts(*snapshot, sampler.window());
      snapshot = Attribute(common, snapshot);
      attribution.store(snapshot->attribution);
      next_verdict =
          steady_clock::now() + std::chrono::seconds(static_cast<int>(kVerdictEverySeconds));
    }
    return snapshot;
  });
  sampler.Stop();
  sampler.Decorate(nullptr);  // it refers to this frame's `attribution`
}

// The agent's snapshot (and its verdicts), narrowed to -i as a sampler here would be.
Result<SnapshotPtr> AgentFrame(AgentNode& agent, const TopArgs& args, FrameOptions& frame) {
  Result<SnapshotPtr> snapshot = agent.Sample();
  if (!snapshot.ok()) return snapshot;
  frame.verdicts = agent.last().verdicts;
  if (args.ids.empty()) return snapshot;
  Result<collect::DeviceSelection> selection = collect::ParseSmiIds(args.ids);
  if (!selection.ok()) return selection.status();
  Result<std::vector<std::size_t>> slots = collect::SelectDevices((*snapshot)->gpus, *selection);
  if (!slots.ok()) return slots.status();
  std::vector<std::string> verdicts;
  for (std::size_t slot : *slots) {
    verdicts.push_back(slot < frame.verdicts.size() ? frame.verdicts[slot] : "");
  }
  frame.verdicts = std::move(verdicts);
  return KeepSlots(**snapshot, *slots);
}

// `top --agent URL`: the same frames from the agent's snapshots, fetched
// every interval (-d polls the agent). An agent that stops answering keeps
// the last frame on screen with the reason in the subtitle.
Status RunTopAgent(const TopArgs& args, Invocation& inv) {
  TopArgs polled = args;
  // A frame never waits much longer than its interval for the agent.
  polled.agent.client.timeout_seconds = std::clamp(2 * args.interval_seconds, 2.0, 30.0);
  Result<std::unique_ptr<Node>> node = OpenNode(inv.common, polled.agent);
  if (!node.ok()) return node.status();
  auto& agent = static_cast<AgentNode&>(**node);
  FrameOptions frame;
  frame.color = args.color && (args.once ? isatty(STDOUT_FILENO) == 1 : true);
  Result<SnapshotPtr> first = AgentFrame(agent, args, frame);
  if (!first.ok()) return first.status();
  frame.simulated = agent.simulated();
  frame.scenario = agent.scenario();
  if (args.once) {
    frame.verdicts.clear();  // as here: --once draws no verdicts
    frame.width = TerminalWidth(STDOUT_FILENO);
    *inv.out << RenderFrame(**first, frame) << std::flush;
    return Status::Ok();
  }
  InstallStopHandlers();
  const std::string subtitle = "every " +
                               std::to_string(static_cast<int>(args.interval_seconds * 1000)) +
                               " ms   q quit   j/k or arrows select a GPU";
  frame.subtitle = subtitle;
  SnapshotPtr last = *first;
  RunScreen(args, std::move(frame), *inv.out, [&](bool due, FrameOptions& f) {
    if (!due) return last;
    Result<SnapshotPtr> fresh = AgentFrame(agent, args, f);
    f.subtitle = fresh.ok() ? subtitle : subtitle + "   (agent: " + fresh.status().message() + ")";
    if (fresh.ok()) last = *fresh;
    return last;
  });
  return Status::Ok();
}

}  // namespace

Result<double> ParseInterval(const std::string& text) {
  if (text.size() > 2 && text.ends_with("ms")) {
    char* end = nullptr;
    const double ms = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size() - 2 && ms > 0 && std::isfinite(ms)) return ms / 1000;
    return Status::InvalidArgument("--interval: bad duration '" + text + "'");
  }
  Result<double> seconds = ParseCommandDuration(text);
  if (!seconds.ok()) return Status::InvalidArgument("--interval: " + seconds.status().message());
  return *seconds;
}

Result<TopArgs> ParseTopArgs(const std::vector<std::string>& args) {
  TopArgs out;
  Status status =
      ForEachOption(args, "top",
                    {"--interval", "-d", "-i", "--id", "--agent", "--ca-file", "--cert-file",
                     "--key-file", "--basic-auth-user", "--basic-auth-password-file"},
                    [&](const Option& o) -> Status {
                      if ((o.flag == "-h" || o.flag == "--help") && !o.inline_value) {
                        out.help = true;
                      } else if (o.flag == "--once" && !o.inline_value) {
                        out.once = true;
                      } else if (o.flag == "--no-color" && !o.inline_value) {
                        out.color = false;
                      } else if (o.flag == "--interval" || o.flag == "-d") {
                        Result<double> seconds = ParseFlagDuration(o, 0.1, 3600);  // 100ms to 1h
                        if (!seconds.ok()) return seconds.status();
                        out.interval_seconds = *seconds;
                      } else if (o.flag == "-i" || o.flag == "--id") {
                        out.ids = o.value;
                      } else if (!out.agent.Take(o)) {
                        return UnknownOption(o, "top", TopUsage());
                      }
                      return Status::Ok();
                    });
  if (!status.ok()) return status;
  GPUSCOPE_RETURN_IF_ERROR(out.agent.Check());
  return out;
}

std::string TopUsage() {
  return "Usage: gpuscope top [--interval 1s] [-i IDS] [--once] [--no-color]\n"
         "       gpuscope top --agent URL [--interval 1s] [-i IDS] [--once] [TLS, auth]\n"
         "Live view of every GPU: utilization next to SM and tensor activity (GPM), memory,\n"
         "power, temperature, clocks, throttle reasons, PCIe, state, and the processes.\n\n"
         "  -d, --interval DURATION  redraw period: 300ms, 1s, 2s; a bare number is\n"
         "                           seconds (default 1s, 100ms to 1h)\n"
         "  -i, --id IDS             only these GPUs: index, UUID or PCI bus id, comma separated\n"
         "  --once                   print the full frame (a block per GPU) and exit\n"
         "  --no-color               no ANSI colours\n" +
         AgentOptionHelp("the view") +
         "                     (polled every --interval; its verdicts are the agent's)\n\n"
         "Keys: q, Q or Esc quit; j/k or the arrow keys select the GPU whose details show.\n" +
         kSimMomentHelp;
}

Status RunTop(Invocation& inv) {
  Result<TopArgs> args = ParseTopArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << TopUsage();
    return Status::Ok();
  }
  if (args->agent.remote()) return RunTopAgent(*args, inv);
  Result<std::string> library = PrepareNvml(inv.common);
  if (!library.ok()) return library.status();
  log::SetLevel(log::Level::kWarn);
  collect::SamplerOptions options = MakeSamplerOptions(*library, *args);
  if (!args->ids.empty()) {
    Result<collect::DeviceSelection> selection = collect::ParseSmiIds(args->ids);
    if (!selection.ok()) return selection.status();
    options.devices = *selection;
  }
  collect::Sampler sampler(options);
  GPUSCOPE_RETURN_IF_ERROR(sampler.Open());
  FrameOptions frame;
  frame.color = args->color && (args->once ? isatty(STDOUT_FILENO) == 1 : true);
  frame.scenario = ScenarioName(inv.common, [](const char* name) { return std::getenv(name); });
  frame.simulated = !frame.scenario.empty();
  // The first frame has every tier (processes, limits) instead of waiting a slow cycle.
  SnapshotPtr first = sampler.SampleOnce(/*all_tiers=*/true);
  if (!first->nvml_up) return NvmlUnavailable(first->nvml_error);
  if (args->once) {
    // GPM activity is a rate between two samples: take a second one shortly after.
    SleepUntil(std::chrono::steady_clock::now() +
               std::chrono::milliseconds(
                   static_cast<int>(1000 * std::min(args->interval_seconds, kOnceGapSeconds))));
    SnapshotPtr second = sampler.SampleOnce();
    if (second->nvml_up) first = second;
    frame.width = TerminalWidth(STDOUT_FILENO);
    *inv.out << RenderFrame(*Attribute(inv.common, first), frame) << std::flush;
    return Status::Ok();
  }
  InstallStopHandlers();
  frame.subtitle = "every " + std::to_string(static_cast<int>(args->interval_seconds * 1000)) +
                   " ms   q quit   j/k or arrows select a GPU";
  if (Result<double> moment = SimMoment(); frame.simulated && moment.ok()) {
    frame.scenario += " from " + DescribeMoment(*moment);  // the clock runs on from there
  }
  RunLoop(sampler, *args, inv.common, std::move(frame), *inv.out);
  return Status::Ok();
}

}  // namespace gpuscope::cli
