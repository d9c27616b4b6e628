// Scratch directories for tests: a fresh directory under Bazel's
// $TEST_TMPDIR (or /tmp outside Bazel), and a directory's listing.
//
//   const std::string dir = NewTestDir();          // ".../testXXXXXX", empty
//   EXPECT_EQ(ListDir(dir), std::vector<std::string>{"model.index", ...});
#ifndef TENSORGRID_CORE_PLATFORM_TEST_DIR_H_
#define TENSORGRID_CORE_PLATFORM_TEST_DIR_H_

#include <string>
#include <vector>

namespace tensorgrid {

// $TEST_TMPDIR, or /tmp when it is not set.
std::string TestTmpRoot();
// A new empty directory "<TestTmpRoot()>/<prefix>XXXXXX" (mkdtemp);
// CHECK-fails when it cannot be made.
std::string NewTestDir(const std::string& prefix = "test");
// The names in `dir` but "." and "..", sorted; empty when it cannot be read.
std::vector<std::string> ListDir(const std::string& dir);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_TEST_DIR_H_
