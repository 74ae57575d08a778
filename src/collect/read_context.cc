#include "collect/read_context.h"

namespace gpuscope::collect {

void ReadContext::Note(std::string_view call, const Status& status) {
  if (status.code() == Status::Code::kNotSupported) {
    if (!call.empty()) caps_.Refuse(call);
    return;
  }
  if (nvml::IsGpuLost(status)) {
    reading_.lost = true;
    reading_.error = status.message();
    return;
  }
  ++reading_.failed_calls;
  if (reading_.error.empty()) reading_.error = status.message();
  const std::optional<int> code = nvml::ReturnCodeOf(status);
  reading_.call_errors.emplace_back(std::string(call),
                                    code ? nvml::ReturnCodeName(*code) : "other");
}

}  // namespace gpuscope::collect
