// The err_msg label of DCGM_FI_DEV_XID_ERRORS: dcgm-exporter's text for each
// XID code, "Unknown Error" beyond its table.
//
// Thread safety: a pure function over constant data.
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuscope::prom {

std::string_view XidErrorMessage(int64_t code);

}  // namespace gpuscope::prom
