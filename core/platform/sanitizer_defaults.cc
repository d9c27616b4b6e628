// What the sanitizer builds (docs/sanitizers.md) are told about code that
// is not ours, compiled into every binary of --config=asan and
// --config=tsan through //core/platform. The runtimes read these functions
// at start-up; each entry says why it is there. Nothing here exists in the
// default build.
#include "absl/base/config.h"

#if defined(ABSL_HAVE_ADDRESS_SANITIZER) || defined(ABSL_HAVE_LEAK_SANITIZER)
// LeakSanitizer checks every process at exit, tg_server's and tg_run's too.
extern "C" const char* __lsan_default_suppressions() {
  return
      // c-ares 1.18 (the DNS resolver inside Debian's gRPC) loses its copy
      // of the host name when ares_getaddrinfo answers "localhost" itself:
      // 10 bytes per resolution of a "localhost:port" address, seen with a
      // full stack (ASAN_OPTIONS=fast_unwind_on_malloc=0) from
      // GrpcSession::Create through gRPC's resolver to ares_gethostbyname.
      // Neither library is ours; our code never calls c-ares. Matched by
      // module, since the default unwinder stops inside the uninstrumented
      // library.
      "leak:libcares.so\n";
}
#endif

#if defined(ABSL_HAVE_THREAD_SANITIZER)
extern "C" const char* __tsan_default_options() {
  return
      // Debian's Abseil, gRPC, protobuf and libstdc++ are not instrumented:
      // TSan cannot see the atomics they order their own work with (a
      // Status's reference count in libabsl_status, gRPC's completion
      // queues), so the accesses its interceptors (free, memcpy, ...) make
      // on their behalf are ordered by nothing it knows of, and every
      // hand-off through them would be reported. This option checks those
      // interceptors only when called from instrumented code. Races between
      // accesses our code makes are all still checked; Abseil's locks are
      // made visible by tsan_abseil_sync.cc.
      "ignore_noninstrumented_modules=1";
}
#endif
