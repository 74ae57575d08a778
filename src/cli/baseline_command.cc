#include "cli/baseline_command.h"

#include <cmath>
#include <ostream>

#include "base/text.h"
#include "cli/options.h"

namespace gpuscope::cli {
namespace {

constexpr double kDay = 86400;

// A whole number of days (14d, 336h, 1209600) from a duration.
Result<int> Days(const Option& o) {
  if (o.value.size() > 1 && o.value.back() == 'd') {
    char* end = nullptr;
    const long d = std::strtol(o.value.c_str(), &end, 10);
    if (end == o.value.c_str() + o.value.size() - 1 && d > 0 && d <= 366) {
      return static_cast<int>(d);
    }
    return Status::InvalidArgument(o.flag + ": want whole days, got '" + o.value + "'");
  }
  Result<double> s = ParseCommandDuration(o.value);
  if (!s.ok()) return Status::InvalidArgument(o.flag + ": " + s.status().message());
  if (std::fmod(*s, kDay) != 0) {
    return Status::InvalidArgument(o.flag + ": want whole days, got '" + o.value + "'");
  }
  return static_cast<int>(*s / kDay);
}

Result<int> Minutes(const Option& o) {
  Result<double> s = ParseCommandDuration(o.value);
  if (!s.ok()) return Status::InvalidArgument(o.flag + ": " + s.status().message());
  if (std::fmod(*s, 60) != 0) {
    return Status::InvalidArgument(o.flag + ": want whole minutes, got '" + o.value + "'");
  }
  return static_cast<int>(*s / 60);
}

Result<double> Positive(const Option& o) {
  char* end = nullptr;
  const double v = std::strtod(o.value.c_str(), &end);
  if (o.value.empty() || *end != '\0' || !std::isfinite(v) || v <= 0) {
    return Status::InvalidArgument(o.flag + ": want a number > 0, got '" + o.value + "'");
  }
  return v;
}

// Options both forms take. Returns false when `o` is not one of them.
Result<bool> Shared(const Option& o, BaselineArgs& out) {
  if (o.flag == "--window") {
    Result<int> d = Days(o);
    if (!d.ok()) return d.status();
    out.report.window_days = out.rule.window_days = *d;
  } else if (o.flag == "--k") {
    Result<double> k = Positive(o);
    if (!k.ok()) return k.status();
    out.report.k = out.rule.k = *k;
  } else if (o.flag == "--interval") {
    Result<int> m = Minutes(o);
    if (!m.ok()) return m.status();
    out.report.baseline_interval_minutes = out.rule.baseline_interval_minutes = *m;
  } else if (o.flag == "--signal") {
    Result<baseline::Signal> s = baseline::ParseSignal(o.value);
    if (!s.ok()) return s.status();
    out.rule.signals.push_back(*s);
    out.report.signals.push_back(*s);
  } else if (o.flag == "-h" || o.flag == "--help") {
    out.help = true;
  } else {
    return false;
  }
  return true;
}

Status RulesOption(const Option& o, BaselineArgs& out, bool& no_defaults) {
  if (o.flag == "--no-default-signals" && !o.inline_value) {
    no_defaults = true;
  } else if (o.flag == "--warmup") {
    Result<int> d = Days(o);
    if (!d.ok()) return d.status();
    out.rule.warmup_days = *d;
  } else if (o.flag == "--sustain") {
    Result<int> m = Minutes(o);
    if (!m.ok()) return m.status();
    out.rule.sustain_minutes = *m;
  } else {
    return UnknownOption(o, "baseline rules", BaselineUsage());
  }
  return Status::Ok();
}

Status ReportOption(const Option& o, BaselineArgs& out) {
  auto& c = out.client;
  if (o.flag == "--json" && !o.inline_value) {
    out.json = true;
  } else if (o.flag == "--prometheus") {
    c.url = o.value;
  } else if (o.flag == "--workload") {
    out.report.workload = o.value;
  } else if (!TakeClientOption(o, c)) {
    return UnknownOption(o, "baseline", BaselineUsage());
  }
  return Status::Ok();
}

Status RunReport(const BaselineArgs& args, Invocation& inv) {
  Result<baseline::PromClient> client = baseline::PromClient::Create(args.client);
  if (!client.ok()) return client.status();
  std::vector<std::vector<baseline::Sample>> answers;
  for (const std::string& q : baseline::ReportQueries(args.report)) {
    Result<std::vector<baseline::Sample>> a = client->Query(q);
    if (!a.ok()) return a.status();
    answers.push_back(std::move(*a));
  }
  std::vector<baseline::Row> rows = baseline::BuildReport(args.report, answers);
  // Label values come from the server: nothing in them may drive the terminal.
  *inv.out << base::TerminalText(args.json
                                     ? baseline::RenderJson(args.report, args.client.url, rows)
                                     : baseline::RenderText(args.report, rows),
                                 /*keep_lines=*/true);
  return Status::Ok();
}

}  // namespace

Result<BaselineArgs> ParseBaselineArgs(const std::vector<std::string>& args) {
  BaselineArgs out;
  std::vector<std::string> rest = args;
  if (!rest.empty() && rest.front() == "rules") {
    out.rules = true;
    rest.erase(rest.begin());
  }
  bool no_defaults = false;
  Status status =
      ForEachOption(rest, out.rules ? "baseline rules" : "baseline",
                    {"--prometheus", "--workload", "--window", "--k", "--interval", "--signal",
                     "--warmup", "--sustain", "--ca-file", "--cert-file", "--key-file",
                     "--basic-auth-user", "--basic-auth-password-file"},
                    [&](const Option& o) -> Status {
                      Result<bool> shared = Shared(o, out);
                      if (!shared.ok()) return shared.status();
                      if (*shared) return Status::Ok();
                      return out.rules ? RulesOption(o, out, no_defaults) : ReportOption(o, out);
                    });
  if (!status.ok()) return status;
  if (no_defaults) {
    const size_t defaults = baseline::DefaultSignals().size();
    out.rule.signals.erase(out.rule.signals.begin(), out.rule.signals.begin() + defaults);
  }
  if (!out.rules && !out.help && out.client.url.empty()) {
    return Status::InvalidArgument(
        "gpuscope baseline needs --prometheus URL (or `gpuscope baseline rules`); see gpuscope "
        "baseline --help.");
  }
  return out;
}

std::string BaselineUsage() {
  return "Usage: gpuscope baseline --prometheus URL [--json] [--workload NAME] [--window 14d]\n"
         "                         [--k 3] [--interval 60m] [--ca-file PEM]\n"
         "                         [--cert-file PEM --key-file PEM]\n"
         "                         [--basic-auth-user USER --basic-auth-password-file FILE]\n"
         "       gpuscope baseline rules [--signal NAME:DIRECTION:FLOOR:EXPR]...\n"
         "                         [--no-default-signals] [--window 14d] [--warmup 7d] [--k 3]\n"
         "                         [--sustain 60m] [--interval 60m]\n"
         "Per-workload baselines learnt by Prometheus from the rules of\n"
         "deploy/prometheus/rules/gpu-baselines.yml (docs/baselines.md). Durations take\n"
         "units: --window and --warmup whole days (14d), --interval and --sustain whole\n"
         "minutes (60m, 1h); a bare number is seconds.\n\n"
         "The first form prints, per workload, GPU model and signal, the p5-p95 band, the\n"
         "median, the current 5-minute value, the deviation in spreads and a verdict\n"
         "(normal, below, above, unusual, warming-up, no-current); --json gives the same as\n"
         "data. TLS is always verified (--ca-file for a private CA); the basic-auth password\n"
         "is read from the first line of a file.\n\n"
         "`rules` prints the recording and alert rules: the default signals plus each\n"
         "--signal (DIRECTION falling, rising or none; FLOOR the smallest spread; EXPR PromQL\n"
         "giving one value per GPU holder over 5 minutes, with instance, gpu, uuid and the\n"
         "attribution labels), over another --window, warm-up, k or sustain if given.\n";
}

Status RunBaseline(Invocation& inv) {
  Result<BaselineArgs> args = ParseBaselineArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << BaselineUsage();
    return Status::Ok();
  }
  if (!args->rules) return RunReport(*args, inv);
  Result<std::string> text = baseline::RenderRules(args->rule);
  if (!text.ok()) return text.status();
  *inv.out << *text;
  return Status::Ok();
}

}  // namespace gpuscope::cli
