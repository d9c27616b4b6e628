// The main() of a fuzz target outside the fuzzing build: replays inputs
// through LLVMFuzzerTestOneInput, as libFuzzer does when given files, so the
// default (gcc) test suite runs every seed corpus and every crash regression
// on every run. Arguments are files or directories (every regular file in
// them, in name order); arguments starting with '-' are libFuzzer's flags and
// are ignored. A missing path, or no input at all, fails.
//
//   bazel-bin/tests/fuzz/graphdef_fuzzer tests/fuzz/corpus/graphdef crash-1234
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

// The files `path` names: itself, or the regular files in it, sorted.
bool ListInputs(const std::string& path, std::vector<std::string>* out) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) {
    out->push_back(path);
    return true;
  }
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return false;
  std::vector<std::string> files;
  while (const dirent* entry = readdir(dir)) {
    const std::string file = path + "/" + entry->d_name;
    if (entry->d_name[0] != '.' && stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      files.push_back(file);
    }
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  out->insert(out->end(), files.begin(), files.end());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') continue;
    if (!ListInputs(argv[i], &inputs)) {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[i]);
      return 1;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "usage: %s FILE_OR_DIR... (no inputs found)\n", argv[0]);
    return 1;
  }
  for (const std::string& path : inputs) {
    std::ifstream file(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    std::fprintf(stderr, "running %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::fprintf(stderr, "replayed %zu inputs, none crashed\n", inputs.size());
  return 0;
}
