#include "serve/cycle.h"

#include <utility>

#include "base/log.h"
#include "http/gzip.h"

namespace gpuscope::serve {

void BodyRenderer::Observe(const Snapshot& snapshot, std::span<const prom::Family> families) {
  std::lock_guard lock(mu_);
  renderer_.Observe(snapshot, families);
}

std::shared_ptr<const std::string> BodyRenderer::Write(const Snapshot& snapshot,
                                                       std::span<const prom::Family> families,
                                                       prom::Format format) {
  std::lock_guard lock(mu_);
  return renderer_.Write(snapshot, families, format);
}

std::shared_ptr<const std::string> Cycle::Body(prom::Format format) const {
  const std::size_t i = Slot(format);
  std::call_once(rendered_[i], [&] { bodies_[i] = renderer_->Write(*snapshot, families, format); });
  return bodies_[i];
}

std::shared_ptr<const std::string> Cycle::Gzipped(prom::Format format) const {
  const std::size_t i = Slot(format);
  std::call_once(compressed_[i], [&] {
    Result<std::string> gzipped = http::Gzip(*Body(format));
    if (gzipped.ok()) {
      gzipped_[i] = std::make_shared<const std::string>(std::move(*gzipped));
    } else {
      log::Warn("/metrics is served uncompressed this cycle: {}", gzipped.status().message());
    }
  });
  return gzipped_[i];
}

}  // namespace gpuscope::serve
