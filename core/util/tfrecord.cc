#include "core/util/tfrecord.h"

#include <cstdint>

#include "core/platform/status.h"
#include "core/util/crc32c.h"

namespace tensorgrid {
namespace {

void PutFixed(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t GetFixed(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return value;
}

uint32_t MaskedCrc(const char* p, size_t n) { return crc32c::Mask(crc32c::Value(p, n)); }

}  // namespace

void AppendRecord(absl::string_view data, std::string* out) {
  std::string header;
  PutFixed(data.size(), 8, &header);
  out->append(header);
  PutFixed(MaskedCrc(header.data(), header.size()), 4, out);
  out->append(data.data(), data.size());
  PutFixed(MaskedCrc(data.data(), data.size()), 4, out);
}

absl::StatusOr<std::vector<std::string>> ParseRecords(absl::string_view contents) {
  std::vector<std::string> records;
  size_t offset = 0;
  while (offset < contents.size()) {
    const char* p = contents.data() + offset;
    const size_t left = contents.size() - offset;
    const size_t index = records.size();
    if (left < 12) {
      return errors::DataLoss("record ", index, " at byte ", offset, ": truncated header (", left,
                              " of 12 bytes)");
    }
    if (GetFixed(p + 8, 4) != MaskedCrc(p, 8)) {
      return errors::DataLoss("record ", index, " at byte ", offset, ": the length's CRC does not match");
    }
    const uint64_t length = GetFixed(p, 8);
    if (left < kRecordOverhead || length > left - kRecordOverhead) {
      return errors::DataLoss("record ", index, " at byte ", offset, ": truncated (", length,
                              " bytes of data announced, ", left - 12, " bytes left)");
    }
    if (GetFixed(p + 12 + length, 4) != MaskedCrc(p + 12, length)) {
      return errors::DataLoss("record ", index, " at byte ", offset, ": the data's CRC does not match");
    }
    records.emplace_back(p + 12, length);
    offset += kRecordOverhead + length;
  }
  return records;
}

}  // namespace tensorgrid
