#include "attribution/resource_slices.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace gpuscope::attribution {
namespace {

using nlohmann::json;

// The resource.k8s.io versions that serve ResourceSlices, newest first: v1
// (GA, 1.34), v1beta2 (1.33), v1beta1 (1.32; devices[].basic.attributes).
constexpr const char* kVersions[] = {"v1", "v1beta2", "v1beta1"};
constexpr size_t kMaxUuid = 96;  // "MIG-" + a 36-character UUID, with room

const json* Field(const json& object, const char* name) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(name);
  return it == object.end() ? nullptr : &*it;
}

std::string StringField(const json& object, const char* name) {
  const json* v = Field(object, name);
  return v && v->is_string() ? v->get<std::string>() : std::string();
}

// A string attribute, by its short name or qualified by the driver's domain
// ("uuid" or "gpu.nvidia.com/uuid").
std::string StringAttribute(const json& attributes, std::string_view driver, const char* name) {
  for (const std::string& key : {std::string(name), std::string(driver) + "/" + name}) {
    const json* attribute = Field(attributes, key.c_str());
    if (attribute) return StringField(*attribute, "string");
  }
  return "";
}

// A UUID as NVML writes it; anything else is dropped (it could match nothing).
std::string CheckedUuid(std::string uuid) {
  const bool ok = (uuid.starts_with("GPU-") || uuid.starts_with("MIG-")) && uuid.size() <= kMaxUuid;
  return ok ? uuid : std::string();
}

DraDeviceFacts Facts(const json& device, std::string_view driver) {
  const json* attributes = Field(device, "attributes");
  if (!attributes) {  // v1beta1 wraps them in "basic"
    const json* basic = Field(device, "basic");
    attributes = basic ? Field(*basic, "attributes") : nullptr;
  }
  if (!attributes || !attributes->is_object()) return {};
  return {CheckedUuid(StringAttribute(*attributes, driver, "uuid")),
          CheckedUuid(StringAttribute(*attributes, driver, "parentUUID")),
          StringAttribute(*attributes, driver, "type")};
}

bool ParseUnsigned(std::string_view s, unsigned& out) {
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && error == std::errc() && end == s.data() + s.size();
}

}  // namespace

std::string SliceKey(std::string_view driver, std::string_view pool, std::string_view device) {
  std::string key(driver);
  key.append("/").append(pool).append("/").append(device);
  return key;
}

SlicePage ParseResourceSliceList(std::string_view text, std::string_view node) {
  SlicePage page;
  const json list = json::parse(text, nullptr, false);
  const json* items = Field(list, "items");
  if (list.is_discarded() || !list.is_object() || !items || !items->is_array() ||
      !StringField(list, "kind").ends_with("ResourceSliceList")) {
    page.error = "not a ResourceSliceList";
    return page;
  }
  if (const json* metadata = Field(list, "metadata"))
    page.next = StringField(*metadata, "continue");
  for (const json& slice : *items) {
    const json* spec = Field(slice, "spec");
    if (!spec || StringField(*spec, "nodeName") != node) continue;
    const std::string driver = StringField(*spec, "driver");
    const json* pool = Field(*spec, "pool");
    const json* devices = Field(*spec, "devices");
    if (driver.empty() || !pool || !devices || !devices->is_array()) continue;
    const std::string pool_name = StringField(*pool, "name");
    const json* generation = Field(*pool, "generation");
    const int64_t pool_generation =
        generation && generation->is_number_integer() ? generation->get<int64_t>() : 0;
    for (const json& device : *devices) {
      const std::string name = StringField(device, "name");
      if (name.empty()) continue;
      DraDeviceFacts facts = Facts(device, driver);
      facts.generation = pool_generation;
      DraDeviceFacts& kept = page.devices[SliceKey(driver, pool_name, name)];
      if (facts.generation >= kept.generation) kept = std::move(facts);
    }
  }
  return page;
}

void KeepNewestGeneration(SliceIndex& index) {
  // "driver/pool/device": the pool is everything before the last '/'.
  const auto pool_of = [](const std::string& key) { return key.substr(0, key.rfind('/')); };
  std::map<std::string, int64_t> newest;
  for (const auto& [key, facts] : index) {
    int64_t& n = newest.try_emplace(pool_of(key), facts.generation).first->second;
    n = std::max(n, facts.generation);
  }
  std::erase_if(index, [&](const auto& entry) {
    return entry.second.generation < newest[pool_of(entry.first)];
  });
}

std::string DraDeviceId(const DraDevice& device, const SliceIndex* slices) {
  if (slices) {
    const auto it = slices->find(SliceKey(device.driver, device.pool, device.device));
    if (it != slices->end() && !it->second.uuid.empty()) return it->second.uuid;
  }
  // NVIDIA's names: "gpu-<minor>" a whole GPU; "gpu-<minor>-mig-..." a MIG
  // device whose instance the name does not identify.
  unsigned minor = 0;
  if (device.driver == kNvidiaDraDriver && device.device.starts_with("gpu-") &&
      ParseUnsigned(std::string_view(device.device).substr(4), minor)) {
    return "nvidia" + std::to_string(minor);
  }
  return "";
}

ResourceSliceReader::ResourceSliceReader(ResourceSliceOptions options)
    : options_(std::move(options)), api_(options_.api) {
  if (options_.node.empty()) {
    const char* node = std::getenv("NODE_NAME");
    if (node) options_.node = node;
  }
}

Result<std::string> ResourceSliceReader::Get(const std::string& path) {
  for (;;) {
    const std::string versioned = "/apis/resource.k8s.io/" + version_ + path;
    Result<baseline::KubeApi::Answer> answer = api_.Send("GET", versioned, "", "");
    if (!answer.ok()) return answer.status();
    if (answer->status >= 200 && answer->status < 300) return std::move(answer->body);
    // 404: this server does not serve that version; ask the next older one.
    const auto at = std::find(std::begin(kVersions), std::end(kVersions), version_);
    if (answer->status == 404 && at + 1 < std::end(kVersions)) {
      version_ = *(at + 1);
      continue;
    }
    if (answer->status == 404) version_ = kVersions[0];  // none served: start over next time
    return baseline::KubeHttpError("GET", versioned, answer->status, answer->body);
  }
}

Status ResourceSliceReader::List() {
  if (options_.node.empty()) {
    return Status::Unavailable(
        "node name unknown: set NODE_NAME (downward API spec.nodeName) "
        "or --kubernetes-node");
  }
  SliceIndex index;
  std::string next;
  for (int page = 0; page < options_.max_pages; ++page) {
    std::string path = "/resourceslices?fieldSelector=" +
                       baseline::KubeQueryValue("spec.nodeName=" + options_.node) +
                       "&limit=" + std::to_string(options_.page_size);
    if (!next.empty()) path += "&continue=" + baseline::KubeQueryValue(next);
    Result<std::string> body = Get(path);
    if (!body.ok()) return body.status();
    SlicePage got = ParseResourceSliceList(*body, options_.node);
    if (!got.error.empty()) {
      return Status::Unavailable(got.error + " (GET resourceslices, " + version_ + ")");
    }
    for (auto& [key, facts] : got.devices) {
      DraDeviceFacts& kept = index[key];
      if (facts.generation >= kept.generation) kept = std::move(facts);
    }
    if (index.size() > options_.max_devices) {
      return Status::Unavailable("ResourceSlices of node " + options_.node + " list over " +
                                 std::to_string(options_.max_devices) + " devices");
    }
    if (got.next.empty()) {
      KeepNewestGeneration(index);
      index_ = std::move(index);
      have_index_ = true;
      return Status::Ok();
    }
    next = std::move(got.next);
  }
  return Status::Unavailable("ResourceSlices: over " + std::to_string(options_.max_pages) +
                             " pages");
}

const SliceIndex* ResourceSliceReader::Lookup(std::span<const DraDevice* const> wanted,
                                              Clock::time_point now) {
  bool missing = false;
  for (const DraDevice* d : wanted) {
    missing = missing || !index_.contains(SliceKey(d->driver, d->pool, d->device));
  }
  const double age = std::chrono::duration<double>(now - listed_).count();
  const bool due = !tried_ || age >= options_.resync_s ||
                   ((missing || !error_.empty()) && age >= options_.retry_s);
  if (due) {
    tried_ = true;
    listed_ = now;
    ++lists_;
    const Status listed = List();
    error_ = listed.ok() ? std::string() : listed.message();
    if (!listed.ok()) ++failures_;
  }
  return have_index_ ? &index_ : nullptr;
}

AttributionSource ResourceSliceReader::state() const {
  return {"resourceslices", tried_ && error_.empty(), tried_ ? error_ : "not asked yet", failures_};
}

}  // namespace gpuscope::attribution
