#include "core/platform/file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/platform/status_testutil.h"
#include "core/platform/test_dir.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

// A fresh directory under the test's temporary directory.
std::string NewDir(const std::string& name) {
  const char* root = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(root != nullptr ? root : "/tmp") + "/file_test_" + name;
  EXPECT_OK(CreateDirectories(dir));
  return dir;
}

TEST(FileTest, PathsSplitAndJoinAsTheShellWould) {
  EXPECT_EQ(Dirname("a/b/c"), "a/b");
  EXPECT_EQ(Dirname("c"), ".");
  EXPECT_EQ(Dirname("/c"), "/");
  EXPECT_EQ(Basename("a/b/c"), "c");
  EXPECT_EQ(Basename("c"), "c");
  EXPECT_EQ(JoinPath("a", "b"), "a/b");
  EXPECT_EQ(JoinPath("a/", "b"), "a/b");
  EXPECT_EQ(JoinPath("a", "/abs"), "/abs");
  EXPECT_EQ(JoinPath("", "b"), "b");
  EXPECT_EQ(JoinPath(".", "b"), "b");
}

TEST(FileTest, AMissingFileIsNotFoundNamingWhatItIsFor) {
  EXPECT_STATUS(ReadFileToString("/no/such/file", "graph file").status(), kNotFound,
                "cannot read graph file '/no/such/file': No such file");
  EXPECT_STATUS(ReadFileToString("/no/such/file").status(), kNotFound, "cannot read file");
}

TEST(FileTest, WriteFileAtomicallyReplacesTheFileAndLeavesNoTemporary) {
  const std::string dir = NewDir("atomic");
  const std::string path = dir + "/state";
  ASSERT_OK(WriteFileAtomically(path, "first"));
  ASSERT_OK(WriteFileAtomically(path, std::string("sec\0nd", 6)));
  absl::StatusOr<std::string> read = ReadFileToString(path);
  ASSERT_OK(read.status());
  EXPECT_EQ(*read, std::string("sec\0nd", 6));
  EXPECT_EQ(ListDir(dir), std::vector<std::string>{"state"});
}

TEST(FileTest, TheAtomicWriteHookSeesTheSyncedTemporaryBeforeTheRename) {
  const std::string dir = NewDir("hook");
  const std::string path = dir + "/state";
  std::string seen_temp, seen_contents;
  bool target_existed = true;
  SetAtomicWriteHookForTesting([&](const std::string& temp) {
    seen_temp = temp;
    seen_contents = *ReadFileToString(temp);
    target_existed = ::access(path.c_str(), F_OK) == 0;
  });
  ASSERT_OK(WriteFileAtomically(path, "value"));
  SetAtomicWriteHookForTesting(nullptr);
  EXPECT_EQ(seen_temp.rfind(path + kTempMarker, 0), 0u) << seen_temp;
  EXPECT_EQ(seen_contents, "value");
  EXPECT_FALSE(target_existed);
  EXPECT_EQ(::access(seen_temp.c_str(), F_OK), -1);  // renamed away
}

TEST(FileTest, IsRegularFileAndPathExists) {
  const std::string dir = NewDir("exists");
  ASSERT_OK(WriteWholeFile(dir + "/plain", "x"));
  ASSERT_EQ(::symlink("nowhere", (dir + "/dangling").c_str()), 0);
  EXPECT_TRUE(IsRegularFile(dir + "/plain"));
  EXPECT_FALSE(IsRegularFile(dir));
  EXPECT_FALSE(IsRegularFile(dir + "/dangling"));
  EXPECT_FALSE(IsRegularFile(dir + "/missing"));
  EXPECT_TRUE(PathExists(dir + "/plain"));
  EXPECT_TRUE(PathExists(dir));
  EXPECT_TRUE(PathExists(dir + "/dangling"));
  EXPECT_FALSE(PathExists(dir + "/missing"));
}

TEST(FileTest, CreateDirectoriesMakesEveryLevelAndRefusesAFileInTheWay) {
  const std::string dir = NewDir("mkdir");
  ASSERT_OK(CreateDirectories(dir + "/a/b/c"));
  struct stat st;
  ASSERT_EQ(::stat((dir + "/a/b/c").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  ASSERT_OK(CreateDirectories(dir + "/a/b/c"));  // again: nothing to do
  ASSERT_OK(WriteWholeFile(dir + "/plain", "x"));
  EXPECT_STATUS(CreateDirectories(dir + "/plain"), kFailedPrecondition,
                "exists and is not a directory");
  EXPECT_STATUS(CreateDirectories(dir + "/plain/sub"), kFailedPrecondition,
                "exists and is not a directory");
}

TEST(FileTest, ErrnoCodesCarryTheirMeaning) {
  EXPECT_STATUS(ErrnoToStatus(ENOENT, "opening", "/x"), kNotFound, "opening '/x': ");
  EXPECT_STATUS(ErrnoToStatus(ENOTDIR, "opening", "/x"), kNotFound, "opening '/x': ");
  EXPECT_STATUS(ErrnoToStatus(EACCES, "creating", "/x"), kPermissionDenied, "creating '/x'");
  EXPECT_STATUS(ErrnoToStatus(ENOSPC, "writing", "/x"), kResourceExhausted, "writing '/x'");
  EXPECT_STATUS(ErrnoToStatus(EIO, "reading", "/x"), kUnknown, "reading '/x'");
}

}  // namespace
}  // namespace tensorgrid
