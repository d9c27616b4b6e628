// Handles to the nodes of a graph under construction, in TensorFlow's C++ shape:
// an Operation is a node, an Output one of its outputs, and an Input anything
// an op accepts as a data input: an Output, or a C++ literal or Tensor that the
// op wrapper turns into a Const node.
//
//   Scope root = Scope::NewRootScope();
//   Output x = ops::Placeholder(root, DT_FLOAT);
//   auto y = ops::Add(root, x, 1.f);                  // 1.f becomes a Const
//   auto m = ops::MatMul(root, {{1.f, 2.f}}, {{3.f}, {4.f}});
//
// These are plain values (a node name, an index, dtypes, the graph's id);
// they do not keep the graph alive and are only meaningful in the Scope that
// made them: the ops and sessions of another root scope's graph refuse them
// (InvalidArgument), even where that graph has a node of the same name.
#ifndef TENSORGRID_CLIENT_OUTPUT_H_
#define TENSORGRID_CLIENT_OUTPUT_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/framework/tensor.h"
#include "core/framework/types.h"

namespace tensorgrid {

class Output;

// A node of the graph. Default-constructed (or returned by a failed build) it
// is invalid: valid() is false and it has no outputs.
class Operation {
 public:
  Operation() = default;
  // `graph_id`: the graph it was built in (Scope::graph_id), which the ops
  // and sessions of another graph refuse it for; 0 when unknown (then only
  // its name is checked).
  Operation(std::string node_name, std::vector<DataType> output_types, uint64_t graph_id = 0)
      : name_(std::move(node_name)), output_types_(std::move(output_types)), graph_id_(graph_id) {}

  bool valid() const { return !name_.empty(); }
  const std::string& name() const { return name_; }
  uint64_t graph_id() const { return graph_id_; }
  // False when it is known to be a node of another graph than `graph_id`'s.
  bool MayBelongTo(uint64_t graph_id) const { return graph_id_ == 0 || graph_id_ == graph_id; }
  int num_outputs() const { return static_cast<int>(output_types_.size()); }
  // DT_INVALID when `i` is out of range.
  DataType output_type(int i) const {
    return i >= 0 && i < num_outputs() ? output_types_[i] : DT_INVALID;
  }
  Output output(int i) const;

  bool operator==(const Operation& other) const { return name_ == other.name_; }
  bool operator!=(const Operation& other) const { return name_ != other.name_; }

 private:
  std::string name_;
  std::vector<DataType> output_types_;
  uint64_t graph_id_ = 0;
};

// Output `index` of a node.
class Output {
 public:
  Output() = default;
  // The single output of `op`. An op with zero or several outputs gives an
  // Output that any op refuses as an input (with an error naming the node).
  Output(const Operation& op)  // NOLINT: implicit by design, as in TensorFlow
      : op_(op), index_(op.num_outputs() == 1 ? 0 : kNotSingleOutput) {}
  Output(const Operation& op, int index) : op_(op), index_(index) {}

  const Operation& op() const { return op_; }
  const std::string& node_name() const { return op_.name(); }
  int index() const { return index_; }
  DataType type() const { return op_.output_type(index_); }
  // "node:index", the form Session feeds and fetches use.
  std::string name() const;
  // True when this names an existing output of a valid node.
  bool valid() const { return op_.valid() && index_ >= 0 && index_ < op_.num_outputs(); }

  bool operator==(const Output& other) const { return index_ == other.index_ && op_ == other.op_; }
  bool operator!=(const Output& other) const { return !(*this == other); }

  static constexpr int kNotSingleOutput = -2;

 private:
  Operation op_;
  int index_ = -1;
};

struct OutputHash {
  size_t operator()(const Output& output) const;
};

namespace internal {

// The fixed-width integer type of a size and signedness.
template <size_t Bytes, bool Signed>
struct IntOfSize;
template <>
struct IntOfSize<1, true> {
  using type = int8_t;
};
template <>
struct IntOfSize<1, false> {
  using type = uint8_t;
};
template <>
struct IntOfSize<2, true> {
  using type = int16_t;
};
template <>
struct IntOfSize<2, false> {
  using type = uint16_t;
};
template <>
struct IntOfSize<4, true> {
  using type = int32_t;
};
template <>
struct IntOfSize<4, false> {
  using type = uint32_t;
};
template <>
struct IntOfSize<8, true> {
  using type = int64_t;
};
template <>
struct IntOfSize<8, false> {
  using type = uint64_t;
};

// The dtype a C++ literal of type T is stored as: arithmetic types map by size
// and signedness (so `1` is int32, `int64_t{1}` and `1LL` int64, `1.f` float,
// `1.0` double), anything convertible to std::string is a DT_STRING.
template <typename T, typename = void>
struct LiteralType {};
template <typename T>
struct LiteralType<T, std::enable_if_t<std::is_floating_point<T>::value>> {
  using type = std::conditional_t<sizeof(T) <= 4, float, double>;
};
template <>
struct LiteralType<bool> {
  using type = bool;
};
template <typename T>
struct LiteralType<T,
                   std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value>> {
  using type = typename IntOfSize<sizeof(T), std::is_signed<T>::value>::type;
};
template <typename T>
struct LiteralType<T, std::enable_if_t<!std::is_arithmetic<T>::value &&
                                       std::is_convertible<T, std::string>::value>> {
  using type = std::string;
};
template <>
struct LiteralType<half> {
  using type = half;
};
template <>
struct LiteralType<bfloat16> {
  using type = bfloat16;
};

template <typename T, typename = void>
struct IsLiteral : std::false_type {};
template <typename T>
struct IsLiteral<T, std::void_t<typename LiteralType<T>::type>> : std::true_type {};

template <typename T>
using EnableIfLiteral = std::enable_if_t<IsLiteral<T>::value>;

}  // namespace internal

// Anything an op accepts as one data input.
class Input {
 public:
  // A constant value, built from literals:
  //   5.f                        float scalar
  //   {1, 2, 3}                  int32 vector [3]
  //   {{1.f, 2.f}, {3.f, 4.f}}   float matrix [2,2]
  //   {"a", "b"}                 string vector
  //   Initializer(0.f, {2, 3})   [2,3] filled with 0
  // A malformed value (ragged nesting, mixed types, a count that does not fit
  // the shape) is kept as a `status` that the op wrapper reports on its scope.
  struct Initializer {
    template <typename T, typename = internal::EnableIfLiteral<T>>
    Initializer(const T& v) {  // NOLINT: implicit by design
      using Real = typename internal::LiteralType<T>::type;
      tensor = Tensor::Scalar<Real>(Real(v));
    }
    template <typename T, typename = internal::EnableIfLiteral<T>>
    Initializer(const T& v, const TensorShape& shape) {
      using Real = typename internal::LiteralType<T>::type;
      tensor = Tensor(DataTypeToEnum<Real>::value, shape);
      for (Real& x : tensor.values<Real>()) x = Real(v);
    }
    template <typename T, typename = internal::EnableIfLiteral<T>>
    Initializer(const std::initializer_list<T>& v) {  // NOLINT: implicit by design
      FromList(v, TensorShape({static_cast<int64_t>(v.size())}));
    }
    template <typename T, typename = internal::EnableIfLiteral<T>>
    Initializer(const std::initializer_list<T>& v, const TensorShape& shape) {
      FromList(v, shape);
    }
    Initializer(const Tensor& t) : tensor(t) {}  // NOLINT: implicit by design
    // Stacks equally shaped values of one dtype along a new dimension 0.
    Initializer(const std::initializer_list<Initializer>& v);  // NOLINT: implicit by design

    absl::Status status;
    Tensor tensor;

   private:
    template <typename T>
    void FromList(const std::initializer_list<T>& v, const TensorShape& shape);
  };

  Input(const Output& output) : output_(output) {}  // NOLINT: implicit by design
  template <typename T, typename = internal::EnableIfLiteral<T>>
  Input(const T& v) : Input(Initializer(v)) {}  // NOLINT: implicit by design
  template <typename T, typename = internal::EnableIfLiteral<T>>
  Input(const std::initializer_list<T>& v) : Input(Initializer(v)) {}            // NOLINT
  Input(const std::initializer_list<Initializer>& v) : Input(Initializer(v)) {}  // NOLINT
  Input(const Initializer& init)  // NOLINT: implicit by design
      : status_(init.status), tensor_(init.tensor), is_constant_(true) {}
  Input(const Tensor& t) : tensor_(t), is_constant_(true) {}  // NOLINT: implicit by design
  // Output `index` of the node `node_name`, which need not have been built by
  // this scope (for graphs extended by name).
  Input(const std::string& node_name, int index, DataType dtype)
      : node_name_(node_name), index_(index), dtype_(dtype) {}

  const absl::Status& status() const { return status_; }
  // A constant to be materialized as a Const node.
  bool is_constant() const { return is_constant_; }
  const Tensor& tensor() const { return tensor_; }
  // Set when built from an Output.
  const Output& output() const { return output_; }
  // Set when built by name.
  const std::string& node_name() const { return node_name_; }
  int index() const { return index_; }
  DataType data_type() const { return dtype_; }

 private:
  absl::Status status_;
  Output output_;
  Tensor tensor_;
  bool is_constant_ = false;
  std::string node_name_;
  int index_ = 0;
  DataType dtype_ = DT_INVALID;
};

// Several inputs for one list argument, as ConcatV2's `values`.
class InputList {
 public:
  InputList(const std::initializer_list<Input>& inputs)  // NOLINT: implicit by design
      : inputs_(inputs.begin(), inputs.end()) {}
  InputList(const std::vector<Output>& outputs)  // NOLINT: implicit by design
      : inputs_(outputs.begin(), outputs.end()) {}
  InputList(std::vector<Input> inputs) : inputs_(std::move(inputs)) {}  // NOLINT

  const std::vector<Input>& inputs() const { return inputs_; }
  size_t size() const { return inputs_.size(); }

 private:
  std::vector<Input> inputs_;
};

template <typename T>
void Input::Initializer::FromList(const std::initializer_list<T>& v, const TensorShape& shape) {
  using Real = typename internal::LiteralType<T>::type;
  if (shape.num_elements() != static_cast<int64_t>(v.size())) {
    status = absl::InvalidArgumentError(absl::StrCat("constant of shape ", shape.DebugString(),
                                                     " needs ", shape.num_elements(),
                                                     " values, got ", v.size()));
    return;
  }
  tensor = Tensor(DataTypeToEnum<Real>::value, shape);
  Real* out = tensor.data<Real>();
  for (const T& x : v) *out++ = Real(x);
}

}  // namespace tensorgrid

#endif  // TENSORGRID_CLIENT_OUTPUT_H_
