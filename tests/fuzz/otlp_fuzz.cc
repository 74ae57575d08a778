// libFuzzer target: the OTLP receiver's decoder and store (issue 31). Any
// bytes (OTLP/JSON when they start with `{`, else protobuf) are decoded,
// ingested twice (updates and delta sums) into a store with small budgets,
// and its families are written as /metrics writes them. The body must stay
// valid exposition (tests/unit/exposition_check.h: unique family names, one
// HELP and TYPE each, no duplicate series, +Inf bucket last and equal to the
// count, counters finite and not negative), the store within its byte budget
// and the series lines within the bytes the store counts for them.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "../unit/exposition_check.h"
#include "export/writer.h"
#include "gpuscope/snapshot.h"
#include "otlp/otlp_metrics.pb.h"
#include "otlp/store.h"
#include "otlp/wire/messages.h"

namespace {

using namespace gpuscope::otlp;

constexpr StoreOptions kOptions{.max_series = 64,
                                .max_bytes = 256 * 1024,
                                .max_series_bytes = 32 * 1024,
                                .sender_share = 0.5,
                                .kpi_reserve = 0.1};

void Fail(const std::string& why, const std::string& body) {
  std::fprintf(stderr, "otlp_fuzz: %s\n--- body ---\n%s\n", why.c_str(), body.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const Encoding encoding = bytes.starts_with('{') ? Encoding::kJson : Encoding::kProtobuf;
  pb::ExportMetricsServiceRequest request;
  if (ParseRequest(bytes, encoding, &request)) return 0;
  static const Conventions conventions;
  Store store(kOptions);
  const Batch batch = ToBatch(request, NamerOf(conventions));
  store.Ingest(batch, 1000);
  store.Ingest(batch, 1001);
  if (store.bytes() > kOptions.max_bytes) Fail("the store is over its byte budget", "");
  std::string body;
  std::size_t lines = 0;
  for (const gpuscope::prom::Family& f : store.Families(gpuscope::Snapshot{}, 1002)) {
    if (!f.lines || f.lines->empty()) continue;
    gpuscope::prom::AppendHeader(f.name, f.help, f.type, gpuscope::prom::Format::kText, &body);
    body += *f.lines;
    lines += f.lines->size();
  }
  if (std::string problem = gpuscope::testing::ExpositionChecker::Problem(body); !problem.empty()) {
    Fail(problem, body);
  }
  if (lines > store.bytes()) {
    Fail("the series lines take " + std::to_string(lines) + " bytes, more than the " +
             std::to_string(store.bytes()) + " the store counts",
         body);
  }
  return 0;
}
