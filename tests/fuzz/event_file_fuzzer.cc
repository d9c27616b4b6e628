// Reading TensorBoard event files (ReadEventFile, client/training/
// summary_writer.h): TFRecord framing with masked CRC-32Cs around Event
// protos. A damaged file is DataLoss; a file that reads frames back to
// exactly its own bytes, and its records are what ParseRecords gives.
//
// Input: byte 0 (bit 0: the rest is one record's data, framed with valid
// CRCs, so that the Event parser sees it; else the rest is the file).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/training/summary_writer.h"
#include "core/util/tfrecord.h"
#include "tests/fuzz/fuzz_util.h"

namespace tensorgrid {
namespace {

void FuzzEventFile(const std::string& file) {
  const std::string path = fuzz::TempDir() + "/events.out.tfevents";
  fuzz::WriteFileOrDie(path, file);
  absl::StatusOr<std::vector<Event>> events = training::ReadEventFile(path);
  absl::StatusOr<std::vector<std::string>> records = ParseRecords(file);
  if (!events.ok()) {
    fuzz::ExpectError(events.status(), {absl::StatusCode::kDataLoss}, "ReadEventFile");
    return;
  }
  if (!records.ok() || records->size() != events->size()) {
    fuzz::Fail("ReadEventFile read a file that ParseRecords refuses");
  }
  std::string framed;
  for (const std::string& record : *records) AppendRecord(record, &framed);
  if (framed != file) fuzz::Fail("an event file read does not frame back to its bytes");
}

}  // namespace
}  // namespace tensorgrid

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  tensorgrid::fuzz::Init();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorgrid::fuzz::Input in(data, size);
  const bool frame = (in.Byte() & 1) != 0;
  std::string file = in.Rest();
  if (frame) {
    std::string framed;
    tensorgrid::AppendRecord(file, &framed);
    file = framed;
  }
  tensorgrid::FuzzEventFile(file);
  return 0;
}
