#include "core/framework/tensor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/platform/env.h"
#include "core/platform/status.h"

namespace tensorgrid {

namespace {
std::atomic<int64_t> max_tensor_bytes{int64_t{64} << 30};

template <typename T>
void ConstructObjects(void* data, int64_t n) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) new (p + i) T();
}

template <typename T>
void DestroyObjects(void* data, int64_t n) {
  T* p = static_cast<T*>(data);
  for (int64_t i = 0; i < n; ++i) p[i].~T();
}

std::string FormatStats(Allocator* allocator) {
  AllocatorStats s = allocator->GetStats();
  std::string out = absl::StrCat(" (", s.bytes_in_use, " bytes in use");
  if (s.bytes_limit > 0) absl::StrAppend(&out, " of a ", s.bytes_limit, "-byte limit");
  return out + ")";
}

size_t ElementBytes(DataType dtype) {
  if (dtype == DT_STRING) return sizeof(std::string);
  if (dtype == DT_RESOURCE) return sizeof(ResourceHandle);
  return DataTypeSize(dtype);
}
}  // namespace

namespace {

// Large buffers are kept for reuse instead of being freed: glibc returns big
// blocks to the OS on free, and faulting 4 MiB back in costs more than a
// 1024x1024 MatMul step's bookkeeping (see docs/PERFORMANCE.md). Blocks are
// grouped in size classes (1/8 of a power of two apart, so at most 12.5%
// slack), and the cache holds at most `capacity` bytes; beyond that, freed
// blocks go back to malloc.
//
// The default capacity is an eighth of the memory the process may use,
// between 256 MiB and 4 GiB: a training step frees its activations at its
// end, and a cache smaller than them faults most of them in again every
// step. A MobileNetV2 step (batch 64, 28x28) on 2 threads took 267-367 ms
// with a 256 MiB cache and 117-183 ms with 3-4 GiB (docs/PERFORMANCE.md,
// "The tensor buffer cache").
class LargeBlockCache {
 public:
  static constexpr size_t kMinBytes = size_t{256} << 10;

  static size_t SizeClass(size_t bytes) {
    size_t top = size_t{1} << (63 - __builtin_clzll(bytes));
    size_t step = std::max<size_t>(top / 8, kTensorAlignment);
    return (bytes + step - 1) / step * step;
  }
  void* Get(size_t size_class) {
    absl::MutexLock lock(&mu_);
    auto it = free_.find(size_class);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= size_class;
    return p;
  }
  // False if the cache is full (the caller frees the block).
  bool Put(void* p, size_t size_class) {
    absl::MutexLock lock(&mu_);
    if (cached_ + size_class > capacity_) return false;
    free_[size_class].push_back(p);
    cached_ += size_class;
    return true;
  }
  size_t capacity() {
    absl::MutexLock lock(&mu_);
    return capacity_;
  }
  void SetCapacity(size_t bytes) {
    std::vector<void*> drop;
    {
      absl::MutexLock lock(&mu_);
      capacity_ = bytes;
      for (auto& [size_class, blocks] : free_) {
        while (cached_ > capacity_ && !blocks.empty()) {
          drop.push_back(blocks.back());
          blocks.pop_back();
          cached_ -= size_class;
        }
      }
    }
    for (void* p : drop) std::free(p);
  }

 private:
  absl::Mutex mu_;
  size_t capacity_ ABSL_GUARDED_BY(mu_) = DefaultTensorBufferCacheBytes();
  size_t cached_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<size_t, std::vector<void*>> free_ ABSL_GUARDED_BY(mu_);
};

LargeBlockCache& BlockCache() {
  static LargeBlockCache* cache = new LargeBlockCache;  // never destroyed: used at exit
  return *cache;
}

}  // namespace

void SetMaxTensorBytes(int64_t bytes) { max_tensor_bytes.store(bytes); }
void SetTensorBufferCacheBytes(size_t bytes) { BlockCache().SetCapacity(bytes); }
size_t TensorBufferCacheBytes() { return BlockCache().capacity(); }
size_t TensorBufferCacheBytesFor(int64_t available_memory) {
  return std::clamp<size_t>(static_cast<size_t>(std::max<int64_t>(available_memory, 0) / 8),
                            size_t{256} << 20, size_t{4} << 30);
}
size_t DefaultTensorBufferCacheBytes() {
  static const size_t bytes = TensorBufferCacheBytesFor(AvailableMemoryBytes());
  return bytes;
}
int64_t MaxTensorBytes() { return max_tensor_bytes.load(); }

TensorBuffer* TensorBuffer::New(Allocator* allocator, DataType dtype, int64_t num_elements,
                                size_t bytes) {
  size_t rounded = (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  if (rounded == 0) rounded = kTensorAlignment;
  void* data = nullptr;
  if (allocator != nullptr) {
    TG_CHECK(!DataTypeIsObject(dtype));  // strings and handles live on the host heap
    data = allocator->Allocate(rounded);
  } else if (rounded >= LargeBlockCache::kMinBytes) {
    rounded = LargeBlockCache::SizeClass(rounded);
    data = BlockCache().Get(rounded);
  }
  if (data == nullptr && allocator == nullptr) data = std::aligned_alloc(kTensorAlignment, rounded);
  if (data == nullptr) return nullptr;
  auto* buf = new TensorBuffer();
  buf->dtype_ = dtype;
  buf->num_elements_ = num_elements;
  buf->bytes_ = bytes;
  buf->capacity_ = rounded;
  buf->data_ = data;
  buf->allocator_ = allocator;
  buf->on_host_ = allocator == nullptr || allocator->OnHost();
  if (dtype == DT_STRING) ConstructObjects<std::string>(data, num_elements);
  if (dtype == DT_RESOURCE) ConstructObjects<ResourceHandle>(data, num_elements);
  return buf;
}

void TensorBuffer::Delete() {
  if (dtype_ == DT_STRING) DestroyObjects<std::string>(data_, num_elements_);
  if (dtype_ == DT_RESOURCE) DestroyObjects<ResourceHandle>(data_, num_elements_);
  if (allocator_ != nullptr) {
    allocator_->Deallocate(data_, capacity_);
  } else if (capacity_ < LargeBlockCache::kMinBytes || !BlockCache().Put(data_, capacity_))
    std::free(data_);
  delete this;
}

absl::StatusOr<Tensor> Tensor::Allocate(DataType dtype, const TensorShape& shape) {
  return Allocate(nullptr, dtype, shape);
}

absl::StatusOr<Tensor> Tensor::Allocate(Allocator* allocator, DataType dtype,
                                        const TensorShape& shape) {
  if (DataTypeIsObject(dtype)) allocator = nullptr;  // strings and handles live on the host
  if (!DataTypeIsSupported(dtype) || IsRefType(dtype)) {
    return errors::InvalidArgument("cannot allocate a tensor of type ", DataTypeString(dtype));
  }
  int64_t bytes;
  if (__builtin_mul_overflow(shape.num_elements(), static_cast<int64_t>(ElementBytes(dtype)),
                             &bytes) ||
      bytes > MaxTensorBytes()) {
    return errors::ResourceExhausted("tensor of type ", DataTypeString(dtype), " and shape ",
                                     shape.DebugString(), " exceeds the limit of ",
                                     MaxTensorBytes(), " bytes");
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.buf_ = TensorBuffer::New(allocator, dtype, shape.num_elements(), static_cast<size_t>(bytes));
  if (t.buf_ == nullptr) {
    return errors::ResourceExhausted(
        "out of memory allocating ", bytes, " bytes for a tensor of shape ", shape.DebugString(),
        allocator == nullptr ? std::string(" on the host")
                             : absl::StrCat(" from ", allocator->Name(), FormatStats(allocator)));
  }
  return t;
}

Tensor::Tensor(DataType dtype, const TensorShape& shape) {
  auto t = Allocate(dtype, shape);
  TG_CHECK(t.ok());
  *this = std::move(t).value();
}

Tensor::Tensor(const Tensor& other)
    : dtype_(other.dtype_), shape_(other.shape_), buf_(other.buf_), offset_(other.offset_) {
  if (buf_) buf_->Ref();
}

Tensor::Tensor(Tensor&& other) noexcept
    : dtype_(other.dtype_),
      shape_(std::move(other.shape_)),
      buf_(other.buf_),
      offset_(other.offset_) {
  other.buf_ = nullptr;
  other.dtype_ = DT_INVALID;
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) {
    if (other.buf_) other.buf_->Ref();
    if (buf_) buf_->Unref();
    dtype_ = other.dtype_;
    shape_ = other.shape_;
    buf_ = other.buf_;
    offset_ = other.offset_;
  }
  return *this;
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    if (buf_) buf_->Unref();
    dtype_ = other.dtype_;
    shape_ = std::move(other.shape_);
    buf_ = other.buf_;
    offset_ = other.offset_;
    other.buf_ = nullptr;
    other.dtype_ = DT_INVALID;
  }
  return *this;
}

void Tensor::WrongElementType(DataType asked) const {
  std::fprintf(stderr, "Tensor::data<%s>() of a tensor of %s %s: the element types differ\n",
               DataTypeString(asked).c_str(), DataTypeString(dtype_).c_str(),
               shape_.DebugString().c_str());
  std::abort();
}

void Tensor::NotAScalar() const {
  std::fprintf(stderr, "Tensor::scalar() of a tensor of %s %s: it has %lld elements, not 1\n",
               DataTypeString(dtype_).c_str(), shape_.DebugString().c_str(),
               static_cast<long long>(NumElements()));
  std::abort();
}

size_t Tensor::TotalBytes() const {
  return static_cast<size_t>(NumElements()) * ElementBytes(dtype_);
}

Tensor Tensor::Slice(int64_t start, int64_t limit) const {
  TG_CHECK(dims() >= 1 && 0 <= start && start <= limit && limit <= dim_size(0));
  Tensor t = *this;
  int64_t row = dim_size(0) == 0 ? 0 : NumElements() / dim_size(0);
  t.shape_.set_dim(0, limit - start);
  t.offset_ += static_cast<size_t>(start * row) * ElementBytes(dtype_);
  return t;
}

Tensor Tensor::Reshaped(const TensorShape& shape) const {
  TG_CHECK(shape.num_elements() == NumElements());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::DeepCopy() const {
  if (!IsInitialized()) return Tensor();
  TG_CHECK(OnHost());  // device memory is copied with EnsureMemory
  Tensor t(dtype_, shape_);
  if (dtype_ == DT_STRING) {
    std::copy_n(data<std::string>(), NumElements(), t.data<std::string>());
  } else if (dtype_ == DT_RESOURCE) {
    std::copy_n(data<ResourceHandle>(), NumElements(), t.data<ResourceHandle>());
  } else if (TotalBytes() > 0) {
    std::memcpy(t.raw_data(), raw_data(), TotalBytes());
  }
  return t;
}

namespace {
template <typename T>
std::string FormatValue(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return absl::StrCat("\"", v, "\"");
  } else if constexpr (std::is_same_v<T, ResourceHandle>) {
    return v.DebugString();
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    return absl::StrCat(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int8_t>) {
    return absl::StrCat(static_cast<int>(v));
  } else {
    return absl::StrCat(v);
  }
}
}  // namespace

std::string Tensor::SummarizeValue(int max_entries) const {
  if (!OnHost()) return absl::StrCat("<in ", allocator()->Name(), " memory>");
  std::string out;
  int64_t n = std::min<int64_t>(NumElements(), max_entries);
  auto append = [&](auto* p) {
    for (int64_t i = 0; i < n; ++i) {
      if (i) out += " ";
      out += FormatValue(p[i]);
    }
  };
  if (dtype_ == DT_STRING) {
    append(data<std::string>());
  } else if (dtype_ == DT_RESOURCE) {
    append(data<ResourceHandle>());
  } else {
    TG_SWITCH_POD_TYPES(dtype_, return "<unprintable>", append(data<T>()));
  }
  if (NumElements() > n) out += "...";
  return out;
}

std::string Tensor::DebugString(int max_entries) const {
  if (!IsInitialized()) return "Tensor<uninitialized>";
  return absl::StrCat("Tensor<type: ", DataTypeString(dtype_), " shape: ", shape_.DebugString(),
                      " values: ", SummarizeValue(max_entries), ">");
}

}  // namespace tensorgrid
