// The merge rules: how the Evidence the sources found becomes whose work each
// device and each GPU process is. Precedence, first wins:
//   a process's pod    the container runtime's answer for its container id;
//                      without a runtime's answer, the one container the
//                      kubelet granted its device to (for a process in some
//                      pod's container); a container id the runtime does not
//                      list names no pod.
//   a device's pods    the kubelet's grants; with none, the pods the runtime
//                      names for the device's processes.
//   a device's holders every pairing of its pods with its Slurm jobs (the
//                      mapping directory's and its processes' cgroups'
//                      together); with neither, and process names opted in,
//                      the workloads its processes name.
//   a job's GPUs       the mapping directory's, unless the job's processes
//                      run on a GPU it does not give the job: then only the
//                      GPUs of its processes (their cgroups win), and the
//                      disagreement is an AttributionConflict.
//   workload           the pod's owner, else the Slurm job, else the process
//                      name (workload.h).
// A MIG-enabled GPU lists the processes of its instances too: those name the
// instances, never the parent GPU (its grant says nothing of them).
// Thread safety: a pure function.
#pragma once

#include "attribution/source.h"
#include "gpuscope/attribution.h"

namespace gpuscope::attribution {

// The holders of every device and process; `sources` is left empty.
Attribution Resolve(const Evidence& evidence, const Inputs& inputs);

}  // namespace gpuscope::attribution
