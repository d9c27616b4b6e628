// IDX files: the format of MNIST and Fashion-MNIST. A file is a big-endian
// header — two zero bytes, a type code, the rank, then one uint32 per
// dimension — followed by the values, big-endian, row-major. Files may be
// gzip-compressed (detected by the gzip magic, not by the file name).
//
//   TG_ASSIGN_OR_RETURN(Tensor images, ReadIdx("/usr/share/datasets/fashion-mnist/"
//                                              "train-images-idx3-ubyte.gz"));
//   // images: uint8 [60000, 28, 28]
//
// Type codes: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32, 0x0D float32,
// 0x0E float64.
//
// Errors: NotFound for a missing file (under /usr/share/datasets/NAME it
// names the Debian package dataset-NAME to install); InvalidArgument for a
// file that is not IDX at all (bad magic, unknown type code, rank 0);
// DataLoss for an IDX file whose data does not match its header (truncated,
// trailing bytes, corrupt gzip stream), naming the file, the bytes expected
// and the bytes found.
#ifndef TENSORGRID_CLIENT_DATA_IDX_H_
#define TENSORGRID_CLIENT_DATA_IDX_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/framework/tensor.h"

namespace tensorgrid {

// Reads the IDX file at `path` (plain or gzip) into a tensor of its dtype and
// shape. The tensor buffer is filled straight from the file.
absl::StatusOr<Tensor> ReadIdx(const std::string& path);

// The IDX encoding of `tensor` (header and big-endian values, uncompressed).
// InvalidArgument for dtypes IDX cannot hold, rank 0, or a dimension over
// 2^32-1.
absl::StatusOr<std::string> EncodeIdx(const Tensor& tensor);

// Writes EncodeIdx(tensor) to `path`, gzip-compressed when `gzip` is set.
absl::Status WriteIdx(const std::string& path, const Tensor& tensor, bool gzip = false);

// The NotFound status for a missing data file: under /usr/share/datasets/NAME
// it says to install Debian's dataset-NAME package.
absl::Status MissingDataFile(absl::string_view path);

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_DATA_IDX_H_
