// TFRecord framing, the container of TensorFlow's .tfrecord files and of
// TensorBoard's event files. Each record is
//
//   uint64 length  |  uint32 masked crc32c(length)  |  data  |  uint32 masked crc32c(data)
//
// all little-endian, the CRCs masked as crc32c::Mask does.
//
//   std::string file;
//   AppendRecord(event.SerializeAsString(), &file);
//   TG_ASSIGN_OR_RETURN(std::vector<std::string> records, ParseRecords(file));
//
// Thread-safe (no state).
#ifndef TENSORGRID_CORE_UTIL_TFRECORD_H_
#define TENSORGRID_CORE_UTIL_TFRECORD_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tensorgrid {

// Bytes a record adds around its data: length, its CRC, the data's CRC.
inline constexpr size_t kRecordOverhead = 8 + 4 + 4;

// Appends `data`, framed as one record, to `*out`.
void AppendRecord(absl::string_view data, std::string* out);

// Every record of a whole file, in order. DataLoss naming the record (its
// index and byte offset) for a length or data CRC that does not match, or a
// record cut short by the end of the file.
absl::StatusOr<std::vector<std::string>> ParseRecords(absl::string_view contents);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_UTIL_TFRECORD_H_
