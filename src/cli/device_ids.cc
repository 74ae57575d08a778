#include "cli/device_ids.h"

#include "collect/inventory.h"
#include "collect/selection.h"
#include "nvml/library.h"

namespace gpuscope::cli {

Status CheckIdsHere(const std::string& library, const std::string& ids, bool mig_selects_gpu) {
  Result<collect::DeviceSelection> selection = collect::ParseSmiIds(ids);
  if (!selection.ok()) return selection.status();
  selection->mig_selects_gpu = mig_selects_gpu;
  Result<std::unique_ptr<nvml::Library>> opened = nvml::Library::Open(library);
  if (!opened.ok()) return Status::Ok();
  Result<std::vector<collect::DeviceEntry>> entries = collect::DiscoverDevices(**opened);
  if (!entries.ok()) return Status::Ok();
  std::vector<GpuInfo> devices;
  for (const collect::DeviceEntry& e : *entries) devices.push_back(e.info);
  return collect::SelectDevices(devices, *selection).status().Context("-i");
}

Result<std::string> GetWithIds(const baseline::PromClient& client, const std::string& path,
                               std::string query, const std::string& ids) {
  if (!ids.empty()) {
    if (Status parsed = collect::ParseSmiIds(ids).status(); !parsed.ok()) return parsed;
    if (!query.empty()) query += '&';
    query += "id=" + baseline::UrlEscape(ids);
  }
  std::string not_found;
  Result<std::string> body = client.Get(query.empty() ? path : path + "?" + query, &not_found);
  // The agent says "id: <why>" (docs/api.md); here it is "-i: <why>", as locally.
  if (!body.ok() && !ids.empty() && not_found.starts_with("id: ")) {
    return Status::NotFound("-i: " + not_found.substr(4));
  }
  return body;
}

}  // namespace gpuscope::cli
