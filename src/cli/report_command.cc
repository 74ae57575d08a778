#include "cli/report_command.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "analysis/rules.h"
#include "base/text.h"
#include "cli/options.h"
#include "jobs/attribution_switches.h"
#include "jobs/prom_source.h"
#include "jobs/prom_tenants.h"
#include "jobs/report.h"
#include "jobs/usage_json.h"

namespace gpuscope::cli {
namespace {

bool IsHolderKind(const std::string& what) {
  return what == "job" || what == "pod" || what == "workload";
}

// Each usage checked (jobs::CheckUsage): the source is the network.
Status CheckAll(const std::vector<jobs::JobUsage>& usages, const std::string& source) {
  for (const jobs::JobUsage& u : usages) {
    if (Status s = jobs::CheckUsage(u); !s.ok()) return s.Context(source);
  }
  return Status::Ok();
}

// What the agent's ledger answered: its holders, and which sources could name them.
struct AgentJobs {
  std::vector<jobs::JobUsage> jobs;
  std::optional<jobs::AttributionSwitches> attribution;  // nullopt: an older agent
};

// The agent's holders of one kind ("" for every kind).
Result<AgentJobs> FetchJobs(const ReportArgs& args, const std::string& kind) {
  Result<baseline::PromClient> client = baseline::PromClient::Create(args.agent);
  if (!client.ok()) return client.status();
  Result<std::string> body =
      client->Get(kind.empty() ? "/api/v1/jobs" : "/api/v1/jobs?kind=" + kind);
  if (!body.ok()) return body.status();
  Result<std::vector<jobs::JobUsage>> jobs = jobs::ParseJobsBody(*body);
  if (!jobs.ok()) return jobs.status().Context("gpuscope agent at " + args.agent.url);
  GPUSCOPE_RETURN_IF_ERROR(CheckAll(*jobs, "gpuscope agent at " + args.agent.url));
  return AgentJobs{std::move(*jobs), jobs::SwitchesFromJson(nlohmann::json::parse(
                                         *body, nullptr, /*allow_exceptions=*/false))};
}

// "4242, 4243 and 3 more": the ids an unknown one may have meant.
std::string IdList(const std::vector<jobs::JobUsage>& all) {
  constexpr std::size_t kShown = 10;
  std::string out;
  for (std::size_t i = 0; i < all.size() && i < kShown; ++i) {
    out += (i ? ", " : "") + base::TerminalText(all[i].id);  // from the network
  }
  if (all.size() > kShown) out += " and " + std::to_string(all.size() - kShown) + " more";
  return out;
}

jobs::ReportOptions MakeOptions(const ReportArgs& args, jobs::NoteThresholds thresholds) {
  return {(args.prometheus ? "prometheus " : "agent ") + args.agent.url, args.gpu_hour_price,
          thresholds};
}

// The holder from the agent's ledger; NotFound naming it, the agent, and the
// ones it knows (or why it knows none).
Result<jobs::JobUsage> FromAgent(const ReportArgs& args) {
  Result<AgentJobs> all = FetchJobs(args, args.what);
  if (!all.ok()) return all.status();
  const std::vector<jobs::JobUsage>& known = all->jobs;
  auto it = std::find_if(known.begin(), known.end(),
                         [&](const jobs::JobUsage& u) { return u.id == args.id; });
  if (it != known.end()) return *it;
  const std::string missing =
      "no " + args.what + " '" + args.id + "' on the gpuscope agent at " + args.agent.url;
  if (known.empty()) {
    return Status::NotFound(missing + ": it knows no " + args.what +
                            " at all: " + jobs::WhyNoHolders(all->attribution, args.what));
  }
  return Status::NotFound(missing + " (ended ones are kept for --jobs-keep-ended); it knows " +
                          args.what + (known.size() == 1 ? " " : "s ") + IdList(known));
}

// Every query's answer, in order; `now` set to when they were asked.
Result<std::vector<std::vector<baseline::Sample>>> AskPrometheus(
    const ReportArgs& args, const std::vector<std::string>& queries, double* now) {
  Result<baseline::PromClient> client = baseline::PromClient::Create(args.agent);
  if (!client.ok()) return client.status();
  *now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<std::vector<baseline::Sample>> answers;
  for (const std::string& q : queries) {
    Result<std::vector<baseline::Sample>> a = client->Query(q);
    if (!a.ok()) return a.status();
    answers.push_back(std::move(*a));
  }
  return answers;
}

// The holder from the series in Prometheus; NotFound naming it and the server.
Result<jobs::JobUsage> FromPrometheus(const ReportArgs& args,
                                      std::optional<jobs::WorkloadBaseline>* baseline_out) {
  const jobs::PromQuery query{args.what, args.id, args.since_seconds, args.scrape_interval_seconds};
  Result<std::vector<std::string>> queries = jobs::UsageQueries(query);
  if (!queries.ok()) return queries.status();
  double now = 0;
  Result<std::vector<std::vector<baseline::Sample>>> answers = AskPrometheus(args, *queries, &now);
  if (!answers.ok()) return answers.status();
  Result<jobs::JobUsage> usage = jobs::UsageFromAnswers(query, *answers, now);
  if (!usage.ok()) return usage.status().Context("Prometheus at " + args.agent.url);
  GPUSCOPE_RETURN_IF_ERROR(CheckAll({*usage}, "Prometheus at " + args.agent.url));
  // The workload's baseline, where the shipped baseline rules record one.
  Result<std::vector<std::vector<baseline::Sample>>> learned =
      AskPrometheus(args, jobs::BaselineQueries(*usage), &now);
  if (!learned.ok()) return learned.status();
  *baseline_out = jobs::BaselineFromAnswers(*usage, *learned);
  return usage;
}

Status ReportOne(const ReportArgs& args, const jobs::NoteThresholds& thresholds, Invocation& inv) {
  std::optional<jobs::WorkloadBaseline> learned;
  Result<jobs::JobUsage> usage = args.prometheus ? FromPrometheus(args, &learned) : FromAgent(args);
  if (!usage.ok()) return usage.status();
  jobs::ReportOptions options = MakeOptions(args, thresholds);
  options.baseline = learned;
  jobs::Report report = jobs::BuildReport(*usage, options);
  *inv.out << (args.json       ? jobs::ReportJson(report)
               : args.markdown ? jobs::ReportMarkdown(report)
                               : jobs::ReportTable(report));
  return Status::Ok();
}

// Every holder of the kind seen in the range, from the series in Prometheus.
Result<std::vector<jobs::JobUsage>> TenantsFromPrometheus(const ReportArgs& args,
                                                          const std::string& kind) {
  const jobs::TenantsQuery query{kind, args.since_seconds, args.scrape_interval_seconds};
  Result<std::vector<std::string>> queries = jobs::TenantsQueries(query);
  if (!queries.ok()) return queries.status();
  double now = 0;
  Result<std::vector<std::vector<baseline::Sample>>> answers = AskPrometheus(args, *queries, &now);
  if (!answers.ok()) return answers.status();
  Result<std::vector<jobs::JobUsage>> all = jobs::TenantsFromAnswers(query, *answers, now);
  if (!all.ok()) return all.status().Context("Prometheus at " + args.agent.url);
  GPUSCOPE_RETURN_IF_ERROR(CheckAll(*all, "Prometheus at " + args.agent.url));
  return all;
}

// Every holder of the kind the agent keeps; NotFound saying why when there is
// none (a bare header would read as "nobody used the GPUs").
Result<std::vector<jobs::JobUsage>> TenantsFromAgent(const ReportArgs& args,
                                                     const std::string& kind) {
  Result<AgentJobs> agent = FetchJobs(args, kind);
  if (!agent.ok()) return agent.status();
  if (!agent->jobs.empty()) return std::move(agent->jobs);
  return Status::NotFound("report tenants: the gpuscope agent at " + args.agent.url + " knows no " +
                          kind + ": " + jobs::WhyNoHolders(agent->attribution, kind));
}

Status ReportTenants(const ReportArgs& args, const jobs::NoteThresholds& thresholds,
                     Invocation& inv) {
  // A namespace's row: its pods' folded.
  const bool by_namespace = args.by == "namespace";
  const std::string kind = by_namespace ? "pod" : args.by;
  Result<std::vector<jobs::JobUsage>> all =
      args.prometheus ? TenantsFromPrometheus(args, kind) : TenantsFromAgent(args, kind);
  if (!all.ok()) return all.status();
  if (by_namespace) *all = jobs::FoldByNamespace(*all);
  double latest = 0;  // the agent's clock, not ours: its newest "last seen"
  for (const jobs::JobUsage& u : *all) {
    for (const jobs::DeviceUsage& d : u.devices) latest = std::max(latest, d.last_seen);
  }
  std::vector<jobs::Report> rows;
  for (const jobs::JobUsage& u : *all) {
    // Prometheus answered for the range already.
    if (!args.prometheus && u.end && *u.end < latest - args.since_seconds) continue;
    rows.push_back(jobs::BuildReport(u, MakeOptions(args, thresholds)));
  }
  if (rows.empty()) {
    const std::string since = "within --since " + analysis::Duration(args.since_seconds);
    return Status::NotFound(
        "report tenants: " +
        (args.prometheus
             ? "Prometheus at " + args.agent.url + " has no gpuscope series of a " + kind +
                   " holding a GPU " + since
             : "no " + kind + " held a GPU " + since + " on the gpuscope agent at " +
                   args.agent.url + " (" + std::to_string(all->size()) + " ended earlier)"));
  }
  *inv.out << (args.json ? jobs::TenantsJson(rows) : jobs::TenantsTable(rows, args.markdown));
  return Status::Ok();
}

bool IsSwitch(std::string_view flag) {
  return flag == "--json" || flag == "--markdown" || flag == "-h" || flag == "--help";
}

}  // namespace

Result<jobs::NoteThresholds> LoadThresholds(const std::string& path) {
  if (path.empty()) return jobs::NoteThresholds{};
  std::ifstream in(path);
  if (!in) return Status::NotFound("--thresholds: cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  Result<jobs::NoteThresholds> parsed = jobs::ParseThresholds(text.str());
  if (!parsed.ok()) return parsed.status().Context(path);
  return parsed;
}

Result<ReportArgs> ParseReportArgs(const std::vector<std::string>& args) {
  ReportArgs out;
  out.agent.server = "gpuscope agent";
  out.agent.url_option = "--agent";
  std::vector<std::string> rest;
  std::vector<std::string> positional;
  for (std::size_t i = 0; i < args.size(); ++i) {
    // A flag's value is never the report's ID (`report job --agent URL`): every
    // flag but the switches takes one.
    const bool value = i > 0 && args[i - 1].starts_with("-") &&
                       args[i - 1].find('=') == std::string::npos && !IsSwitch(args[i - 1]);
    const bool flag = args[i].starts_with("-") || value;
    if (!flag && positional.size() < 2 && (positional.empty() || IsHolderKind(positional[0]))) {
      positional.push_back(args[i]);
    } else {
      rest.push_back(args[i]);
    }
  }
  Status status = ForEachOption(
      rest, "report",
      {"--agent", "--prometheus", "--scrape-interval", "--gpu-hour-price", "--thresholds",
       "--since", "--by", "--ca-file", "--cert-file", "--key-file", "--basic-auth-user",
       "--basic-auth-password-file"},
      [&](const Option& o) -> Status {
        if (o.flag == "-h" || o.flag == "--help") {
          out.help = true;
        } else if (o.flag == "--json" && !o.inline_value) {
          out.json = true;
        } else if (o.flag == "--markdown" && !o.inline_value) {
          out.markdown = true;
        } else if (o.flag == "--agent" || o.flag == "--prometheus") {
          if (!out.agent.url.empty()) {
            return Status::InvalidArgument("one source: --agent URL or --prometheus URL");
          }
          out.agent.url = o.value;
          out.prometheus = o.flag == "--prometheus";
        } else if (o.flag == "--scrape-interval") {
          Result<double> seconds = ParseCommandDuration(o.value);
          if (!seconds.ok()) {
            return Status::InvalidArgument("--scrape-interval: " + seconds.status().message());
          }
          out.scrape_interval_seconds = *seconds;
        } else if (o.flag == "--thresholds") {
          out.thresholds_file = o.value;
        } else if (o.flag == "--by") {
          if (!IsHolderKind(o.value) && o.value != "namespace") {
            return Status::InvalidArgument("--by: '" + o.value +
                                           "' is not namespace, workload, job or pod");
          }
          out.by = o.value;
        } else if (o.flag == "--since") {
          Result<double> seconds = ParseCommandDuration(o.value);
          if (!seconds.ok())
            return Status::InvalidArgument("--since: " + seconds.status().message());
          out.since_seconds = *seconds;
        } else if (o.flag == "--gpu-hour-price") {
          char* end = nullptr;
          const double price = std::strtod(o.value.c_str(), &end);
          if (o.value.empty() || *end != '\0' || !(price >= 0)) {
            return Status::InvalidArgument("--gpu-hour-price: expected a number >= 0, got '" +
                                           o.value + "'");
          }
          out.gpu_hour_price = price;
        } else if (!TakeClientOption(o, out.agent)) {
          return UnknownOption(o, "report", ReportUsage());
        }
        return Status::Ok();
      });
  if (!status.ok()) return status;
  if (out.help) return out;
  if (positional.empty()) {
    return Status::InvalidArgument(
        "report: say what to report: job ID, pod NS/NAME, workload "
        "NAME or tenants (see gpuscope report --help)");
  }
  out.what = positional[0];
  if (IsHolderKind(out.what)) {
    if (positional.size() < 2) {
      const std::string what = out.what == "job" ? "ID" : out.what == "pod" ? "NS/NAME" : "NAME";
      return Status::InvalidArgument("report " + out.what + ": the " + out.what + " " + what +
                                     " is missing: gpuscope report " + out.what + " " + what +
                                     " --agent URL (see gpuscope report --help)");
    }
    out.id = positional[1];
  } else if (out.what != "tenants") {
    return Status::InvalidArgument("report: '" + out.what +
                                   "' is not job, pod, workload or tenants");
  }
  if (out.json && out.markdown) return Status::InvalidArgument("--json or --markdown, not both");
  if (out.agent.url.empty()) {
    return Status::InvalidArgument(
        "report: a source is required: --agent URL (a running gpuscope serve) or "
        "--prometheus URL");
  }
  if (out.prometheus) {
    out.agent.server = "Prometheus";
    out.agent.url_option = "--prometheus";
  }
  return out;
}

std::string ReportUsage() {
  return "Usage: gpuscope report job ID | pod NS/NAME | workload NAME --agent URL\n"
         "                       [--json | --markdown] [--gpu-hour-price P] [--thresholds FILE]\n"
         "       gpuscope report tenants --agent URL | --prometheus URL [--since 7d]\n"
         "                       [--by namespace|workload|job|pod] [--gpu-hour-price P]\n"
         "       gpuscope report job ID ... --prometheus URL [--since 7d] [--scrape-interval 15s]\n"
         "What a job used, what it wasted and what to ask for next time: GPU-hours, busy and\n"
         "SM-active share, peak memory, energy, idle-held and throttled time, with notes.\n\n"
         "  --agent URL            a running `gpuscope serve` (http(s)://host:9400): its job\n"
         "                         ledger (/api/v1/jobs), kept 24 h after a job ends\n"
         "  --prometheus URL       a Prometheus-compatible API (Prometheus, VictoriaMetrics)\n"
         "                         that scrapes the agents: jobs across nodes, long history\n"
         "  --scrape-interval D    its scrape interval (default 15s): the series' resolution\n"
         "  --json                 the JSON contract of docs/reports.md\n"
         "  --markdown             Markdown, for an e-mail or a Slurm AdminComment\n"
         "  --gpu-hour-price P     price of one GPU-hour: adds the cost\n"
         "  --thresholds FILE      YAML that overrides the notes' thresholds\n"
         "                         (deploy/reports/thresholds.yaml lists them)\n"
         "  --since DURATION       --agent tenants: holders that ended within this;\n"
         "                         --prometheus: how far back to look (default 7d)\n"
         "                         (durations: 15s, 5m, 7d; a bare number is seconds)\n"
         "  --by KIND              tenants: one row per workload (default), namespace (its\n"
         "                         pods together), job or pod\n"
         "  --ca-file, --cert-file, --key-file, --basic-auth-user,\n"
         "  --basic-auth-password-file  TLS and basic auth towards the agent\n";
}

Status RunReport(Invocation& inv) {
  Result<ReportArgs> args = ParseReportArgs(inv.args);
  if (!args.ok()) return args.status();
  if (args->help) {
    *inv.out << ReportUsage();
    return Status::Ok();
  }
  Result<jobs::NoteThresholds> thresholds = LoadThresholds(args->thresholds_file);
  if (!thresholds.ok()) return thresholds.status();
  return args->what == "tenants" ? ReportTenants(*args, *thresholds, inv)
                                 : ReportOne(*args, *thresholds, inv);
}

}  // namespace gpuscope::cli
