// The OTLP wire formats (protobuf and OTLP/JSON, through libprotobuf) as a
// module, libgpuscope-otlp.so, built from src/otlp/wire/ (base/module.h says
// why modules exist). The receiver loads it on the first request to
// /v1/metrics, so an agent no application sends to never maps libprotobuf
// (about 2 MB resident of the 15 MB an agent of 8 GPUs holds).
//
// Thread safety: the table's functions may run on several threads at once;
// a Request is used by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/log.h"
#include "gpuscope/status.h"
#include "otlp/decode.h"

namespace gpuscope::otlp {

inline constexpr char kWireModule[] = "libgpuscope-otlp.so";

// The family one OTLP metric goes to (Conventions::Name, kpi.h).
using Namer =
    std::function<std::optional<Naming>(std::string_view name, std::string_view unit, Kind kind)>;

inline Namer NamerOf(const Conventions& conventions) {
  return [&conventions](std::string_view name, std::string_view unit, Kind kind) {
    return conventions.Name(name, unit, kind);
  };
}

// A parsed ExportMetricsServiceRequest.
class Request {
 public:
  virtual ~Request() = default;
  // Data points in the request, including those ToBatch will reject.
  virtual uint64_t Points() const = 0;
  virtual Batch ToBatch(const Namer& namer) const = 0;
};

struct WireCodec {
  // The request message from its (inflated) bytes, or why it does not decode (400).
  std::optional<Failure> (*parse)(std::string_view bytes, Encoding encoding,
                                  std::unique_ptr<Request>* out);
  // A google.rpc.Status body (the 4xx answers) in `encoding`.
  std::string (*status_body)(int grpc_code, const std::string& message, Encoding encoding);
  // An ExportMetricsServiceResponse body; partial_success set only when `rejected` > 0.
  std::string (*response_body)(uint64_t rejected, const std::string& message, Encoding encoding);
  // The module's log level (it logs libprotobuf's complaints through its own copy of base/log).
  void (*set_log_level)(log::Level level);
};

// The module's table, loaded on the first call; the failure (the module missing) is kept. Each
// call hands the module the process's log level.
const Result<const WireCodec*>& Wire();

}  // namespace gpuscope::otlp

// The module's entry point; weak, so it is null unless the process links the
// module's code in (the receiver's unit tests and the fuzz target).
extern "C" const gpuscope::otlp::WireCodec* gpuscope_otlp_wire() __attribute__((weak));
