// Tensor: a typed n-dimensional array over a 64-byte-aligned, reference-counted
// buffer. Copying a Tensor shares the buffer (cheap); Slice() along dimension 0
// and Reshaped() share it too. A Tensor is a value type and is not itself
// thread-safe; distinct Tensors sharing one buffer may be used from different
// threads (the reference count is atomic).
//
//   Tensor t(DT_FLOAT, TensorShape({2, 3}));
//   float* p = t.data<float>();          // 6 floats
//   Tensor row = t.Slice(1, 2);          // shares t's buffer
//   auto m = EigenMatrix<float>(t);      // typed Eigen view (eigen_views.h)
#ifndef TENSORGRID_CORE_FRAMEWORK_TENSOR_H_
#define TENSORGRID_CORE_FRAMEWORK_TENSOR_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/base/optimization.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/framework/allocator.h"
#include "core/framework/resource_handle.h"
#include "core/framework/tensor_shape.h"
#include "core/framework/types.h"
#include "core/platform/logging.h"

namespace tensorgrid {

constexpr size_t kTensorAlignment = 64;

// Largest buffer Tensor::Allocate accepts (bytes). Default 64 GiB.
void SetMaxTensorBytes(int64_t bytes);
int64_t MaxTensorBytes();
// Freed buffers of 256 KiB and more are kept for reuse, up to this many bytes
// in all (0 frees them at once). The default is DefaultTensorBufferCacheBytes():
// TensorBufferCacheBytesFor(AvailableMemoryBytes()) (core/platform/env.h),
// an eighth of it between 256 MiB and 4 GiB.
void SetTensorBufferCacheBytes(size_t bytes);
size_t TensorBufferCacheBytes();
size_t DefaultTensorBufferCacheBytes();
size_t TensorBufferCacheBytesFor(int64_t available_memory);

// Reference-counted, aligned storage, from the host heap or from an
// Allocator (device memory, pinned memory). Object dtypes (string, resource)
// live on the host heap only; they are constructed on allocation and
// destroyed with the buffer.
class TensorBuffer {
 public:
  // nullptr when the memory is exhausted.
  static TensorBuffer* New(Allocator* allocator, DataType dtype, int64_t num_elements,
                           size_t bytes);
  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) Delete();
  }
  bool RefCountIsOne() const { return refs_.load(std::memory_order_acquire) == 1; }
  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  Allocator* allocator() const { return allocator_; }  // null: the host heap
  bool on_host() const { return on_host_; }

 private:
  TensorBuffer() = default;
  void Delete();
  std::atomic<int32_t> refs_{1};
  DataType dtype_ = DT_INVALID;
  int64_t num_elements_ = 0;
  size_t bytes_ = 0;
  size_t capacity_ = 0;  // bytes actually allocated
  void* data_ = nullptr;
  Allocator* allocator_ = nullptr;
  bool on_host_ = true;
};

class Tensor {
 public:
  Tensor() = default;  // uninitialized: dtype DT_INVALID, no buffer
  // Allocates; CHECK-fails on impossible sizes (use Allocate for untrusted shapes).
  Tensor(DataType dtype, const TensorShape& shape);
  // Checked allocation: ResourceExhausted above MaxTensorBytes(), InvalidArgument
  // for dtypes that cannot be stored.
  static absl::StatusOr<Tensor> Allocate(DataType dtype, const TensorShape& shape);
  // The same from `allocator` (null: the host heap); ResourceExhausted naming
  // the allocator when it has no room.
  static absl::StatusOr<Tensor> Allocate(Allocator* allocator, DataType dtype,
                                         const TensorShape& shape);

  template <typename T>
  static Tensor Scalar(T value) {
    Tensor t(DataTypeToEnum<T>::value, TensorShape());
    t.data<T>()[0] = std::move(value);
    return t;
  }
  // A 1-D or shaped tensor from values (CHECKs that the element count matches).
  template <typename T>
  static Tensor FromVector(absl::Span<const T> values, const TensorShape& shape) {
    TG_CHECK(shape.num_elements() == static_cast<int64_t>(values.size()));
    Tensor t(DataTypeToEnum<T>::value, shape);
    std::copy(values.begin(), values.end(), t.data<T>());
    return t;
  }
  template <typename T>
  static Tensor FromVector(std::initializer_list<T> values, const TensorShape& shape) {
    return FromVector<T>(absl::Span<const T>(values.begin(), values.size()), shape);
  }

  Tensor(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(const Tensor& other);
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor() {
    if (buf_) buf_->Unref();
  }

  bool IsInitialized() const { return buf_ != nullptr || dtype_ != DT_INVALID; }
  DataType dtype() const { return dtype_; }
  const TensorShape& shape() const { return shape_; }
  int dims() const { return shape_.dims(); }
  int64_t dim_size(int d) const { return shape_.dim_size(d); }
  int64_t NumElements() const { return shape_.num_elements(); }
  size_t TotalBytes() const;

  // The elements as T, which must be the tensor's dtype (else the process
  // aborts naming both, as TensorFlow's CHECK does: never garbage).
  template <typename T>
  T* data() const {
    if (ABSL_PREDICT_FALSE(DataTypeToEnum<T>::value != dtype_)) {
      WrongElementType(DataTypeToEnum<T>::value);
    }
    return static_cast<T*>(raw_data());
  }
  template <typename T>
  absl::Span<T> values() const {
    return absl::Span<T>(data<T>(), static_cast<size_t>(NumElements()));
  }
  // The one element (the tensor must have exactly one, of type T).
  template <typename T>
  T& scalar() const {
    if (ABSL_PREDICT_FALSE(NumElements() != 1)) NotAScalar();
    return data<T>()[0];
  }
  void* raw_data() const { return buf_ ? static_cast<char*>(buf_->data()) + offset_ : nullptr; }
  // Abort, naming what was asked of this tensor and what it is.
  [[noreturn]] void WrongElementType(DataType asked) const;
  [[noreturn]] void NotAScalar() const;
  // Whether the host can read the bytes (false for device memory: copy it
  // with EnsureMemory, device_context.h).
  bool OnHost() const { return buf_ == nullptr || buf_->on_host(); }
  // The allocator the bytes came from (null: the host heap).
  Allocator* allocator() const { return buf_ ? buf_->allocator() : nullptr; }

  // Rows [start, limit) of dimension 0, sharing this tensor's buffer.
  Tensor Slice(int64_t start, int64_t limit) const;
  // The same buffer viewed with another shape of equal element count.
  Tensor Reshaped(const TensorShape& shape) const;
  // A copy with its own host buffer (CHECKs OnHost()).
  Tensor DeepCopy() const;

  bool SharesBufferWith(const Tensor& other) const { return buf_ != nullptr && buf_ == other.buf_; }
  // True when no other Tensor shares the buffer (safe to update in place).
  bool RefCountIsOne() const { return buf_ != nullptr && buf_->RefCountIsOne(); }

  // "Tensor<type: float shape: [2] values: 1 2>", at most `max_entries` values.
  std::string DebugString(int max_entries = 16) const;
  // The first `max_entries` values separated by spaces.
  std::string SummarizeValue(int max_entries) const;

 private:
  DataType dtype_ = DT_INVALID;
  TensorShape shape_;
  TensorBuffer* buf_ = nullptr;
  size_t offset_ = 0;  // bytes from buf_->data()
};

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_FRAMEWORK_TENSOR_H_
