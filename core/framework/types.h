// DataType helpers: element sizes, names, and the C++ type <-> enum maps.
#ifndef TENSORGRID_CORE_FRAMEWORK_TYPES_H_
#define TENSORGRID_CORE_FRAMEWORK_TYPES_H_

#include <cstdint>
#include <string>

#include "Eigen/Core"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/types.pb.h"

namespace tensorgrid {

class ResourceHandle;

using half = Eigen::half;
using bfloat16 = Eigen::bfloat16;

// Bytes per element; 0 for types that are not fixed-size (string, resource).
int DataTypeSize(DataType dtype);
// Whether tensors of this dtype hold C++ objects that need construction.
inline bool DataTypeIsObject(DataType dtype) { return dtype == DT_STRING || dtype == DT_RESOURCE; }
// "float", "int32", "float_ref", ... (TensorFlow's spelling).
std::string DataTypeString(DataType dtype);
// Parses "float", "int32", "DT_FLOAT", ...; InvalidArgument otherwise.
absl::StatusOr<DataType> DataTypeFromString(absl::string_view name);
// True for the dtypes tensorgrid can store (and so compute or pass through).
bool DataTypeIsSupported(DataType dtype);

inline bool IsRefType(DataType dtype) { return dtype > 100; }
inline DataType MakeRefType(DataType dtype) {
  return IsRefType(dtype) ? dtype : static_cast<DataType>(dtype + 100);
}
inline DataType RemoveRefType(DataType dtype) {
  return IsRefType(dtype) ? static_cast<DataType>(dtype - 100) : dtype;
}

template <typename T>
struct DataTypeToEnum;
template <DataType D>
struct EnumToDataType;

#define TG_MATCH_TYPE_AND_ENUM_(TYPE, ENUM) \
  template <>                               \
  struct DataTypeToEnum<TYPE> {             \
    static constexpr DataType value = ENUM; \
  };                                        \
  template <>                               \
  struct EnumToDataType<ENUM> {             \
    using Type = TYPE;                      \
  }
TG_MATCH_TYPE_AND_ENUM_(float, DT_FLOAT);
TG_MATCH_TYPE_AND_ENUM_(double, DT_DOUBLE);
TG_MATCH_TYPE_AND_ENUM_(int32_t, DT_INT32);
TG_MATCH_TYPE_AND_ENUM_(int64_t, DT_INT64);
TG_MATCH_TYPE_AND_ENUM_(uint8_t, DT_UINT8);
TG_MATCH_TYPE_AND_ENUM_(int8_t, DT_INT8);
TG_MATCH_TYPE_AND_ENUM_(int16_t, DT_INT16);
TG_MATCH_TYPE_AND_ENUM_(uint16_t, DT_UINT16);
TG_MATCH_TYPE_AND_ENUM_(uint32_t, DT_UINT32);
TG_MATCH_TYPE_AND_ENUM_(uint64_t, DT_UINT64);
TG_MATCH_TYPE_AND_ENUM_(bool, DT_BOOL);
TG_MATCH_TYPE_AND_ENUM_(std::string, DT_STRING);
TG_MATCH_TYPE_AND_ENUM_(half, DT_HALF);
TG_MATCH_TYPE_AND_ENUM_(bfloat16, DT_BFLOAT16);
TG_MATCH_TYPE_AND_ENUM_(ResourceHandle, DT_RESOURCE);
#undef TG_MATCH_TYPE_AND_ENUM_

// Runs the statements with `T` bound to the C++ type of `DTYPE`, for every
// fixed-size dtype, and DEFAULT otherwise:
//   TG_SWITCH_POD_TYPES(dtype, return Unsupported(), out = Format<T>(t));
#define TG_CASE_TYPE_(ENUM, ...)                                 \
  case ENUM: {                                                   \
    using T = typename ::tensorgrid::EnumToDataType<ENUM>::Type; \
    __VA_ARGS__;                                                 \
    break;                                                       \
  }
#define TG_SWITCH_POD_TYPES(DTYPE, DEFAULT, ...) \
  switch (DTYPE) {                               \
    TG_CASE_TYPE_(DT_FLOAT, __VA_ARGS__)         \
    TG_CASE_TYPE_(DT_DOUBLE, __VA_ARGS__)        \
    TG_CASE_TYPE_(DT_INT32, __VA_ARGS__)         \
    TG_CASE_TYPE_(DT_INT64, __VA_ARGS__)         \
    TG_CASE_TYPE_(DT_UINT8, __VA_ARGS__)         \
    TG_CASE_TYPE_(DT_INT8, __VA_ARGS__)          \
    TG_CASE_TYPE_(DT_INT16, __VA_ARGS__)         \
    TG_CASE_TYPE_(DT_UINT16, __VA_ARGS__)        \
    TG_CASE_TYPE_(DT_UINT32, __VA_ARGS__)        \
    TG_CASE_TYPE_(DT_UINT64, __VA_ARGS__)        \
    TG_CASE_TYPE_(DT_BOOL, __VA_ARGS__)          \
    TG_CASE_TYPE_(DT_HALF, __VA_ARGS__)          \
    TG_CASE_TYPE_(DT_BFLOAT16, __VA_ARGS__)      \
    default: {                                   \
      DEFAULT;                                   \
    }                                            \
  }

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_TYPES_H_
