// libFuzzer target: the Prometheus API answer parser (baseline/prom_client.h)
// and what `gpuscope report --prometheus` makes of its samples
// (jobs/prom_source.h, jobs/report.h). Any input must parse or fail with a
// message, never throw; a parsed answer, read as every query's answer, gives
// a report that is refused by CheckUsage or prints without a control byte.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "jobs/prom_source.h"
#include "jobs/report.h"
#include "terminal_control.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<std::vector<baseline::Sample>> samples = baseline::ParseQueryResponse(text);
  if (!samples.ok()) {
    if (samples.status().message().rfind("Prometheus ", 0) != 0) std::abort();
    if (fuzz::HasTerminalControl(samples.status().message())) std::abort();
    return 0;
  }
  if (samples->empty()) return 0;
  const jobs::PromQuery query{"job", "4242", 86400, 15};
  const std::vector<std::vector<baseline::Sample>> answers(jobs::UsageQueries(query)->size(),
                                                           *samples);
  Result<jobs::JobUsage> usage = jobs::UsageFromAnswers(query, answers, 1.7e9);
  if (!usage.ok() || !jobs::CheckUsage(*usage).ok()) return 0;
  const jobs::Report report =
      jobs::BuildReport(*usage, {"prometheus http://fuzz", 2.5, {}, std::nullopt});
  for (const std::string& out : {jobs::ReportTable(report), jobs::ReportMarkdown(report),
                                 jobs::ReportJson(report), jobs::TenantsTable({report}, false)}) {
    if (fuzz::HasTerminalControl(out)) std::abort();
  }
  return 0;
}
