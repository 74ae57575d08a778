// Strict reading of YAML mappings for the scenario parser: every key must be
// asked for (others are rejected), every value converted and range-checked,
// and every error names "<source>:<line>". No exceptions escape.
//
// Thread safety: a FieldReader is used by one thread at a time.
#pragma once

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "gpuscope/status.h"

namespace gpuscope::sim {

// "<source>:<line>: <problem>" for a node (its line, or fallback's).
Status YamlError(const std::string& source, const YAML::Node& node, const std::string& problem);

class FieldReader {
 public:
  // what names the mapping in messages ("gpu", "fault"); map must be a mapping.
  FieldReader(const std::string& source, const YAML::Node& map, std::string what);

  Status CheckIsMap() const;
  bool Has(const std::string& key);
  YAML::Node Get(const std::string& key);  // marks key known; null node if absent

  Status Double(const std::string& key, double* out, double lo, double hi);
  Status Unsigned(const std::string& key, unsigned* out, unsigned lo, unsigned hi);
  Status U64(const std::string& key, uint64_t* out);
  Status String(const std::string& key, std::string* out);
  Status Bool(const std::string& key, bool* out);

  // Rejects keys never asked for.
  Status Finish() const;

  Status Error(const YAML::Node& node, const std::string& problem) const {
    return YamlError(source_, node.IsDefined() && node.Mark().line >= 0 ? node : map_, problem);
  }

 private:
  const std::string& source_;
  YAML::Node map_;
  std::string what_;
  std::set<std::string> known_;
};

}  // namespace gpuscope::sim
