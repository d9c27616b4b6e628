// Pooling and batch norm at MobileNetV2-like shapes (batch 32, small images),
// forward and gradient ops each on its own, through a local session with
// intra_op_parallelism_threads = --threads. Prints one line per case,
//
//   <case>\t<median ms>
//
// with the same case names as bench/pool_bn_torch.py, which times PyTorch's
// CPU ops; bench/run_pool_bn.sh puts the two side by side.
//
//   x (fed) --> MaxPool --> y (fetched)        one case: one op, fed inputs
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"

namespace tensorgrid {
namespace {

struct Shape4 {
  int64_t n, h, w, c;
  std::string Name() const { return absl::StrCat(n, "x", h, "x", w, "x", c); }
};

void CheckOk(const absl::Status& s, const std::string& what) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s: %s\n", what.c_str(), s.ToString().c_str());
    std::exit(1);
  }
}

Tensor Filled(const TensorShape& shape, float lo, float hi) {
  Tensor t(DT_FLOAT, shape);
  for (int64_t i = 0; i < t.NumElements(); ++i) {
    t.data<float>()[i] = lo + (hi - lo) * static_cast<float>((i * 7919) % 1000) / 1000.f;
  }
  return t;
}

TensorShape Dims(const Shape4& s, const std::string& format) {
  return format == "NHWC" ? TensorShape({s.n, s.h, s.w, s.c}) : TensorShape({s.n, s.c, s.h, s.w});
}

// Builds a graph, runs `fetch` `iters` times per repetition and returns the
// median over `reps` repetitions, in ms per run.
using Builder = std::function<Output(const Scope&, ClientSession::FeedType*)>;

double TimeCase(const Builder& build, int threads, int reps, int iters) {
  Scope root = Scope::NewRootScope();
  ClientSession::FeedType feeds;
  Output fetch = build(root, &feeds);
  CheckOk(root.status(), "building");
  SessionOptions options;
  options.config.set_intra_op_parallelism_threads(threads);
  options.config.set_inter_op_parallelism_threads(1);
  ClientSession session(root, options);
  std::vector<Tensor> out;
  for (int i = 0; i < 3; ++i) CheckOk(session.Run(feeds, {fetch}, &out), "warm-up");
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) CheckOk(session.Run(feeds, {fetch}, &out), "run");
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    ms.push_back(took.count() / iters);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

Output Fed(const Scope& s, ClientSession::FeedType* feeds, Tensor value) {
  auto p = ops::Placeholder(s, value.dtype());
  feeds->emplace(p, Input::Initializer(value));
  return p;
}

std::vector<int64_t> Window(int64_t k, const std::string& format) {
  return format == "NHWC" ? std::vector<int64_t>{1, k, k, 1} : std::vector<int64_t>{1, 1, k, k};
}

// Pooling with a k x k window moved k or 2 at a time.
void AddPoolCases(std::vector<std::pair<std::string, Builder>>* cases, const std::string& kind,
                  const Shape4& s, int64_t k, int64_t stride, const std::string& padding,
                  const std::string& format) {
  const std::string name = absl::StrCat(kind, k, "x", k, "s", stride, "_", padding, " ", s.Name(),
                                        " ", format);
  const auto ksize = Window(k, format), strides = Window(stride, format);
  cases->emplace_back(name + " fwd", [=](const Scope& r, ClientSession::FeedType* f) -> Output {
    auto x = Fed(r, f, Filled(Dims(s, format), -1, 1));
    if (kind == "max") {
      return ops::MaxPool(r, x, ksize, strides, padding, ops::MaxPool::DataFormat(format));
    }
    return ops::AvgPool(r, x, ksize, strides, padding, ops::AvgPool::DataFormat(format));
  });
  cases->emplace_back(name + " bwd", [=](const Scope& r, ClientSession::FeedType* f) -> Output {
    auto x = Fed(r, f, Filled(Dims(s, format), -1, 1));
    if (kind == "max") {
      // orig_output and grad fed as computed once by a forward MaxPool.
      Scope pre = Scope::NewRootScope();
      auto px = ops::Placeholder(pre, DT_FLOAT);
      auto py = ops::MaxPool(pre, px, ksize, strides, padding, ops::MaxPool::DataFormat(format));
      ClientSession sess(pre);
      std::vector<Tensor> out;
      CheckOk(sess.Run({{px, Filled(Dims(s, format), -1, 1)}}, {py}, &out), "max forward");
      auto y = Fed(r, f, out[0]);
      auto g = Fed(r, f, Filled(out[0].shape(), -1, 1));
      return ops::MaxPoolGrad(r, x, y, g, ksize, strides, padding,
                              ops::MaxPoolGrad::DataFormat(format));
    }
    Scope pre = Scope::NewRootScope();
    auto px = ops::Placeholder(pre, DT_FLOAT);
    auto py = ops::AvgPool(pre, px, ksize, strides, padding, ops::AvgPool::DataFormat(format));
    ClientSession sess(pre);
    std::vector<Tensor> out;
    CheckOk(sess.Run({{px, Filled(Dims(s, format), -1, 1)}}, {py}, &out), "avg forward");
    auto shape = ops::Shape(r, x);
    auto g = Fed(r, f, Filled(out[0].shape(), -1, 1));
    return ops::AvgPoolGrad(r, shape, g, ksize, strides, padding,
                            ops::AvgPoolGrad::DataFormat(format));
  });
}

void AddBatchNormCases(std::vector<std::pair<std::string, Builder>>* cases, const Shape4& s,
                       const std::string& format, bool training) {
  const std::string name =
      absl::StrCat("bn_", training ? "train " : "infer ", s.Name(), " ", format);
  auto vec = [&](float lo, float hi) { return Filled(TensorShape({s.c}), lo, hi); };
  const Tensor scale = vec(0.5, 1.5), offset = vec(-0.5, 0.5), mean = vec(-0.1, 0.1),
               var = vec(0.5, 1.5);
  const auto attrs = ops::FusedBatchNormV3::DataFormat(format)
                         .IsTraining(training)
                         .Epsilon(1e-3f)
                         .ExponentialAvgFactor(training ? 0.01f : 1.f);
  cases->emplace_back(name + " fwd", [=](const Scope& r, ClientSession::FeedType* f) -> Output {
    return ops::FusedBatchNormV3(r, Fed(r, f, Filled(Dims(s, format), -2, 2)), Fed(r, f, scale),
                                 Fed(r, f, offset), Fed(r, f, mean), Fed(r, f, var), attrs)
        .y;
  });
  if (!training) return;
  cases->emplace_back(name + " bwd", [=](const Scope& r, ClientSession::FeedType* f) -> Output {
    return ops::FusedBatchNormGradV3(r, Fed(r, f, Filled(Dims(s, format), -1, 1)),
                                     Fed(r, f, Filled(Dims(s, format), -2, 2)), Fed(r, f, scale),
                                     Fed(r, f, mean), Fed(r, f, var),
                                     Fed(r, f, Tensor(DT_FLOAT, {0})),
                                     ops::FusedBatchNormGradV3::DataFormat(format).Epsilon(1e-3f))
        .x_backprop;
  });
}

std::vector<std::pair<std::string, Builder>> Cases() {
  std::vector<std::pair<std::string, Builder>> cases;
  for (const std::string format : {"NHWC", "NCHW"}) {
    AddPoolCases(&cases, "max", {32, 49, 49, 32}, 3, 2, "SAME", format);
    AddPoolCases(&cases, "avg", {32, 24, 24, 96}, 2, 2, "VALID", format);
    AddPoolCases(&cases, "avg", {32, 6, 6, 320}, 6, 6, "VALID", format);  // global
    AddBatchNormCases(&cases, {32, 48, 48, 32}, format, true);
    AddBatchNormCases(&cases, {32, 24, 24, 96}, format, true);
    AddBatchNormCases(&cases, {32, 12, 12, 192}, format, true);
    AddBatchNormCases(&cases, {32, 24, 24, 96}, format, false);
  }
  return cases;
}

}  // namespace
}  // namespace tensorgrid

int main(int argc, char** argv) {
  int threads = 2, reps = 7, iters = 10;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--threads=", 0) == 0) threads = std::atoi(arg.c_str() + 10);
    if (arg.rfind("--reps=", 0) == 0) reps = std::atoi(arg.c_str() + 7);
    if (arg.rfind("--iters=", 0) == 0) iters = std::atoi(arg.c_str() + 8);
  }
  for (const auto& [name, build] : tensorgrid::Cases()) {
    std::printf("%s\t%.4f\n", name.c_str(), tensorgrid::TimeCase(build, threads, reps, iters));
    std::fflush(stdout);
  }
  return 0;
}
