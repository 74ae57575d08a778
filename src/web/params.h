// Query parameters of the JSON API (web/api.h): which device a request names
// and the checks every parameter passes. Errors are InvalidArgument statuses
// whose message is the 400 body, naming the parameter.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "http/server.h"

namespace gpuscope::web {

// Fails on a parameter not in `allowed`, or on one given twice.
Status CheckParameters(const http::Request& request,
                       std::initializer_list<std::string_view> allowed);

// The slots named by gpu=N (an NVML index) and gi=G (a GPU instance id on a
// MIG-enabled GPU): one slot, or every slot for gpu=all when `allow_all`.
// A GPU split into MIG instances needs gi unless its parent is in the snapshot.
Result<std::vector<std::size_t>> SelectDevices(std::string_view gpu, std::string_view gi,
                                               const Snapshot& snapshot, bool allow_all);

// The slots named by id=IDS, the `-i` list of `gpuscope diagnose` and `health`
// (index, GPU or MIG UUID, PCI bus id; collect/selection.h), selected as
// locally: a MIG UUID names one instance, or its GPU when `mig_selects_gpu`
// (health). NotFound names an id that matches nothing, InvalidArgument a
// malformed list; the message says "id: ...".
Result<std::vector<std::size_t>> SelectSmiIds(std::string_view ids, const Snapshot& snapshot,
                                              bool mig_selects_gpu = false);

// A parameter value inside a message, safe to print: quoted, its first 64
// characters, anything not printable ASCII as '?' (it comes from outside).
std::string Quoted(std::string_view value);

// A non-negative decimal integer ("7"), or nullopt.
std::optional<unsigned> ParseIndex(std::string_view text);

}  // namespace gpuscope::web
