// Inside the wire module (../wire.h): the ExportMetricsServiceRequest from
// its bytes and its conversion to the points the store keeps. Also used by
// the tests that build requests as messages (they link the module's code in).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "otlp/decode.h"
#include "otlp/wire.h"

namespace gpuscope::otlp {

namespace pb {
class ExportMetricsServiceRequest;
}

// Sends libprotobuf's log lines (one per invalid UTF-8 string parsed, for one) to the debug
// log instead of stderr. Once per process; ParseRequest calls it.
void QuietProtobufLog();

// The request message from its bytes.
std::optional<Failure> ParseRequest(std::string_view bytes, Encoding encoding,
                                    pb::ExportMetricsServiceRequest* out);

// Points in the request (including the ones that will be rejected).
uint64_t CountPoints(const pb::ExportMetricsServiceRequest& request);

// The request's points, named by `name`.
Batch ToBatch(const pb::ExportMetricsServiceRequest& request, const Namer& name);

}  // namespace gpuscope::otlp
