// Each GPU kernel against its CPU kernel on random inputs: element-wise ops
// (broadcasting, empty tensors, scalars), Cast, fills, reductions, ArgMax,
// BiasAdd, Softmax and the cross-entropies, errors included (same code and
// message). Skips with "no GPU" where CUDA sees none.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "kernels/gpu/gpu_kernel_testutil.h"

namespace tensorgrid {
namespace gpu {
namespace {

using Shapes = std::vector<std::pair<TensorShape, TensorShape>>;

// Pairs that broadcast, and one that does not (checked for the same error).
const Shapes& BinaryShapes() {
  static const Shapes* shapes = new Shapes{
      {{}, {}},           {{3}, {}},        {{}, {4}},
      {{2, 3}, {2, 3}},   {{2, 3, 4}, {4}}, {{8, 1, 5}, {1, 7, 5}},
      {{0, 3}, {1, 3}},   {{5, 1}, {1, 0}}, {{2, 1, 3, 1, 2}, {1, 4, 1, 5, 1}},
      {{1000, 37}, {37}}, {{2, 3}, {3, 2}},
  };
  return *shapes;
}

NodeDefBuilder Node(const std::string& op, DataType t) {
  NodeDefBuilder b("n", op);
  b.Attr("T", t);
  return b;
}

TEST_F(GpuKernelTest, BinaryFloatOpsBroadcastLikeTheCpu) {
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum"}) {
    for (const auto& [x, y] : BinaryShapes()) {
      // RealDiv: divisors kept away from 0.
      ExpectSameOutputs(Node(op, DT_FLOAT), {Random<float>(x), Random<float>(y, 0.5, 2)});
    }
  }
}

TEST_F(GpuKernelTest, BinaryOpsOfOtherTypes) {
  for (const char* op : {"Add", "Sub", "Mul", "Maximum", "Minimum"}) {
    for (const auto& [x, y] : BinaryShapes()) {
      ExpectSameOutputs(Node(op, DT_INT64),
                        {Random<int64_t>(x, -50, 50), Random<int64_t>(y, -50, 50)});
      ExpectSameOutputs(Node(op, DT_DOUBLE), {Random<double>(x), Random<double>(y)}, 1e-12);
    }
  }
}

TEST_F(GpuKernelTest, MaximumAndMinimumPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (const char* op : {"Maximum", "Minimum"}) {
    ExpectSameOutputs(Node(op, DT_FLOAT), {Tensor::FromVector<float>({nan, 1, 2, nan}, {4}),
                                           Tensor::FromVector<float>({1, nan, 3, nan}, {4})});
  }
}

TEST_F(GpuKernelTest, EqualBroadcastsAndHonoursIncompatibleShapeError) {
  for (const auto& [x, y] : BinaryShapes()) {
    // Few distinct values, so that many elements are equal.
    Tensor fx(DT_FLOAT, x), fy(DT_FLOAT, y);
    Tensor ix = Random<int64_t>(x, 0, 3), iy = Random<int64_t>(y, 0, 3);
    for (int64_t i = 0; i < fx.NumElements(); ++i) fx.data<float>()[i] = ix.data<int64_t>()[i];
    for (int64_t i = 0; i < fy.NumElements(); ++i) fy.data<float>()[i] = iy.data<int64_t>()[i];
    ExpectSameOutputs(Node("Equal", DT_FLOAT), {fx, fy});
    ExpectSameOutputs(Node("Equal", DT_INT64), {ix, iy});
    ExpectSameOutputs(Node("Equal", DT_BOOL), {Random<bool>(x), Random<bool>(y)});
  }
  NodeDefBuilder lenient = Node("Equal", DT_FLOAT);
  lenient.Attr("incompatible_shape_error", false);
  ExpectSameOutputs(lenient, {Random<float>({2, 3}), Random<float>({3, 2})});
}

TEST_F(GpuKernelTest, UnaryOps) {
  const std::vector<TensorShape> shapes = {{}, {0}, {7}, {3, 4, 5}, {100000}};
  for (const TensorShape& s : shapes) {
    for (const char* op : {"Neg", "Square", "Exp", "Tanh", "Sigmoid", "Relu"}) {
      ExpectSameOutputs(Node(op, DT_FLOAT), {Random<float>(s)});
      ExpectSameOutputs(Node(op, DT_DOUBLE), {Random<double>(s)}, 1e-12);
    }
    for (const char* op : {"Sqrt", "Rsqrt", "Log", "Reciprocal"}) {
      ExpectSameOutputs(Node(op, DT_FLOAT), {Random<float>(s, 0.01, 10)});
    }
    ExpectSameOutputs(Node("Relu6", DT_FLOAT), {Random<float>(s, -3, 9)});  // both clamps
    for (const char* op : {"Neg", "Square"}) {
      ExpectSameOutputs(Node(op, DT_INT64), {Random<int64_t>(s, -1000, 1000)});
    }
  }
}

TEST_F(GpuKernelTest, GradientHelpers) {
  for (const TensorShape& s : std::vector<TensorShape>{{}, {0}, {4, 5}, {3000}}) {
    ExpectSameOutputs(Node("ReluGrad", DT_FLOAT), {Random<float>(s), Random<float>(s)});
    ExpectSameOutputs(Node("Relu6Grad", DT_FLOAT), {Random<float>(s), Random<float>(s, -3, 9)});
    ExpectSameOutputs(Node("SigmoidGrad", DT_FLOAT), {Random<float>(s, 0, 1), Random<float>(s)});
    ExpectSameOutputs(Node("TanhGrad", DT_FLOAT), {Random<float>(s, -1, 1), Random<float>(s)});
    ExpectSameOutputs(Node("SqrtGrad", DT_FLOAT), {Random<float>(s, 0.1, 3), Random<float>(s)});
  }
  for (const char* op : {"ReluGrad", "Relu6Grad", "SigmoidGrad", "TanhGrad", "SqrtGrad"}) {
    ExpectSameOutputs(Node(op, DT_FLOAT), {Random<float>({2, 3}), Random<float>({3, 2})});
  }
}

TEST_F(GpuKernelTest, AddN) {
  for (int n : {1, 2, 5}) {
    NodeDefBuilder add_n = Node("AddN", DT_FLOAT);
    add_n.Attr("N", n);
    std::vector<Tensor> inputs;
    for (int i = 0; i < n; ++i) inputs.push_back(Random<float>({17, 3}));
    ExpectSameOutputs(add_n, inputs);
  }
  NodeDefBuilder add_n = Node("AddN", DT_FLOAT);
  add_n.Attr("N", 2);
  ExpectSameOutputs(add_n, {Random<float>({2}), Random<float>({3})});
}

TEST_F(GpuKernelTest, Cast) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor floats =
      Tensor::FromVector<float>({0, -0.5f, 1.5f, -2.7f, 3e9f, -3e9f, 1e20f, nan}, {8});
  struct Case {
    Tensor in;
    DataType dst;
  };
  const std::vector<Case> cases = {
      {floats, DT_INT32},
      {floats, DT_INT64},
      {floats, DT_BOOL},
      {floats, DT_DOUBLE},
      {Random<int64_t>({5, 3}, -1e6, 1e6), DT_FLOAT},
      {Random<int32_t>({4}, -9, 9), DT_INT64},
      {Random<bool>({6}), DT_FLOAT},
      {Random<bool>({0}), DT_INT32},
      {Random<double>({9}), DT_FLOAT},
  };
  for (const Case& c : cases) {
    NodeDefBuilder cast("n", "Cast");
    cast.Attr("SrcT", c.in.dtype()).Attr("DstT", c.dst);
    ExpectSameOutputs(cast, {c.in}, 0);
  }
  NodeDefBuilder truncating("n", "Cast");
  truncating.Attr("SrcT", DT_DOUBLE).Attr("DstT", DT_FLOAT).Attr("Truncate", true);
  ExpectSameOutputs(truncating, {Random<double>({50})}, 0);
}

TEST_F(GpuKernelTest, FillsAndConst) {
  NodeDefBuilder fill = Node("Fill", DT_FLOAT);
  ExpectSameOutputs(fill, {Tensor::FromVector<int32_t>({2, 3}, {2}), Tensor::Scalar<float>(1.5f)});
  ExpectSameOutputs(fill, {Tensor::FromVector<int32_t>({0, 3}, {2}), Tensor::Scalar<float>(2)});
  ExpectSameOutputs(fill, {Tensor(DT_INT32, TensorShape({0})), Tensor::Scalar<float>(-1)});
  ExpectSameOutputs(fill, {Tensor::Scalar<int32_t>(3), Tensor::Scalar<float>(1)});  // error
  ExpectSameOutputs(fill, {Tensor::FromVector<int32_t>({-1}, {1}), Tensor::Scalar<float>(1)});
  NodeDefBuilder fill64 = Node("Fill", DT_INT64);
  fill64.Attr("index_type", DT_INT64);
  ExpectSameOutputs(fill64, {Tensor::FromVector<int64_t>({4, 1}, {2}), Tensor::Scalar<int64_t>(7)});
  for (const char* op : {"ZerosLike", "OnesLike"}) {
    ExpectSameOutputs(Node(op, DT_FLOAT), {Random<float>({3, 4})});
    ExpectSameOutputs(Node(op, DT_INT64), {Random<int64_t>({0, 2})});
    ExpectSameOutputs(Node(op, DT_BOOL), {Random<bool>({5})});
  }
  for (const Tensor& value : {Random<float>({2, 3}), Random<float>({}),
                              Tensor::FromVector<int32_t>({1, 2, 3}, {3}), Random<int64_t>({4})}) {
    NodeDefBuilder c("n", "Const");
    c.Attr("dtype", value.dtype()).Attr("value", value);
    ExpectSameOutputs(c, {}, 0);
  }
}

Tensor Axes(std::initializer_list<int32_t> axes) {
  return Tensor::FromVector<int32_t>(axes, {static_cast<int64_t>(axes.size())});
}

TEST_F(GpuKernelTest, ReductionsOverAxes) {
  struct Case {
    TensorShape shape;
    Tensor axes;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, Axes({0})},
      {{2, 3, 4}, Axes({1})},
      {{2, 3, 4}, Axes({2})},
      {{2, 3, 4}, Axes({0, 2})},
      {{2, 3, 4}, Axes({-1, 0})},
      {{2, 3, 4}, Axes({})},
      {{2, 3, 4}, Axes({0, 1, 2})},
      {{}, Axes({})},
      {{5}, Axes({0})},
      {{0, 3}, Axes({0})},
      {{0, 3}, Axes({1})},
      {{1, 3, 1}, Axes({0, 2})},
      {{300, 500}, Axes({0})},
      {{32, 10}, Axes({1})},
      {{100000}, Axes({0})},
      {{2, 3}, Tensor::Scalar<int64_t>(1)},
      {{2, 3}, Axes({2})},
  };
  for (const char* op : {"Sum", "Mean", "Max"}) {
    for (bool keep_dims : {false, true}) {
      for (const Case& c : cases) {
        NodeDefBuilder n = Node(op, DT_FLOAT);
        n.Attr("keep_dims", keep_dims).Attr("Tidx", c.axes.dtype());
        // Positive values: float sums in another order differ by rounding
        // only, never by the cancellation of a sum near 0.
        ExpectSameOutputs(n, {Random<float>(c.shape, 0, 2), c.axes}, 1e-4);
        NodeDefBuilder n64 = Node(op, DT_INT64);
        n64.Attr("keep_dims", keep_dims).Attr("Tidx", c.axes.dtype());
        ExpectSameOutputs(n64, {Random<int64_t>(c.shape, -100, 100), c.axes});
      }
    }
  }
}

TEST_F(GpuKernelTest, ArgMax) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (DataType out : {DT_INT64, DT_INT32}) {
    NodeDefBuilder n = Node("ArgMax", DT_FLOAT);
    n.Attr("output_type", out);
    ExpectSameOutputs(n, {Random<float>({32, 10}), Tensor::Scalar<int32_t>(1)});
    ExpectSameOutputs(n, {Random<float>({4, 5, 6}), Tensor::Scalar<int32_t>(1)});
    ExpectSameOutputs(n, {Random<float>({4, 5, 6}), Tensor::Scalar<int32_t>(0)});
    ExpectSameOutputs(n, {Random<float>({4, 5, 6}), Tensor::Scalar<int32_t>(-1)});
    ExpectSameOutputs(n, {Random<float>({7}), Tensor::Scalar<int32_t>(0)});
    ExpectSameOutputs(
        n, {Tensor::FromVector<float>({1, 3, 3, nan, 2, nan}, {2, 3}), Tensor::Scalar<int32_t>(1)});
    ExpectSameOutputs(n, {Random<float>({0, 3}), Tensor::Scalar<int32_t>(1)});
    ExpectSameOutputs(n, {Random<float>({3, 0}), Tensor::Scalar<int32_t>(1)});  // error
    ExpectSameOutputs(n, {Random<float>({3, 2}), Tensor::Scalar<int32_t>(2)});  // error
  }
  NodeDefBuilder n = Node("ArgMax", DT_INT64);
  ExpectSameOutputs(n, {Random<int64_t>({6, 4}, 0, 3), Tensor::Scalar<int64_t>(1)});
}

TEST_F(GpuKernelTest, BiasAddAndItsGradient) {
  for (const char* format : {"NHWC", "NCHW"}) {
    for (const TensorShape& s : std::vector<TensorShape>{{32, 500}, {2, 3, 4, 5}, {0, 4}, {3, 4}}) {
      const int64_t channels =
          std::string(format) == "NHWC" ? s.dim_size(s.dims() - 1) : s.dim_size(1);
      NodeDefBuilder add = Node("BiasAdd", DT_FLOAT);
      add.Attr("data_format", std::string(format));
      ExpectSameOutputs(add, {Random<float>(s), Random<float>({channels})});
      NodeDefBuilder grad = Node("BiasAddGrad", DT_FLOAT);
      grad.Attr("data_format", std::string(format));
      ExpectSameOutputs(grad, {Random<float>(s)}, 1e-4);
    }
  }
  ExpectSameOutputs(Node("BiasAdd", DT_FLOAT), {Random<float>({3}), Random<float>({3})});
  ExpectSameOutputs(Node("BiasAdd", DT_FLOAT), {Random<float>({3, 4}), Random<float>({3})});
  ExpectSameOutputs(Node("BiasAddGrad", DT_FLOAT), {Random<float>({3})});
}

TEST_F(GpuKernelTest, Softmax) {
  for (const TensorShape& s :
       std::vector<TensorShape>{{3, 10}, {7}, {2, 3, 5}, {0, 4}, {4, 0}, {2, 3000}, {}}) {
    ExpectSameOutputs(Node("Softmax", DT_FLOAT), {Random<float>(s, -10, 10)});
  }
}

TEST_F(GpuKernelTest, SparseSoftmaxCrossEntropy) {
  NodeDefBuilder xent = Node("SparseSoftmaxCrossEntropyWithLogits", DT_FLOAT);
  for (DataType labels : {DT_INT64, DT_INT32}) {
    xent.Attr("Tlabels", labels);
    auto label_tensor = [&](std::vector<int64_t> v) {
      Tensor t(labels, TensorShape({static_cast<int64_t>(v.size())}));
      for (size_t i = 0; i < v.size(); ++i) {
        if (labels == DT_INT64)
          t.data<int64_t>()[i] = v[i];
        else
          t.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
      }
      return t;
    };
    ExpectSameOutputs(xent, {Random<float>({4, 10}, -5, 5), label_tensor({0, 9, 3, 3})});
    std::vector<int64_t> many(256);
    for (size_t i = 0; i < many.size(); ++i) many[i] = (i * 7) % 10;
    ExpectSameOutputs(xent, {Random<float>({256, 10}, -5, 5), label_tensor(many)});
    ExpectSameOutputs(xent, {Random<float>({0, 10}), Tensor(labels, TensorShape({0}))});
    // Out of range: the CPU kernel's InvalidArgument, naming the first bad row.
    ExpectSameOutputs(xent, {Random<float>({4, 10}), label_tensor({0, 10, -1, 3})});
    ExpectSameOutputs(xent, {Random<float>({3, 10}), label_tensor({0, 1, -1})});
    ExpectSameOutputs(xent, {Random<float>({3, 10}), label_tensor({0, 1})});
    ExpectSameOutputs(xent, {Random<float>({3, 0}), label_tensor({0, 0, 0})});
  }
}

TEST_F(GpuKernelTest, SoftmaxCrossEntropy) {
  NodeDefBuilder xent = Node("SoftmaxCrossEntropyWithLogits", DT_FLOAT);
  struct Case {
    TensorShape logits, labels;
  };
  for (const Case& c : std::vector<Case>{{{4, 5}, {4, 5}},
                                         {{4, 5}, {1, 5}},
                                         {{1, 5}, {3, 5}},
                                         {{4, 1}, {4, 6}},
                                         {{0, 5}, {0, 5}},
                                         {{3, 0}, {3, 0}},
                                         {{4, 5}, {3, 5}},
                                         {{4}, {4}}}) {
    ExpectSameOutputs(xent, {Random<float>(c.logits, -5, 5), Random<float>(c.labels, 0, 1)}, 1e-4);
  }
}

NodeDefBuilder BatchNorm(const std::string& op, const char* format, bool training,
                         float factor = 1.f) {
  NodeDefBuilder b("bn", op);
  b.Attr("T", DT_FLOAT).Attr("U", DT_FLOAT).Attr("epsilon", 1e-3f);
  b.Attr("data_format", format).Attr("is_training", training);
  if (op == "FusedBatchNormV3") b.Attr("exponential_avg_factor", factor);
  return b;
}

TEST_F(GpuKernelTest, FusedBatchNormBothFormatsBothModes) {
  for (const char* format : {"NHWC", "NCHW"}) {
    const bool nhwc = std::string(format) == "NHWC";
    // MobileNetV2-like and odd sizes; 70 channels straddle the kernel's blocks of 32.
    for (const TensorShape& s : std::vector<TensorShape>{{4, 5, 6, 3}, {8, 7, 7, 70}}) {
      const int64_t c = s.dim_size(3);
      const TensorShape x_shape =
          nhwc ? s : TensorShape({s.dim_size(0), c, s.dim_size(1), s.dim_size(2)});
      const Tensor x = Random<float>(x_shape, -3, 5);
      const Tensor scale = Random<float>({c}), offset = Random<float>({c});
      const Tensor mean = Random<float>({c}), variance = Random<float>({c}, 0.5, 2);
      for (bool training : {true, false}) {
        for (float factor : {1.f, 0.3f}) {
          SCOPED_TRACE(absl::StrCat(format, " ", s.DebugString(), training ? " training" : "",
                                    " factor ", factor));
          ExpectSameOutputs(BatchNorm("FusedBatchNormV3", format, training, factor),
                            {x, scale, offset, mean, variance}, 1e-4);
        }
        // The gradient, with the statistics the forward pass returns.
        const Tensor dy = Random<float>(x_shape);
        ExpectSameOutputs(BatchNorm("FusedBatchNormGradV3", format, training),
                          {dy, x, scale, mean, variance, Tensor(DT_FLOAT, TensorShape({0}))}, 1e-3);
      }
    }
  }
}

TEST_F(GpuKernelTest, FusedBatchNormEmptyBatchAndBadShapes) {
  const Tensor v = Random<float>({3});
  const Tensor empty_x = Random<float>({0, 4, 4, 3});
  ExpectSameOutputs(BatchNorm("FusedBatchNormV3", "NHWC", true), {empty_x, v, v, v, v});
  ExpectSameOutputs(BatchNorm("FusedBatchNormGradV3", "NHWC", true),
                    {empty_x, empty_x, v, v, v, Tensor(DT_FLOAT, TensorShape({0}))});
  // Moving statistics may be empty when training with factor 1.
  const Tensor none(DT_FLOAT, TensorShape({0}));
  ExpectSameOutputs(BatchNorm("FusedBatchNormV3", "NHWC", true),
                    {Random<float>({2, 3, 3, 3}), v, v, none, none});
  // A scale of the wrong length, and x of the wrong rank.
  ExpectSameOutputs(BatchNorm("FusedBatchNormV3", "NHWC", true),
                    {Random<float>({2, 3, 3, 3}), Random<float>({4}), v, v, v});
  ExpectSameOutputs(BatchNorm("FusedBatchNormV3", "NHWC", false),
                    {Random<float>({2, 3, 3}), v, v, v, v});
}

NodeDefBuilder Pool(const std::string& op, const char* format, const char* padding, int64_t k,
                    int64_t stride) {
  const bool nhwc = std::string(format) == "NHWC";
  auto spatial = [nhwc](int64_t v) {
    return nhwc ? std::vector<int64_t>{1, v, v, 1} : std::vector<int64_t>{1, 1, v, v};
  };
  NodeDefBuilder b("pool", op);
  b.Attr("T", DT_FLOAT).Attr("ksize", spatial(k)).Attr("strides", spatial(stride));
  b.Attr("padding", padding).Attr("data_format", format);
  return b;
}

TEST_F(GpuKernelTest, PoolingAndItsGradients) {
  struct Case {
    const char* padding;
    int64_t k, stride, size;
  };
  // SAME 3x3 stride 2 on 8 rows pads only after; VALID 2x2; SAME 3x3 stride 1.
  for (const Case& c : {Case{"SAME", 3, 2, 8}, Case{"VALID", 2, 2, 7}, Case{"SAME", 3, 1, 5}}) {
    for (const char* format : {"NHWC", "NCHW"}) {
      SCOPED_TRACE(absl::StrCat(format, " ", c.padding, " ", c.k, "x", c.k, " stride ", c.stride));
      const bool nhwc = std::string(format) == "NHWC";
      const TensorShape shape =
          nhwc ? TensorShape({2, c.size, c.size, 5}) : TensorShape({2, 5, c.size, c.size});
      const Tensor x = Random<float>(shape);
      for (const char* op : {"MaxPool", "AvgPool"}) {
        ExpectSameOutputs(Pool(op, format, c.padding, c.k, c.stride), {x});
      }
      const KernelRun pooled =
          Run(cpu(), Pool("MaxPool", format, c.padding, c.k, c.stride), std::vector<Tensor>{x});
      ASSERT_TRUE(pooled.status.ok()) << pooled.status;
      const Tensor grad = Random<float>(pooled.outputs[0].shape());
      ExpectSameOutputs(Pool("MaxPoolGrad", format, c.padding, c.k, c.stride),
                        {x, pooled.outputs[0], grad});
      const Tensor orig_shape = Int32Vector(shape.dim_sizes());
      ExpectSameOutputs(Pool("AvgPoolGrad", format, c.padding, c.k, c.stride), {orig_shape, grad});
    }
  }
  // The CPU's errors: a 3-D input, a gradient of the wrong shape.
  ExpectSameOutputs(Pool("MaxPool", "NHWC", "VALID", 2, 2), {Random<float>({4, 4, 3})});
  const Tensor x = Random<float>({1, 4, 4, 2});
  ExpectSameOutputs(Pool("MaxPoolGrad", "NHWC", "VALID", 2, 2),
                    {x, Random<float>({1, 2, 2, 2}), Random<float>({1, 3, 3, 2})});
}

TEST_F(GpuKernelTest, BroadcastTo) {
  auto shape = [](std::initializer_list<int32_t> dims) { return Axes(dims); };
  struct Case {
    TensorShape input;
    Tensor shape;
  };
  for (const Case& c : std::vector<Case>{{{3}, shape({2, 3})},
                                         {{1}, shape({4, 1, 5})},
                                         {{}, shape({2, 2})},
                                         {{2, 1, 3}, shape({5, 2, 4, 3})},
                                         {{1, 3}, shape({0, 3})},
                                         {{2, 3}, shape({2, 3})},
                                         {{2, 3}, shape({3, 3})},  // error
                                         {{2, 3}, shape({3})},     // error
                                         {{2}, Axes({})}}) {       // error
    NodeDefBuilder b = Node("BroadcastTo", DT_FLOAT);
    ExpectSameOutputs(b, {Random<float>(c.input), c.shape}, 0);
    NodeDefBuilder b64 = Node("BroadcastTo", DT_INT64);
    ExpectSameOutputs(b64, {Random<int64_t>(c.input, -9, 9), c.shape}, 0);
  }
}

// int32 arithmetic on the GPU device runs on the host (HostMemory
// everywhere), and still matches.
TEST_F(GpuKernelTest, Int32OpsStayOnTheHost) {
  for (const char* op : {"Add", "AddV2", "Sub", "Mul", "Maximum", "Minimum", "Equal"}) {
    for (const auto& [x, y] : BinaryShapes()) {
      ExpectSameOutputs(Node(op, DT_INT32), {Random<int32_t>(x, -9, 9), Random<int32_t>(y, -9, 9)});
    }
  }
  ExpectSameOutputs(Node("RealDiv", DT_INT32),
                    {Random<int32_t>({4}, 1, 9), Random<int32_t>({4}, 1, 9)});
  ExpectSameOutputs(Node("RealDiv", DT_INT32),
                    {Random<int32_t>({4}, 1, 9), Tensor::FromVector<int32_t>({1, 0, 2, 3}, {4})});
  ExpectSameOutputs(Node("Neg", DT_INT32), {Random<int32_t>({6}, -9, 9)});
  ExpectSameOutputs(Node("Square", DT_INT32), {Random<int32_t>({6}, -9, 9)});
}

TEST_F(GpuKernelTest, TransposeAndConcat) {
  struct Perm {
    TensorShape shape;
    Tensor perm;
  };
  for (const Perm& c : std::vector<Perm>{{{2, 3}, Axes({1, 0})},
                                         {{2, 3, 4}, Axes({2, 0, 1})},
                                         {{2, 1, 4, 3}, Axes({3, 1, 0, 2})},
                                         {{500, 784}, Axes({1, 0})},
                                         {{0, 3}, Axes({1, 0})},
                                         {{3}, Axes({0})},
                                         {{2, 3}, Axes({0, 0})},  // error
                                         {{2, 3}, Axes({0})}}) {  // error
    ExpectSameOutputs(Node("Transpose", DT_FLOAT), {Random<float>(c.shape), c.perm}, 0);
    ExpectSameOutputs(Node("Transpose", DT_BOOL), {Random<bool>(c.shape), c.perm}, 0);
  }
  struct Concat {
    std::vector<TensorShape> shapes;
    int32_t axis;
  };
  for (const Concat& c : std::vector<Concat>{{{{2, 3}, {2, 5}}, 1},
                                             {{{2, 3}, {4, 3}, {1, 3}}, 0},
                                             {{{2, 0, 3}, {2, 4, 3}}, -2},
                                             {{{0, 3}, {0, 3}}, 1},
                                             {{{2, 3}, {3, 3}}, 1},  // error
                                             {{{2, 3}, {2, 3}}, 2},  // error
                                             {{{}, {}}, 0}}) {       // error
    NodeDefBuilder concat = Node("ConcatV2", DT_FLOAT);
    concat.Attr("N", static_cast<int>(c.shapes.size()));
    std::vector<Tensor> inputs;
    for (const TensorShape& s : c.shapes) inputs.push_back(Random<float>(s));
    inputs.push_back(Tensor::Scalar<int32_t>(c.axis));
    ExpectSameOutputs(concat, inputs, 0);
  }
}

// Seeded like the CPU kernels, on the CPU's stream layout: uniform values
// match bit for bit, normals to within the device's rounding.
TEST_F(GpuKernelTest, RandomOpsFollowTheCpuStream) {
  struct Case {
    const char* op;
    double tolerance;
  };
  for (const Case& c : std::vector<Case>{
           {"RandomUniform", 0}, {"RandomStandardNormal", 1e-5}, {"TruncatedNormal", 1e-5}}) {
    for (DataType dtype : {DT_FLOAT, DT_DOUBLE}) {
      for (const Tensor& shape : {Axes({}), Axes({0}), Axes({7}), Axes({3, 5}), Axes({784, 500})}) {
        // A truncated normal within rounding of the 2-stddev edge may be kept
        // on one device and redrawn on the other: few values keep that unlikely.
        const bool large = shape.NumElements() == 2 && shape.data<int32_t>()[0] == 784;
        if (std::string(c.op) == "TruncatedNormal" && large) continue;
        NodeDefBuilder random("r", c.op);
        random.Attr("dtype", dtype)
            .Attr("T", DT_INT32)
            .Attr("seed", int64_t{7})
            .Attr("seed2", int64_t{3});
        ExpectSameOutputs(random, {shape}, c.tolerance);
      }
    }
    NodeDefBuilder random("r", c.op);
    random.Attr("dtype", DT_FLOAT).Attr("T", DT_INT32);
    ExpectSameOutputs(random, {Tensor::Scalar<int32_t>(3)});  // error: shape is not a vector
  }
}

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
