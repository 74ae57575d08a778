// libFuzzer target: the agent's /api/v1/jobs answer parser
// (jobs/usage_json.h) and the reports `gpuscope report --agent` makes of it
// (jobs/report.h). Any input must parse or fail with a message, never throw;
// a parsed holder is refused by CheckUsage or prints, in every format,
// without a byte that could drive a terminal.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "jobs/report.h"
#include "jobs/usage_json.h"
#include "terminal_control.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<std::vector<jobs::JobUsage>> usages = jobs::ParseJobsBody(text);
  if (!usages.ok()) {
    if (usages.status().message().empty()) std::abort();
    return 0;
  }
  std::vector<jobs::JobUsage> checked;
  for (const jobs::JobUsage& u : *usages) {
    if (jobs::CheckUsage(u).ok()) checked.push_back(u);
  }
  std::vector<jobs::Report> reports;
  for (const jobs::JobUsage& u : jobs::FoldByNamespace(checked)) checked.push_back(u);
  for (const jobs::JobUsage& u : checked) {
    const jobs::Report report = jobs::BuildReport(u, {"agent http://fuzz", 2.5, {}, std::nullopt});
    for (const std::string& out :
         {jobs::ReportTable(report), jobs::ReportMarkdown(report), jobs::ReportJson(report)}) {
      if (fuzz::HasTerminalControl(out)) std::abort();
    }
    reports.push_back(report);
  }
  for (const std::string& out : {jobs::TenantsTable(reports, false),
                                 jobs::TenantsTable(reports, true), jobs::TenantsJson(reports)}) {
    if (fuzz::HasTerminalControl(out)) std::abort();
  }
  return 0;
}
