// Reading, checking and printing AttrValues and NodeDef attrs.
//
//   bool transpose_a;
//   TG_RETURN_IF_ERROR(GetNodeAttr(node_def, "transpose_a", &transpose_a));
#ifndef TENSORGRID_CORE_FRAMEWORK_ATTR_VALUE_UTIL_H_
#define TENSORGRID_CORE_FRAMEWORK_ATTR_VALUE_UTIL_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/framework/tensor.h"
#include "core/framework/tensor_shape.h"
#include "proto/attr_value.pb.h"
#include "proto/node_def.pb.h"

namespace tensorgrid {

// Parses a default-value literal for an attr of `type` ("false", "0", "DT_FLOAT",
// "float", "''", "[]", "[1, 2]"). InvalidArgument if it does not parse.
absl::Status ParseAttrValue(absl::string_view type, absl::string_view text, AttrValue* out);
// InvalidArgument if `value` does not hold an attr of `type`.
absl::Status AttrValueHasType(const AttrValue& value, absl::string_view type);
std::string SummarizeAttrValue(const AttrValue& value);

// Each GetNodeAttr returns InvalidArgument naming the node and attr when the
// attr is missing or of another type.
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, std::string* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, int64_t* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, int32_t* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, float* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, bool* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, DataType* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, PartialTensorShape* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, Tensor* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, std::vector<int64_t>* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, std::vector<int32_t>* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name, std::vector<DataType>* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name,
                         std::vector<std::string>* out);
absl::Status GetNodeAttr(const NodeDef& node, absl::string_view name,
                         std::vector<PartialTensorShape>* out);
bool HasNodeAttr(const NodeDef& node, absl::string_view name);

// Setters for building NodeDefs in code.
void SetAttr(NodeDef* node, absl::string_view name, const std::string& v);
void SetAttr(NodeDef* node, absl::string_view name, const char* v);
void SetAttr(NodeDef* node, absl::string_view name, int64_t v);
void SetAttr(NodeDef* node, absl::string_view name, int v);
void SetAttr(NodeDef* node, absl::string_view name, float v);
void SetAttr(NodeDef* node, absl::string_view name, bool v);
void SetAttr(NodeDef* node, absl::string_view name, DataType v);
void SetAttr(NodeDef* node, absl::string_view name, const PartialTensorShape& v);
void SetAttr(NodeDef* node, absl::string_view name, const TensorShape& v);
void SetAttr(NodeDef* node, absl::string_view name, const Tensor& v);
void SetAttr(NodeDef* node, absl::string_view name, const std::vector<int64_t>& v);
void SetAttr(NodeDef* node, absl::string_view name, const std::vector<DataType>& v);
void SetAttr(NodeDef* node, absl::string_view name, const std::vector<std::string>& v);
void SetAttr(NodeDef* node, absl::string_view name, const std::vector<PartialTensorShape>& v);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_ATTR_VALUE_UTIL_H_
