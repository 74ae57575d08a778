#include "serve/jobs_endpoints.h"

#include <memory>
#include <string>
#include <utility>

#include "jobs/usage_json.h"
#include "serve/web_endpoints.h"
#include "web/params.h"

namespace gpuscope::serve {
namespace {

http::Response Answer(const jobs::Ledger& ledger, const nlohmann::json& attribution,
                      const http::Request& request) {
  Status params = web::CheckParameters(request, {"kind", "id"});
  if (!params.ok()) return http::Response::Text(400, params.message() + "\n");
  const std::string kind(request.QueryValue("kind"));
  const std::string id(request.QueryValue("id"));
  if (!kind.empty() && kind != "job" && kind != "pod" && kind != "workload") {
    return http::Response::Text(400,
                                "kind: " + web::Quoted(kind) + " is not job, pod or workload\n");
  }
  if (id.empty()) return JsonResponse(request, jobs::JobsBody(ledger.List(kind), attribution));
  if (kind.empty()) return http::Response::Text(400, "id needs kind (job, pod or workload)\n");
  std::optional<jobs::JobUsage> usage = ledger.Find(kind, id);
  if (!usage) {
    return http::Response::Text(404, "no " + kind + " " + web::Quoted(id) +
                                         " on this agent (never seen, or ended and "
                                         "no longer kept)\n");
  }
  return JsonResponse(request, jobs::UsageToJson(*usage).dump() + "\n");
}

}  // namespace

void RegisterJobsEndpoints(http::Server& server, const jobs::Ledger& ledger,
                           jobs::AttributionSwitches attribution) {
  server.Handle("/api/v1/jobs",
                [&ledger, on = jobs::SwitchesToJson(attribution)](const http::Request& request) {
                  return Answer(ledger, on, request);
                });
}

}  // namespace gpuscope::serve
