#include "cli/run_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <ostream>

#include "base/log.h"
#include "base/own_file.h"
#include "cli/common_options.h"
#include "cli/options.h"
#include "cli/report_command.h"
#include "cli/run_child.h"
#include "cli/run_watch.h"
#include "cli/settings.h"
#include "collect/sampler.h"
#include "jobs/report.h"
#include "jobs/run_notes.h"

namespace gpuscope::cli {
namespace {

constexpr double kMinIntervalSeconds = 0.1;
constexpr std::size_t kLiveLineMax = 200;

// The command as typed, for messages: "python3 train.py --epochs 3".
std::string CommandText(const std::vector<std::string>& command) {
  std::string out;
  for (const std::string& word : command) out += (out.empty() ? "" : " ") + word;
  return out;
}

// Writes the report where --report says, or to stderr. The file is only ever
// a plain file of the caller's, created 0644 or truncated (base/own_file.h):
// run is often run as root, and --report may name a path in /tmp.
Status Deliver(const RunArgs& args, const std::string& text, std::ostream& err) {
  if (args.report_file.empty()) {
    err << text;
    err.flush();
    return Status::Ok();
  }
  Status written = base::WriteOwnFile(args.report_file, text);
  return written.ok() ? written : written.Context("--report");
}

std::string Source(const CommonOptions& common) {
  const std::string scenario = ScenarioName(common, [](const char* k) { return std::getenv(k); });
  return scenario.empty() ? "gpuscope run, NVML in this process"
                          : "gpuscope run, NVML simulator (" + scenario + ")";
}

// The report of a command that held GPUs, in the format asked.
std::string Render(const RunArgs& args, const jobs::Report& report, const Outcome& outcome,
                   double wall_seconds) {
  if (args.json) return jobs::ReportJson(report);
  const std::string how = outcome.signal ? fmt::format("was killed by signal {} (status {})",
                                                       outcome.signal, outcome.status)
                                         : fmt::format("exited with status {}", outcome.status);
  const std::string head = fmt::format("gpuscope run: {} {} after {:.1f} s wall time.\n",
                                       CommandText(args.command), how, wall_seconds);
  if (args.markdown) return head + "\n" + jobs::ReportMarkdown(report);
  return head + jobs::ReportTable(report);
}

// The report at the command's exit.
std::string Report(const RunArgs& args, const Invocation& inv, const RunWatch& watch,
                   const jobs::NoteThresholds& thresholds, pid_t pid, double start, double end,
                   const Outcome& outcome) {
  std::optional<jobs::JobUsage> usage = watch.Usage();
  if (!usage) return jobs::NoGpuLine(CommandText(args.command), end - start);
  usage->start = start;
  usage->end = end;
  jobs::Report report = jobs::BuildReport(*usage, {Source(inv.common), std::nullopt, thresholds});
  report.job = "run " + std::to_string(pid);
  for (jobs::Note& note : jobs::RunNotes(report, watch.Facts(end), thresholds)) {
    report.notes.push_back(std::move(note));
  }
  return Render(args, report, outcome, end - start);
}

// Draws the live line on a terminal's stderr; clears it when done.
class LiveLine {
 public:
  explicit LiveLine(bool on) : on_(on && isatty(STDERR_FILENO)) {}
  void Draw(const std::string& line) {
    if (!on_) return;
    const std::string text = "\r\033[K" + line.substr(0, kLiveLineMax);
    ssize_t ignored = write(STDERR_FILENO, text.data(), text.size());
    (void)ignored;
    drawn_ = true;
  }
  ~LiveLine() {
    if (!drawn_) return;
    ssize_t ignored = write(STDERR_FILENO, "\r\033[K", 4);
    (void)ignored;
  }

 private:
  bool on_, drawn_ = false;
};

}  // namespace

Result<RunArgs> ParseRunArgs(const std::vector<std::string>& args) {
  RunArgs out;
  std::size_t i = 0;
  std::vector<std::string> options;
  for (; i < args.size(); ++i) {
    if (args[i] == "--") {
      ++i;
      break;
    }
    if (!args[i].starts_with("-")) break;
    options.push_back(args[i]);
    // A value flag takes the next word as its value.
    const bool takes_value =
        args[i] == "--report" || args[i] == "--interval" || args[i] == "--thresholds";
    if (takes_value && i + 1 < args.size()) options.push_back(args[++i]);
  }
  out.command.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  Status status = ForEachOption(
      options, "run", {"--report", "--interval", "--thresholds"}, [&](const Option& o) -> Status {
        if (o.flag == "-h" || o.flag == "--help") {
          out.help = true;
        } else if (o.flag == "--json" && !o.inline_value) {
          out.json = true;
        } else if (o.flag == "--markdown" && !o.inline_value) {
          out.markdown = true;
        } else if (o.flag == "--live" && !o.inline_value) {
          out.live = true;
        } else if (o.flag == "--report") {
          out.report_file = o.value;
        } else if (o.flag == "--thresholds") {
          out.thresholds_file = o.value;
        } else if (o.flag == "--interval") {
          Result<double> seconds = ParseDuration(o.value);
          if (!seconds.ok())
            return Status::InvalidArgument("--interval: " + seconds.status().message());
          if (*seconds < kMinIntervalSeconds) {
            return Status::InvalidArgument("--interval: at least 100ms, got '" + o.value + "'");
          }
          out.interval_seconds = *seconds;
        } else {
          return UnknownOption(o, "run");
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  if (out.json && out.markdown) {
    return Status::InvalidArgument("--json and --markdown: choose one format");
  }
  if (out.command.empty() && !out.help) {
    return Status::InvalidArgument(
        "gpuscope run: no command to run; usage: gpuscope run "
        "[OPTIONS] -- CMD ARGS... (see gpuscope run --help)");
  }
  return out;
}

std::string RunUsage() {
  return "Usage: gpuscope run [OPTIONS] -- CMD ARGS...\n"
         "Runs CMD and reports, when it exits, what its processes used of the GPUs:\n"
         "wall time, GPU-hours, per GPU busy, SM activity, peak memory, energy, idle and\n"
         "throttled time, the diagnosis's findings with when they held, and notes.\n"
         "CMD keeps the terminal, environment, directory and stdio; Ctrl-C, SIGINT and\n"
         "SIGTERM go to it; gpuscope exits with its status (128 + signal if killed).\n\n"
         "Options:\n"
         "  --report FILE      write the report to FILE instead of stderr\n"
         "  --json             JSON (the `gpuscope report job --json` contract)\n"
         "  --markdown         Markdown, for a CI log or a pull request comment\n"
         "  --live             one refreshed status line on stderr (only on a terminal)\n"
         "  --interval D       sampling interval like serve's -c: 500ms, 2s, bare ms "
         "(default 1000)\n"
         "  --thresholds FILE  thresholds of the notes (deploy/reports/thresholds.yaml)\n"
         "  --simulate NAME    run on the NVML simulator (see gpuscope --help)\n";
}

Status RunRun(Invocation& inv) {
  Result<RunArgs> args = ParseRunArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << RunUsage();
    return Status::Ok();
  }
  const Resolved resolved = ResolveCommand(args->command.front(), std::getenv("PATH"));
  if (resolved.failure_status != 0) {
    *inv.err << "gpuscope run: " << resolved.error << "\n";
    inv.exit_code = resolved.failure_status;
    return Status::Ok();
  }
  Result<jobs::NoteThresholds> thresholds = LoadThresholds(args->thresholds_file);
  if (!thresholds.ok()) return thresholds.status();
  log::SetLevel(log::Level::kWarn);  // stderr is the command's and the report's
  Result<std::string> library = PrepareNvml(inv.common);
  if (!library.ok()) return library.status();
  // Before any thread starts: only this thread takes the forwarded signals.
  BlockRunSignals();
  RunWatch watch({*library, args->interval_seconds, static_cast<unsigned>(getpid())});
  if (Status opened = watch.Open(); !opened.ok()) {
    return opened.Context("gpuscope run: cannot sample the GPUs, so " + CommandText(args->command) +
                          " was not started");
  }
  const double start = collect::SystemClock();
  watch.Start(start);
  Child child;
  if (Status started = child.Start(resolved.path, args->command); !started.ok()) {
    watch.Stop();
    *inv.err << "gpuscope run: " << started.message() << "\n";
    inv.exit_code = 126;
    return Status::Ok();
  }
  const pid_t pid = child.pid();
  Outcome outcome;
  {
    LiveLine live(args->live);
    const auto period = std::chrono::milliseconds(
        static_cast<long>(std::max(kMinIntervalSeconds, args->interval_seconds) * 1000));
    outcome = child.Wait(period, [&] { live.Draw(watch.LiveLine()); });
  }
  const double end = collect::SystemClock();
  watch.Stop();
  inv.exit_code = outcome.status;
  Status delivered =
      Deliver(*args, Report(*args, inv, watch, *thresholds, pid, start, end, outcome), *inv.err);
  // The command's status stands: a report that could not be written is said, not returned.
  if (!delivered.ok()) *inv.err << "gpuscope run: " << delivered.message() << "\n";
  return Status::Ok();
}

}  // namespace gpuscope::cli
