// CHECK macros for programmer errors only; bad input returns absl::Status.
#ifndef TENSORGRID_CORE_PLATFORM_LOGGING_H_
#define TENSORGRID_CORE_PLATFORM_LOGGING_H_

#include <cstdio>
#include <cstdlib>

#define TG_CHECK(cond)                                                              \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

#ifdef NDEBUG
#define TG_DCHECK(cond) \
  do {                  \
  } while (0)
#else
#define TG_DCHECK(cond) TG_CHECK(cond)
#endif

#endif  // TENSORGRID_CORE_PLATFORM_LOGGING_H_
