// Other CUPTI clients in the process: torch.profiler (kineto), JAX's profiler, any tool built on CUPTI.
//
// CUPTI before 13.3 (and without its multi-subscriber mode) allows one subscriber per process. gprof-run subscribes
// when CUDA starts, so a profiler the program starts later is refused (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
// and records nothing: torch.profiler reports 0 GPU kernels and no one says why. With the collector LD_PRELOADed,
// cuptiSubscribe and cuptiSubscribe_v2 are interposed (inject/src/cupti_interpose.cpp): the program's call goes on
// to its CUPTI unchanged and gets CUPTI's answer; when that answer is a refusal because gprof-run holds the
// subscription, one Status line (and one stderr line) names the client and the way out (`-t nvtx`: gprof-run then
// leaves CUPTI to the program and keeps NVTX and processes).
#pragma once

#include <cupti.h>

#include <string>

namespace gprof::collector::cupti {

// The CUPTI function the program meant to call: the next definition after ours, else the libcupti our session
// loaded, else any libcupti in the process. Null when there is none. Normal context (not a signal handler).
void* real_cupti_function(const char* name) noexcept;

// The program's cuptiSubscribe(_v2) returned `result`. `subscriber_name`: the name a _v2 caller gave (or null);
// `caller`: a return address inside the calling library.
void note_other_client(const char* subscriber_name, const void* caller, CUptiResult result) noexcept;

// How a client is named in the trace: "torch.profiler (kineto, in libtorch_cpu.so)", "MyTool (in libtool.so)",
// "a CUPTI client in libfoo.so". module_path may be empty.
std::string describe_client(const char* subscriber_name, const std::string& module_path);

}  // namespace gprof::collector::cupti
