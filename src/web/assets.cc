#include "web/assets.h"

namespace gpuscope::web {

const Asset* FindAsset(std::string_view path) {
  for (const Asset& asset : kAssets) {
    if (asset.path == path) return &asset;
  }
  return nullptr;
}

}  // namespace gpuscope::web
