#include "cli/query_command.h"

#include <ext/stdio_filebuf.h>
#include <ostream>

#include "base/own_file.h"
#include "cli/agent_source.h"
#include "cli/node.h"
#include "cli/query_help.h"
#include "cli/stop.h"

namespace gpuscope::cli {
namespace {

// One block of rows (and the header the first time).
Status PrintOnce(const QueryPlan& plan, const Snapshot& snapshot, bool header, std::ostream& out) {
  Result<std::vector<std::size_t>> gpus = SelectGpus(snapshot, plan.ids);
  if (!gpus.ok()) return gpus.status();
  if (gpus->empty()) return Status::NotFound("No devices were found.");
  if (plan.vgpu_table || !plan.vgpu_fields.empty()) {
    Result<std::vector<std::size_t>> hosts = VgpuHosts(snapshot, *gpus);
    if (!hosts.ok()) {  // a lost board lists no vGPUs: say it is lost (15), not unsupported
      Status lost = LostGpus(snapshot, *gpus);
      return lost.ok() ? hosts.status() : lost;
    }
    if (plan.vgpu_detail) {
      out << FormatVgpuDetail(snapshot, *hosts);
    } else if (plan.vgpu_table) {
      out << FormatVgpuTable(snapshot, *hosts);
    } else {
      if (header) out << FormatVgpuHeader(plan.vgpu_fields, plan.csv);
      out << FormatVgpuRows(snapshot, *hosts, plan.vgpu_fields, plan.csv);
    }
  } else if (!plan.gpu_fields.empty()) {
    if (header) out << FormatGpuHeader(plan.gpu_fields, plan.csv);
    out << FormatGpuRows(snapshot, *gpus, plan.gpu_fields, plan.csv);
  } else {
    if (header) out << FormatAppHeader(plan.app_fields, plan.csv);
    out << FormatAppRows(snapshot, *gpus, plan.app_fields, plan.csv);
  }
  out.flush();
  if (!out) return Status::Internal("Writing the query output failed.");
  // nvidia-smi exits 15 for a GPU that fell off the bus: so does the query, after its rows.
  return LostGpus(snapshot, *gpus);
}

// What an agent's snapshot cannot answer: process names it keeps on its host
// (without --process-names), processes it does not read. nvidia-smi would print
// them, so an [N/A] would be a wrong answer: the field is named instead (exit 3).
Status CheckAgentServes(const QueryPlan& plan, const AgentNode& agent) {
  const serve::SnapshotAgent& facts = agent.last().agent;
  for (const AppField* field : plan.app_fields) {
    if (!facts.processes_read) {
      return Status::NotSupported("--query-compute-apps: the gpuscope agent at " + agent.url() +
                                  " does not read processes; run query on the node itself");
    }
    if (field->name == "process_name" && !facts.process_names) {
      return Status::NotSupported(
          "--query-compute-apps=process_name: the gpuscope agent at " + agent.url() +
          " keeps process names on its host (they leave it only when it runs with "
          "--process-names); ask for pid, or run query on the node itself");
    }
  }
  return Status::Ok();
}

Status Execute(const QueryPlan& plan, const CommonOptions& common, const AgentOption& agent,
               std::ostream& out) {
  Result<std::unique_ptr<Node>> node = OpenNode(common, agent);
  if (!node.ok()) return node.status();
  if (plan.loop) InstallStopHandlers();
  // With --agent, -l polls the agent at the interval.
  auto source = [&node, &plan, &agent]() -> Result<SnapshotPtr> {
    Result<SnapshotPtr> snapshot = (*node)->Sample();
    if (!snapshot.ok() || !agent.remote()) return snapshot;
    GPUSCOPE_RETURN_IF_ERROR(CheckAgentServes(plan, static_cast<const AgentNode&>(**node)));
    return snapshot;
  };
  return RunQueryLoop(plan, source, SleepUntil, out);
}

}  // namespace

Result<QueryPlan> PlanQuery(const QueryArgs& args) {
  QueryPlan plan;
  plan.csv = args.csv;
  plan.loop = args.loop;
  plan.ids = args.ids;
  plan.vgpu_table = args.vgpu_table;
  plan.vgpu_detail = args.vgpu_detail;
  if (args.vgpu_table) return plan;
  if (!args.vgpu_fields.empty()) {
    Result<std::vector<const VgpuField*>> fields = ResolveVgpuFields(args.vgpu_fields);
    if (!fields.ok()) return fields.status();
    plan.vgpu_fields = *fields;
  } else if (!args.gpu_fields.empty()) {
    Result<std::vector<const GpuField*>> fields = ResolveGpuFields(args.gpu_fields);
    if (!fields.ok()) return fields.status();
    plan.gpu_fields = *fields;
  } else {
    Result<std::vector<const AppField*>> fields = ResolveAppFields(args.app_fields);
    if (!fields.ok()) return fields.status();
    plan.app_fields = *fields;
  }
  return plan;
}

Status RunQueryLoop(const QueryPlan& plan, const SnapshotSource& source, const Waiter& wait,
                    std::ostream& out) {
  auto next = std::chrono::steady_clock::now();
  for (bool first = true;; first = false) {
    Result<SnapshotPtr> snapshot = source();
    if (!snapshot.ok()) return snapshot.status();
    // A lost GPU ends a single query with its status; a loop goes on (as
    // nvidia-smi -l does) and ends with the last one's.
    Status printed = PrintOnce(plan, **snapshot, first && plan.csv.header, out);
    if (!printed.ok() && (!plan.loop || printed.code() != Status::Code::kUnavailable)) {
      return printed;
    }
    if (!plan.loop) return Status::Ok();
    // Fixed cadence from the start; skip ticks a slow sample overran.
    next += *plan.loop;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now + *plan.loop;
    if (!wait(next)) return printed;
  }
}

Status RunQuery(Invocation& inv) {
  Result<QueryArgs> args = ParseQueryArgs(inv.args);
  if (!args.ok()) return args.status();
  switch (args->help) {
    case QueryArgs::Help::kUsage:
      *inv.out << QueryUsage();
      return Status::Ok();
    case QueryArgs::Help::kGpuFields:
      *inv.out << GpuFieldHelp();
      return Status::Ok();
    case QueryArgs::Help::kAppFields:
      *inv.out << AppFieldHelp();
      return Status::Ok();
    case QueryArgs::Help::kVgpuFields:
      *inv.out << VgpuFieldHelp();
      return Status::Ok();
    case QueryArgs::Help::kNone:
      break;
  }
  Result<QueryPlan> plan = PlanQuery(*args);
  if (!plan.ok()) return plan.status();
  if (args->filename.empty()) return Execute(*plan, inv.common, args->agent, *inv.out);
  // -f FILE: only a plain file of the caller's (gpuscope may run as root; base/own_file.h).
  Result<int> fd = base::OpenOwnFile(args->filename);
  if (!fd.ok()) return fd.status();
  __gnu_cxx::stdio_filebuf<char> buffer(*fd, std::ios::out);  // closes the descriptor
  std::ostream file(&buffer);
  return Execute(*plan, inv.common, args->agent, file);
}

}  // namespace gpuscope::cli
