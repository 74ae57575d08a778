#include "serve/web_endpoints.h"

#include <memory>
#include <string>
#include <utility>

#include "http/gzip.h"
#include "serve/snapshot_json.h"
#include "web/assets.h"
#include "web/params.h"

namespace gpuscope::serve {
namespace {

// Bodies this small are sent as they are: gzip would save little.
constexpr std::size_t kGzipMinBytes = 1024;

}  // namespace

http::Response JsonResponse(const http::Request& request, std::string body) {
  http::Response response;
  response.content_type = "application/json";
  response.headers.emplace_back("Cache-Control", "no-store");
  response.headers.emplace_back("Vary", "Accept-Encoding");
  if (body.size() >= kGzipMinBytes && http::AcceptsGzip(request.accept_encoding)) {
    if (Result<std::string> gzipped = http::Gzip(body); gzipped.ok()) {  // else sent plain
      body = std::move(*gzipped);
      response.headers.emplace_back("Content-Encoding", "gzip");
    }
  }
  response.body = std::make_shared<const std::string>(std::move(body));
  return response;
}

namespace {

http::Response Error(const Status& status) {
  const int code = status.code() == Status::Code::kUnavailable ? 503
                   : status.code() == Status::Code::kNotFound  ? 404
                                                               : 400;
  return http::Response::Text(code, status.message() + "\n");
}

http::Response NotYet() {
  return http::Response::Text(503, "no sampling cycle has completed yet\n");
}

constexpr const char* kPolicy =
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
    "frame-ancestors 'none'";

// An embedded asset; the page asks for them with ?v=<asset version>, so they
// may be cached for long. The page itself is revalidated every time.
void HandleAsset(http::Server& server, std::string path, const web::Asset& asset) {
  const bool page = asset.path.ends_with(".html");
  // Each response shares one of the two copies (the gzipped one compressed at build time).
  auto plain = std::make_shared<const std::string>(asset.data);
  auto gzipped = std::make_shared<const std::string>(asset.gzipped);
  server.Handle(std::move(path), [&asset, page, plain, gzipped](const http::Request& request) {
    http::Response response;
    response.content_type = std::string(asset.content_type);
    response.body = plain;
    if (http::AcceptsGzip(request.accept_encoding)) {
      response.body = gzipped;
      response.headers.emplace_back("Content-Encoding", "gzip");
    }
    response.headers.emplace_back("Vary", "Accept-Encoding");
    response.headers.emplace_back("Cache-Control", page ? "no-cache" : "max-age=86400");
    response.headers.emplace_back("X-Content-Type-Options", "nosniff");
    // The page loads only its own files and talks only to this agent.
    if (page) response.headers.emplace_back("Content-Security-Policy", kPolicy);
    return response;
  });
}

}  // namespace

void RegisterWebEndpoints(http::Server& server, const Exporter& exporter, const Window& window,
                          web::AgentInfo agent) {
  for (const web::Asset& asset : web::kAssets) {
    if (asset.path == "/ui/index.html") {
      HandleAsset(server, "/", asset);
      HandleAsset(server, "/ui", asset);
      HandleAsset(server, "/ui/", asset);
    }
    HandleAsset(server, std::string(asset.path), asset);
  }
  auto info = std::make_shared<const web::AgentInfo>(std::move(agent));
  // Each handler holds the cycle for the request: the view points into it.
  server.Handle("/api/v1/gpus", [&exporter, info](const http::Request& request) {
    Status params = web::CheckParameters(request, {});
    if (!params.ok()) return Error(params);
    CyclePtr cycle = exporter.Current();
    return cycle ? JsonResponse(request, web::GpusJson(cycle->View(), *info)) : NotYet();
  });
  // The snapshot the CLI renders from (gpuscope --agent, query, -L, top).
  server.Handle("/api/v1/snapshot", [&exporter, info](const http::Request& request) {
    Status params = web::CheckParameters(request, {});
    if (!params.ok()) return Error(params);
    CyclePtr cycle = exporter.Current();
    if (!cycle) return NotYet();
    const web::View view = cycle->View();
    const SnapshotAgent agent{!info->scenario.empty(), info->scenario, info->process_names,
                              info->processes_read};
    return JsonResponse(request,
                        SnapshotJson(*view.snapshot, agent,
                                     TopVerdicts(view.diagnoses, view.snapshot->gpus.size(),
                                                 info->min_span_seconds)));
  });
  server.Handle("/api/v1/window", [&exporter, &window, info](const http::Request& request) {
    CyclePtr cycle = exporter.Current();
    if (!cycle) return NotYet();
    Result<web::WindowQuery> query = web::ParseWindowQuery(request, *cycle->snapshot);
    if (!query.ok()) return Error(query.status());
    return JsonResponse(request, web::WindowJson(window, *cycle->snapshot, *query, *info));
  });
  server.Handle("/api/v1/health", [&exporter](const http::Request& request) {
    CyclePtr cycle = exporter.Current();
    if (!cycle) return NotYet();
    Result<std::string> body = web::HealthBody(request, cycle->View());
    return body.ok() ? JsonResponse(request, std::move(*body)) : Error(body.status());
  });
  server.Handle("/api/v1/diagnosis", [&exporter](const http::Request& request) {
    CyclePtr cycle = exporter.Current();
    if (!cycle) return NotYet();
    bool text = false;
    Result<std::string> body = web::DiagnosisBody(request, cycle->View(), &text);
    if (!body.ok()) return Error(body.status());
    if (text) return http::Response::Text(200, std::move(*body));
    return JsonResponse(request, std::move(*body));
  });
}

}  // namespace gpuscope::serve
