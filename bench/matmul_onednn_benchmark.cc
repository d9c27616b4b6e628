// float MatMul at the MLP's sizes, three ways, each on 1 or 2 threads, in one
// binary with the same compiler flags (docs/PERFORMANCE.md):
//   BM_EigenContraction  Eigen's tensor contraction on a ThreadPoolDevice
//                        (what MatMul ran on more than one thread before)
//   BM_OneDnnSgemm       oneDNN's sgemm (dnnl_sgemm, row-major) on its
//                        OpenMP runtime
//   BM_ParallelSgemm     one-thread dnnl_sgemm calls on blocks of the output,
//                        on a ThreadPoolDevice (kernels/math/sgemm.h: what
//                        kernels/math/matmul_op.cc runs now)
//
//   a [m,k] --.
//             MatMul -> c [m,n]
//   b [k,n] --'
//
// Arguments: size (index into kSizes), threads. FLOPS = 2*m*k*n per call.
#define EIGEN_USE_THREADS

#include <benchmark/benchmark.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "kernels/math/sgemm.h"
#include "kernels/openmp.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace {

struct Size {
  int64_t m, k, n;
};
// A training step's layer 1 (batch 32 and 256) and a square product.
constexpr Size kSizes[] = {{32, 784, 128}, {256, 784, 500}, {1024, 1024, 1024}};

std::vector<float> Filled(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(i % 17) * 0.25f - 2.0f;
  return v;
}

void SetFlops(benchmark::State& state, const Size& s) {
  state.counters["FLOPS"] =
      benchmark::Counter(2.0 * s.m * s.k * s.n, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1000);
}

void BM_EigenContraction(benchmark::State& state) {
  const Size& s = kSizes[state.range(0)];
  Eigen::ThreadPool pool(static_cast<int>(state.range(1)));
  Eigen::ThreadPoolDevice device(&pool, static_cast<int>(state.range(1)));
  std::vector<float> a = Filled(s.m * s.k), b = Filled(s.k * s.n), c(s.m * s.n);
  using Matrix = Eigen::TensorMap<Eigen::Tensor<float, 2, Eigen::RowMajor>>;
  Matrix ma(a.data(), s.m, s.k), mb(b.data(), s.k, s.n), mc(c.data(), s.m, s.n);
  const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims = {
      Eigen::IndexPair<Eigen::DenseIndex>(1, 0)};
  for (auto _ : state) {
    mc.device(device) = ma.contract(mb, dims);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, s);
}

void BM_OneDnnSgemm(benchmark::State& state) {
  const Size& s = kSizes[state.range(0)];
  tensorgrid::SetOpenMpThreads(static_cast<int>(state.range(1)));
  std::vector<float> a = Filled(s.m * s.k), b = Filled(s.k * s.n), c(s.m * s.n);
  for (auto _ : state) {
    if (dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.f, a.data(), s.k, b.data(), s.n, 0.f, c.data(),
                   s.n) != dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
      break;
    }
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, s);
}

void BM_ParallelSgemm(benchmark::State& state) {
  const Size& s = kSizes[state.range(0)];
  Eigen::ThreadPool pool(static_cast<int>(state.range(1)));
  Eigen::ThreadPoolDevice device(&pool, static_cast<int>(state.range(1)));
  std::vector<float> a = Filled(s.m * s.k), b = Filled(s.k * s.n), c(s.m * s.n);
  for (auto _ : state) {
    if (!tensorgrid::math::ParallelSgemm(device, false, false, s.m, s.n, s.k, a.data(), s.k,
                                         b.data(), s.n, c.data(), s.n)
             .ok()) {
      state.SkipWithError("ParallelSgemm failed");
      break;
    }
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, s);
}

// 1 and 2 threads, and 4 and 8 where the machine has 8 cores (the 16-core
// GPU machine: scripts/gpu_run.sh runs the 8-thread rows there).
void Args(benchmark::internal::Benchmark* b) {
  std::vector<int> counts = {1, 2};
  if (std::thread::hardware_concurrency() >= 8) counts.insert(counts.end(), {4, 8});
  for (int threads : counts)
    for (int size = 0; size < 3; ++size) b->Args({size, threads});
}
BENCHMARK(BM_EigenContraction)->Apply(Args)->ArgNames({"size", "threads"})->UseRealTime();
BENCHMARK(BM_OneDnnSgemm)->Apply(Args)->ArgNames({"size", "threads"})->UseRealTime();
BENCHMARK(BM_ParallelSgemm)->Apply(Args)->ArgNames({"size", "threads"})->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
