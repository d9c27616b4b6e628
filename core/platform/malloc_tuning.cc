#include "core/platform/malloc_tuning.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tensorgrid {

void KeepLargeFreedMemory() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("TG_MALLOC_TUNING");
    if (env != nullptr && std::strcmp(env, "0") == 0) return;
#if defined(__GLIBC__)
    // Setting either also turns off glibc's dynamic threshold.
    mallopt(M_MMAP_THRESHOLD, static_cast<int>(kMmapThresholdBytes));
    mallopt(M_TRIM_THRESHOLD, static_cast<int>(kTrimThresholdBytes));
#endif
  });
}

}  // namespace tensorgrid
