#include "serve/endpoints.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "base/text.h"
#include "export/render.h"
#include "http/gzip.h"

namespace gpuscope::serve {

prom::Format ChooseFormat(std::string_view accept) {
  double openmetrics = 0, text = -1;
  while (!accept.empty()) {
    const std::size_t comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? "" : accept.substr(comma + 1);
    const std::size_t semi = range.find(';');
    const std::string_view type = base::Trim(range.substr(0, semi));
    const double q = http::Quality(semi == std::string_view::npos ? "" : range.substr(semi + 1));
    if (base::EqualsIgnoreCase(type, "application/openmetrics-text")) {
      openmetrics = std::max(openmetrics, q);
    } else if (base::EqualsIgnoreCase(type, "text/plain") || type == "*/*" || type == "text/*") {
      text = std::max(text, q);
    }
  }
  return openmetrics > 0 && openmetrics >= text ? prom::Format::kOpenMetrics : prom::Format::kText;
}

void RegisterEndpoints(http::Server& server, Exporter& exporter) {
  server.Handle("/metrics", [&exporter](const http::Request& request) {
    CyclePtr cycle = exporter.Current();
    if (!cycle) return http::Response::Text(503, "no sampling cycle has completed yet\n");
    const prom::Format format = ChooseFormat(request.accept);
    std::shared_ptr<const std::string> gzipped =
        http::AcceptsGzip(request.accept_encoding) ? cycle->Gzipped(format) : nullptr;
    exporter.CountScrape(gzipped != nullptr);
    http::Response response;
    response.content_type =
        std::string(format == prom::Format::kOpenMetrics ? prom::kOpenMetricsContentType
                                                         : prom::kTextContentType);
    // The body depends on both headers: caches must key on them.
    response.headers.emplace_back("Vary", "Accept, Accept-Encoding");
    if (gzipped) {
      response.body = std::move(gzipped);
      response.headers.emplace_back("Content-Encoding", "gzip");
    } else {
      response.body = cycle->Body(format);
    }
    return response;
  });
  server.Handle("/health", [&exporter](const http::Request&) {
    HealthVerdict verdict = exporter.Health();
    return http::Response::Text(verdict.ok ? 200 : 503, verdict.reason + "\n");
  });
  // The same verdict without its reason, and without basic auth, for probes
  // (a kubelet's httpGet cannot send credentials).
  server.Handle(
      "/ready",
      [&exporter](const http::Request&) {
        const bool ok = exporter.Health().ok;
        return http::Response::Text(ok ? 200 : 503, ok ? "ready\n" : "not ready\n");
      },
      http::Server::Access::kPublic);
}

}  // namespace gpuscope::serve
