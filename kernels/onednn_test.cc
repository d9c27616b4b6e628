#include "kernels/onednn.h"

#include <cstdint>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

dnnl::memory::desc Floats(int64_t n) {
  return dnnl::memory::desc({n}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::a);
}

TEST(OneDnnTempMemoryTest, MemoryOverTheHoldersBufferOfTheDescsSize) {
  Tensor holder;
  ASSERT_OK_AND_ASSIGN(dnnl::memory m, OneDnnTempMemory(Floats(1000), &holder));
  EXPECT_EQ(holder.TotalBytes(), 4000u);
  EXPECT_EQ(m.get_data_handle(), holder.raw_data());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.get_data_handle()) % 64, 0u);  // oneDNN's alignment
  EXPECT_EQ(m.get_desc(), Floats(1000));
}

TEST(OneDnnTempMemoryTest, AnEmptyDescGivesAnEmptyMemory) {
  Tensor holder;
  ASSERT_OK_AND_ASSIGN(dnnl::memory m, OneDnnTempMemory(dnnl::memory::desc(), &holder));
  EXPECT_FALSE(m);
  EXPECT_FALSE(holder.IsInitialized());
}

TEST(OneDnnTempMemoryTest, PastTheTensorLimitIsResourceExhaustedNamingTheSize) {
  const int64_t limit = MaxTensorBytes();
  SetMaxTensorBytes(1 << 20);
  Tensor holder;
  absl::StatusOr<dnnl::memory> m = OneDnnTempMemory(Floats(1 << 20), &holder);
  SetMaxTensorBytes(limit);
  EXPECT_EQ(m.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(m.status().message().find("a 4194304-byte oneDNN buffer"), std::string::npos)
      << m.status();
}

}  // namespace
}  // namespace tensorgrid
