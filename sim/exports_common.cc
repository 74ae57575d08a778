#include "exports_common.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace gpuscope::sim {

unsigned long long DeviceCall::TimestampUs() const {
  return sim->epoch_us() + static_cast<unsigned long long>(now * 1e6);
}

nvmlReturn_t BeginCall(Fn fn, std::shared_ptr<Sim>* sim) {
  CountCall(fn);
  *sim = CurrentSim();
  return *sim ? rc::kSuccess : rc::kUninitialized;
}

nvmlReturn_t BeginDeviceCall(Fn fn, nvmlDevice_t d, DeviceCall* c, MigHandles mig) {
  if (nvmlReturn_t r = BeginCall(fn, &c->sim)) return r;
  if (!DecodeHandle(d, &c->gpu, &c->mig) || c->gpu >= c->sim->gpu_count()) {
    return rc::kInvalidArgument;
  }
  const GpuSpec& spec = c->sim->spec(c->gpu);
  if (c->mig >= 0 && (!spec.mig_enabled || c->mig >= static_cast<int>(spec.mig_instances.size()))) {
    return rc::kInvalidArgument;
  }
  CountGpuCall(c->gpu);
  double now = c->sim->Now();
  if (c->sim->Lost(c->gpu, now)) return rc::kGpuIsLost;
  if (double hang = c->sim->HangSeconds(c->gpu, fn, now); hang > 0) {
    std::this_thread::sleep_for(std::chrono::duration<double>(hang));
    now = c->sim->Now();
  }
  if (int code = c->sim->FailCode(c->gpu, fn, now); code != 0) return code;
  if (c->mig >= 0 && mig == MigHandles::kRefuse) return rc::kNotSupported;
  c->now = now;
  c->st = c->sim->StateAt(c->gpu, now);
  return rc::kSuccess;
}

nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned len) {
  if (!buf) return rc::kInvalidArgument;
  if (len < s.size() + 1) return rc::kInsufficientSize;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return rc::kSuccess;
}

}  // namespace gpuscope::sim
