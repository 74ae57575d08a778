// `gpuscope query --help-query-gpu` and `--help-query-compute-apps`, laid out
// as nvidia-smi's: each field in quotes with the aliases it also accepts
// ("name" or "gpu_name"), then a sentence on what it is. Catalog metrics
// describe themselves (their catalog help); identity, text and clock event
// reason fields, and the fields gpuscope cannot read, are described here;
// ECC counters are described from their name's parts.
//
// Thread safety: pure functions over immutable tables.
#pragma once

#include <string>

#include "cli/query_fields.h"

namespace gpuscope::cli {

// The description of one --query-gpu field; "" when there is none (a unit
// test keeps every field described).
std::string GpuFieldDescription(const GpuField& field);
std::string AppFieldDescription(const AppField& field);

// The full texts printed by --help-query-gpu and --help-query-compute-apps.
std::string GpuFieldHelp();
std::string AppFieldHelp();

}  // namespace gpuscope::cli
