// Keeps large freed blocks in the process instead of returning them to the
// kernel, so buffers that come and go with every message or step stop being
// page-faulted in again.
//
// glibc serves blocks of 128 KiB and up (its threshold then grows with what
// is freed) with mmap and unmaps them on free, and trims its heaps when more
// than 128 KiB is free at their top. gRPC allocates a receive buffer for each
// message it reads and frees it once the message is consumed, so a worker
// that receives 64 MiB tensors faults thousands of fresh pages per message
// (docs/PERFORMANCE.md, "RecvTensor throughput"). Tensor buffers have their
// own cache (core/framework/tensor.cc); this covers everything else.
//
//   KeepLargeFreedMemory();  // once, early; idempotent and thread-safe
//
// The cost is resident memory: up to `kTrimThresholdBytes` of freed memory per
// malloc arena stays mapped. Setting TG_MALLOC_TUNING=0 leaves glibc's
// defaults alone. A no-op where the C library is not glibc.
#ifndef TENSORGRID_CORE_PLATFORM_MALLOC_TUNING_H_
#define TENSORGRID_CORE_PLATFORM_MALLOC_TUNING_H_

#include <cstddef>

namespace tensorgrid {

// Blocks below this come from malloc's heaps (glibc's largest allowed value).
constexpr size_t kMmapThresholdBytes = size_t{32} << 20;
// Freed memory at the top of a heap is returned to the kernel beyond this.
constexpr size_t kTrimThresholdBytes = size_t{512} << 20;

void KeepLargeFreedMemory();

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_MALLOC_TUNING_H_
