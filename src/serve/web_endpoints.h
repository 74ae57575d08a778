// The web page and its JSON API on serve's listener (behind the same TLS and
// basic auth as /metrics):
//   /, /ui/          the page (web/src/index.html), live charts and diagnosis
//   /ui/<asset>      its scripts and styles, uPlot included, embedded in the binary
//   /api/v1/gpus, /api/v1/window, /api/v1/health, /api/v1/diagnosis
//                    the JSON the page reads (docs/api.md, web/api.h), built
//                    from the exporter's published cycle and the sampler's window
//
// The page polls the API at the sampling cadence; with no page open nothing
// of this runs (no per-cycle work is added to the sampler or the exporter).
//
// Thread safety: handlers run on server threads concurrently; they read the
// Exporter (thread-safe), the Window (own lock) and immutable data.
#pragma once

#include "gpuscope/window.h"
#include "http/server.h"
#include "serve/exporter.h"
#include "web/api.h"

namespace gpuscope::serve {

// A JSON answer, not cached, gzipped when asked and at least 1 KiB (plain if
// compression fails); the jobs API answers the same way.
http::Response JsonResponse(const http::Request& request, std::string body);

// Registers the page, its assets and the API on `server` (before Start).
void RegisterWebEndpoints(http::Server& server, const Exporter& exporter, const Window& window,
                          web::AgentInfo agent);

}  // namespace gpuscope::serve
