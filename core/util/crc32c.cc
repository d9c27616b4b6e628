#include "core/util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace tensorgrid {
namespace crc32c {
namespace {

// 0x82F63B78 is 0x1EDC6F41 with its bits reversed (the reflected form).
constexpr uint32_t kPolynomial = 0x82F63B78u;

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

uint32_t ExtendTable(uint32_t c, const unsigned char* p, size_t n) {
  for (size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
// SSE 4.2's crc32 instruction computes exactly this CRC, 8 bytes at a time
// (about 20 times the table's speed): checkpoints checksum every tensor byte.
__attribute__((target("sse4.2"))) uint32_t ExtendSse42(uint32_t c, const unsigned char* p,
                                                        size_t n) {
  uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    c64 = _mm_crc32_u64(c64, word);
  }
  c = static_cast<uint32_t>(c64);
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(c, *p);
  return c;
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
  if (kHaveSse42) return ~ExtendSse42(~crc, p, n);
#endif
  return ~ExtendTable(~crc, p, n);
}

uint32_t ExtendPortableForTesting(uint32_t crc, const void* data, size_t n) {
  return ~ExtendTable(~crc, static_cast<const unsigned char*>(data), n);
}

}  // namespace crc32c
}  // namespace tensorgrid
