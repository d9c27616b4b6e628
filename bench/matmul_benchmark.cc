// MatMul 1024x1024 float32: tensorgrid's kernel through a Session against
// Eigen called directly, in the same binary with the same compiler flags.
//
//   a (fed) ---.
//              MatMul -> product (fetched)
//   b (fed) ---'
//
// tensorgrid: a callable (no per-step lookups) on a session whose device has
// intra_op_parallelism_threads = 1 or 2. Eigen: the same Tensor contraction on
// an Eigen::ThreadPoolDevice of 1 or 2 threads, and an Eigen::Matrix product
// (single-threaded: this build has no OpenMP, so setNbThreads has no effect).
// The counter FLOPS is 2*n^3 per iteration over wall time.
#define EIGEN_USE_THREADS

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "Eigen/Dense"
#include "core/framework/attr_value_util.h"
#include "core/public/session.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

constexpr int kN = 1024;

void CheckOk(const absl::Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "setup failed: %s\n", s.ToString().c_str());
    std::abort();
  }
}

void SetFlops(benchmark::State& state) {
  state.counters["FLOPS"] =
      benchmark::Counter(2.0 * kN * kN * kN, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::OneK::kIs1000);
}

Tensor RandomMatrix() {
  Tensor t(DT_FLOAT, TensorShape({kN, kN}));
  float* data = t.data<float>();
  for (int64_t i = 0; i < t.NumElements(); ++i) data[i] = static_cast<float>(i % 17) * 0.25f - 2.0f;
  return t;
}

GraphDef MatMulGraph() {
  GraphDef g;
  for (const char* name : {"a", "b"}) {
    NodeDef p;
    p.set_name(name);
    p.set_op("Placeholder");
    SetAttr(&p, "dtype", DT_FLOAT);
    SetAttr(&p, "shape", PartialTensorShape({kN, kN}));
    *g.add_node() = p;
  }
  NodeDef m;
  m.set_name("product");
  m.set_op("MatMul");
  m.add_input("a");
  m.add_input("b");
  SetAttr(&m, "T", DT_FLOAT);
  *g.add_node() = m;
  return g;
}

void BM_Session_MatMul(benchmark::State& state) {
  SessionOptions options;
  options.config.set_intra_op_parallelism_threads(static_cast<int>(state.range(0)));
  options.config.set_inter_op_parallelism_threads(2);
  auto session = NewSession(options);
  CheckOk(session.status());
  CheckOk((*session)->Create(MatMulGraph()));
  CallableOptions callable;
  callable.add_feed("a");
  callable.add_feed("b");
  callable.add_fetch("product:0");
  auto handle = (*session)->MakeCallable(callable);
  CheckOk(handle.status());
  const std::vector<Tensor> feeds = {RandomMatrix(), RandomMatrix()};
  std::vector<Tensor> out;
  CheckOk((*session)->RunCallable(*handle, feeds, &out, nullptr));  // warm-up
  for (auto _ : state) {
    absl::Status s = (*session)->RunCallable(*handle, feeds, &out, nullptr);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(out.data());
  }
  SetFlops(state);
}

void BM_EigenTensor_MatMul(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  Eigen::ThreadPool pool(threads);
  Eigen::ThreadPoolDevice device(&pool, threads);
  Eigen::Tensor<float, 2, Eigen::RowMajor> a(kN, kN), b(kN, kN), c(kN, kN);
  a.setRandom();
  b.setRandom();
  const Eigen::array<Eigen::IndexPair<Eigen::DenseIndex>, 1> dims = {
      Eigen::IndexPair<Eigen::DenseIndex>(1, 0)};
  c.device(device) = a.contract(b, dims);  // warm-up
  for (auto _ : state) {
    c.device(device) = a.contract(b, dims);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state);
}

void BM_EigenMatrix_MatMul(benchmark::State& state) {
  Eigen::setNbThreads(1);
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Matrix a = Matrix::Random(kN, kN), b = Matrix::Random(kN, kN), c(kN, kN);
  c.noalias() = a * b;  // warm-up
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state);
}

// Arg: intra-op threads.
BENCHMARK(BM_Session_MatMul)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_EigenTensor_MatMul)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_EigenMatrix_MatMul)
    ->ArgName("threads")
    ->Arg(1)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(9)
    ->ReportAggregatesOnly(true);

}  // namespace
}  // namespace tensorgrid

BENCHMARK_MAIN();
