// Checkpoint save and restore throughput (core/util/tensor_bundle.h, the
// TensorFlow V2 format) against the file system's own limit measured in the
// same run: the same bytes written to one file and fsynced, and read back
// with pread. A save is the data file written and synced, the LevelDB index
// written, synced and renamed, the directory synced; a restore opens the
// index and reads and CRC-checks every tensor. Files live in $TEST_TMPDIR or
// /tmp (page cache warm for reads, as for a restore right after a save).
//
//   bazel build --config=opt //bench:checkpoint_benchmark
//   bazel-bin/bench/checkpoint_benchmark --benchmark_min_time=1
//
// Arguments: total MiB, tensors. bytes_per_second is the checkpoint's bytes.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/framework/tensor.h"
#include "core/platform/file.h"
#include "core/util/tensor_bundle.h"

namespace tensorgrid {
namespace {

std::string Dir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/tg_checkpoint_benchmark";
}

// `count` float tensors making up `mib` MiB in all.
std::vector<Tensor> Tensors(int64_t mib, int64_t count) {
  const int64_t floats = mib * (1 << 20) / 4 / count;
  std::vector<Tensor> tensors;
  for (int64_t i = 0; i < count; ++i) {
    Tensor t(DT_FLOAT, TensorShape({floats}));
    float* p = t.data<float>();
    for (int64_t j = 0; j < floats; ++j) p[j] = static_cast<float>((i + j) % 251) * 0.5f;
    tensors.push_back(std::move(t));
  }
  return tensors;
}

void SetBytes(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * state.range(0) * (1 << 20));
}

void BM_SaveCheckpoint(benchmark::State& state) {
  TG_CHECK(CreateDirectories(Dir()).ok());
  const std::vector<Tensor> tensors = Tensors(state.range(0), state.range(1));
  const std::string prefix = Dir() + "/model";
  for (auto _ : state) {
    auto writer = checkpoint::CheckpointWriter::Create(prefix);
    TG_CHECK(writer.ok());
    for (size_t i = 0; i < tensors.size(); ++i) {
      TG_CHECK((*writer)->Add("layer" + std::to_string(i) + "/kernel", tensors[i]).ok());
    }
    TG_CHECK((*writer)->Finish().ok());
  }
  SetBytes(state);
  TG_CHECK(checkpoint::DeleteCheckpoint(prefix).ok());
}

// The limit for a save: the same bytes written to one file and fsynced.
void BM_WriteAndSync(benchmark::State& state) {
  TG_CHECK(CreateDirectories(Dir()).ok());
  const std::vector<Tensor> tensors = Tensors(state.range(0), state.range(1));
  const std::string path = Dir() + "/raw";
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    TG_CHECK(fd >= 0);
    for (const Tensor& t : tensors) {
      TG_CHECK(WriteAll(fd, static_cast<const char*>(t.raw_data()), t.TotalBytes(), path).ok());
    }
    TG_CHECK(SyncAndClose(fd, path).ok());
  }
  SetBytes(state);
  ::unlink(path.c_str());
}

void BM_RestoreCheckpoint(benchmark::State& state) {
  TG_CHECK(CreateDirectories(Dir()).ok());
  const std::vector<Tensor> tensors = Tensors(state.range(0), state.range(1));
  const std::string prefix = Dir() + "/restore";
  {
    auto writer = checkpoint::CheckpointWriter::Create(prefix);
    TG_CHECK(writer.ok());
    for (size_t i = 0; i < tensors.size(); ++i) {
      TG_CHECK((*writer)->Add("layer" + std::to_string(i) + "/kernel", tensors[i]).ok());
    }
    TG_CHECK((*writer)->Finish().ok());
  }
  for (auto _ : state) {
    auto reader = checkpoint::CheckpointReader::Open(prefix);
    TG_CHECK(reader.ok());
    for (size_t i = 0; i < tensors.size(); ++i) {
      auto t = (*reader)->Read("layer" + std::to_string(i) + "/kernel");
      TG_CHECK(t.ok());
      benchmark::DoNotOptimize(t->raw_data());
    }
  }
  SetBytes(state);
  TG_CHECK(checkpoint::DeleteCheckpoint(prefix).ok());
}

// The limit for a restore: the same bytes read back with pread.
void BM_ReadFile(benchmark::State& state) {
  TG_CHECK(CreateDirectories(Dir()).ok());
  const std::vector<Tensor> tensors = Tensors(state.range(0), state.range(1));
  const std::string path = Dir() + "/raw_read";
  int64_t total = 0;
  {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (const Tensor& t : tensors) {
      TG_CHECK(WriteAll(fd, static_cast<const char*>(t.raw_data()), t.TotalBytes(), path).ok());
      total += t.TotalBytes();
    }
    TG_CHECK(SyncAndClose(fd, path).ok());
  }
  for (auto _ : state) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    TG_CHECK(fd >= 0);
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      Tensor out(DT_FLOAT, t.shape());
      char* p = static_cast<char*>(out.raw_data());
      for (int64_t done = 0; done < t.TotalBytes();) {
        const ssize_t n = ::pread(fd, p + done, t.TotalBytes() - done, offset + done);
        TG_CHECK(n > 0);
        done += n;
      }
      offset += t.TotalBytes();
      benchmark::DoNotOptimize(p);
    }
    ::close(fd);
  }
  TG_CHECK(total == state.range(0) * (1 << 20));
  SetBytes(state);
  ::unlink(path.c_str());
}

// A model's worth of variables: 64 MiB in 8 tensors, and 256 MiB in 64.
#define CHECKPOINT_SIZES ->Args({64, 8})->Args({256, 64})->Unit(benchmark::kMillisecond)
BENCHMARK(BM_SaveCheckpoint) CHECKPOINT_SIZES->UseRealTime();
BENCHMARK(BM_WriteAndSync) CHECKPOINT_SIZES->UseRealTime();
BENCHMARK(BM_RestoreCheckpoint) CHECKPOINT_SIZES->UseRealTime();
BENCHMARK(BM_ReadFile) CHECKPOINT_SIZES->UseRealTime();

}  // namespace
}  // namespace tensorgrid

BENCHMARK_MAIN();
