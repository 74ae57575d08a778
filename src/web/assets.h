// The web page's files (HTML, JavaScript, CSS, uPlot from web/node_modules),
// embedded into the binary at build time by scripts/embed_assets.py, so the
// page needs no internet access and no files beside the binary.
//
// Thread safety: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace gpuscope::web {

struct Asset {
  std::string_view path;          // as served: "/ui/app.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view data;
  std::string_view gzipped;  // `data` as a gzip member, compressed at build time
};

// Every embedded asset (the generated file defines them).
extern const std::span<const Asset> kAssets;
// A short hash of every asset: index.html asks for /ui/app.js?v=<version>.
extern const std::string_view kAssetVersion;

// The asset served at `path`, or nullptr.
const Asset* FindAsset(std::string_view path);

}  // namespace gpuscope::web
