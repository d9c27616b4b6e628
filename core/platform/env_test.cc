#include "core/platform/env.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

namespace fs = std::filesystem;

class CgroupMemoryLimitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = std::getenv("TEST_TMPDIR");
    root_ = fs::path(tmp != nullptr ? tmp : "/tmp") / "cgroup_test";
    fs::remove_all(root_);
  }
  void Write(const std::string& file, const std::string& text) {
    fs::create_directories((root_ / file).parent_path());
    std::ofstream(root_ / file) << text;
  }
  int64_t Limit(const std::string& self) { return CgroupMemoryLimit(root_.string(), self); }

  fs::path root_;
};

TEST_F(CgroupMemoryLimitTest, V2TakesTheLowestOfTheCgroupAndItsAncestors) {
  Write("memory.max", "max\n");
  Write("pod/memory.max", "1073741824\n");
  Write("pod/job/memory.max", "max\n");
  EXPECT_EQ(Limit("0::/pod/job\n"), int64_t{1} << 30);
  Write("pod/job/memory.max", "536870912\n");
  EXPECT_EQ(Limit("0::/pod/job\n"), int64_t{1} << 29);
}

TEST_F(CgroupMemoryLimitTest, V2InsideItsOwnNamespaceReadsTheRoot) {
  Write("memory.max", "2147483648\n");
  EXPECT_EQ(Limit("0::/\n"), int64_t{2} << 30);
}

TEST_F(CgroupMemoryLimitTest, V1ReadsTheMemoryControllersLimit) {
  Write("memory/docker/abc/memory.limit_in_bytes", "3221225472\n");
  EXPECT_EQ(Limit("12:cpu,cpuacct:/docker/abc\n5:memory:/docker/abc\n"), int64_t{3} << 30);
}

TEST_F(CgroupMemoryLimitTest, NoLimitOrNothingReadableIsZero) {
  Write("memory.max", "max\n");
  EXPECT_EQ(Limit("0::/\n"), 0);
  EXPECT_EQ(Limit("0::/not/there\n"), 0);
  EXPECT_EQ(Limit(""), 0);
  EXPECT_EQ(Limit("garbage\n1:name=systemd\n"), 0);
}

TEST(AvailableMemoryBytesTest, IsPositive) { EXPECT_GT(AvailableMemoryBytes(), 0); }

}  // namespace
}  // namespace tensorgrid
