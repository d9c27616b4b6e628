#include "core/platform/test_dir.h"

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>

#include "core/platform/logging.h"

namespace tensorgrid {

std::string TestTmpRoot() {
  const char* root = std::getenv("TEST_TMPDIR");
  return root != nullptr ? root : "/tmp";
}

std::string NewTestDir(const std::string& prefix) {
  std::string templ = TestTmpRoot() + "/" + prefix + "XXXXXX";
  TG_CHECK(::mkdtemp(templ.data()) != nullptr);
  return templ;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  while (struct dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  if (d != nullptr) ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace tensorgrid
