#include "cli/docs_command.h"

#include <ostream>

#include "cli/options.h"
#include "cli/serve.h"
#include "export/metrics_doc.h"

namespace gpuscope::cli {
namespace {

constexpr char kUsage[] =
    "Usage: gpuscope docs metrics|configuration\n"
    "Prints a generated reference document as Markdown:\n"
    "  metrics        every metric: native, dcgm-exporter and nvidia-smi names (docs/metrics.md)\n"
    "  configuration  every setting of gpuscope serve (docs/configuration.md)\n";

}  // namespace

Result<std::string> GeneratedDoc(const std::string& name) {
  if (name == "metrics") return prom::RenderMetricsDoc();
  if (name == "configuration") return ConfigurationDoc();
  return Status::InvalidArgument("Unknown document \"" + name +
                                 "\"; gpuscope docs prints metrics or configuration.");
}

Status RunDocs(Invocation& inv) {
  if (inv.args.empty()) {
    *inv.err << kUsage;
    return Status::InvalidArgument("gpuscope docs needs a document name.");
  }
  if (inv.args[0] == "-h" || inv.args[0] == "--help") {
    *inv.out << kUsage;
    return Status::Ok();
  }
  if (inv.args[0].starts_with("-")) {
    return UnknownOption({inv.args[0], "", false, inv.args[0]}, "docs", kUsage);
  }
  if (inv.args.size() > 1) {
    return Status::InvalidArgument("gpuscope docs takes one document name, got \"" + inv.args[1] +
                                   "\" too.");
  }
  Result<std::string> doc = GeneratedDoc(inv.args[0]);
  if (!doc.ok()) return doc.status();
  *inv.out << *doc;
  return Status::Ok();
}

}  // namespace gpuscope::cli
