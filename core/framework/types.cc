#include "core/framework/types.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "core/platform/status.h"

namespace tensorgrid {

int DataTypeSize(DataType dtype) {
  switch (RemoveRefType(dtype)) {
    case DT_FLOAT: return 4;
    case DT_DOUBLE: return 8;
    case DT_INT32: return 4;
    case DT_INT64: return 8;
    case DT_UINT8: return 1;
    case DT_INT8: return 1;
    case DT_INT16: return 2;
    case DT_UINT16: return 2;
    case DT_UINT32: return 4;
    case DT_UINT64: return 8;
    case DT_BOOL: return 1;
    case DT_HALF: return 2;
    case DT_BFLOAT16: return 2;
    default: return 0;
  }
}

bool DataTypeIsSupported(DataType dtype) {
  dtype = RemoveRefType(dtype);
  return DataTypeSize(dtype) > 0 || DataTypeIsObject(dtype);
}

std::string DataTypeString(DataType dtype) {
  // One "_ref" at most: a value from the wire (a TensorProto's dtype, an
  // attr) may be any int, and stripping 100 until none is left would recurse
  // up to 21 million times for 2^31 - 1 (a stack overflow, found by
  // tests/fuzz/tensor_proto_fuzzer.cc); a ref of a ref is no dtype at all.
  if (IsRefType(dtype) && !IsRefType(RemoveRefType(dtype))) {
    return DataTypeString(RemoveRefType(dtype)) + "_ref";
  }
  switch (dtype) {
    case DT_FLOAT: return "float";
    case DT_DOUBLE: return "double";
    case DT_INT32: return "int32";
    case DT_INT64: return "int64";
    case DT_UINT8: return "uint8";
    case DT_INT8: return "int8";
    case DT_INT16: return "int16";
    case DT_UINT16: return "uint16";
    case DT_UINT32: return "uint32";
    case DT_UINT64: return "uint64";
    case DT_BOOL: return "bool";
    case DT_STRING: return "string";
    case DT_HALF: return "half";
    case DT_BFLOAT16: return "bfloat16";
    case DT_RESOURCE: return "resource";
    case DT_COMPLEX64: return "complex64";
    case DT_COMPLEX128: return "complex128";
    case DT_VARIANT: return "variant";
    case DT_INVALID: return "invalid";
    default: return absl::StrCat("unknown dtype ", static_cast<int>(dtype));
  }
}

absl::StatusOr<DataType> DataTypeFromString(absl::string_view name) {
  std::string lower = absl::AsciiStrToLower(name);
  if (absl::StartsWith(lower, "dt_")) lower = lower.substr(3);
  bool ref = false;
  if (absl::EndsWith(lower, "_ref")) {
    ref = true;
    lower.resize(lower.size() - 4);
  }
  static const DataType kAll[] = {DT_FLOAT,     DT_DOUBLE,     DT_INT32,  DT_INT64,    DT_UINT8,
                                  DT_INT8,      DT_INT16,      DT_UINT16, DT_UINT32,   DT_UINT64,
                                  DT_BOOL,      DT_STRING,     DT_HALF,   DT_BFLOAT16, DT_RESOURCE,
                                  DT_COMPLEX64, DT_COMPLEX128, DT_VARIANT};
  for (DataType d : kAll) {
    if (DataTypeString(d) == lower) return ref ? MakeRefType(d) : d;
  }
  return errors::InvalidArgument("unknown data type '", name, "'");
}

}  // namespace tensorgrid
