// The HTTP endpoints of `gpuscope serve`:
//   /metrics  the cycle's body (rendered by the cycle's first scrape in that
//             format, shared by the others): OpenMetrics 1.0.0 when the Accept header
//             prefers application/openmetrics-text, else text 0.0.4; 503
//             before the first sampling cycle. Never calls NVML.
//   /health   200 "OK" while sampling is fresh, 503 with the reason otherwise
//             (NVML down, last cycle too old, every GPU lost).
//   /ready    the same verdict without the reason and without basic auth.
// The web page (/) and its API: web_endpoints.h.
//
// Thread safety: the handlers run on server threads concurrently; they only
// read the Exporter (thread-safe).
#pragma once

#include <string>
#include <string_view>

#include "export/writer.h"
#include "http/server.h"
#include "serve/exporter.h"

namespace gpuscope::serve {

// Chooses the format from an Accept header: OpenMetrics when a media range
// application/openmetrics-text has q > 0 and at least the q of text/plain and
// */*; text otherwise (also for an empty or malformed header).
prom::Format ChooseFormat(std::string_view accept);

// Registers /metrics, /health and /ready on `server` (before Start).
void RegisterEndpoints(http::Server& server, Exporter& exporter);

}  // namespace gpuscope::serve
