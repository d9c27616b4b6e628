// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected), as TFRecord files
// and TensorBoard's event files checksum their records, and the "masked"
// form those files store: a CRC of data that itself holds CRCs is rotated
// and offset so that it does not look like one.
//
//   uint32_t crc = crc32c::Value(data.data(), data.size());
//   uint32_t stored = crc32c::Mask(crc);            // what a record carries
//   bool ok = crc32c::Unmask(stored) == crc;
//
// SSE 4.2's crc32 instruction where the CPU has it (every x86-64-v2 and
// later), else a table one byte at a time. Thread-safe.
#ifndef TENSORGRID_CORE_UTIL_CRC32C_H_
#define TENSORGRID_CORE_UTIL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace tensorgrid {
namespace crc32c {

// The CRC-32C of data[0, n) appended to data whose CRC-32C is `crc`.
uint32_t Extend(uint32_t crc, const void* data, size_t n);
// Extend by the table alone, to test the instruction against it.
uint32_t ExtendPortableForTesting(uint32_t crc, const void* data, size_t n);
// The CRC-32C of data[0, n): Value("123456789", 9) == 0xE3069283.
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }

// TFRecord's mask: rotate right by 15 bits, add a constant.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace crc32c
}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_CRC32C_H_
