// MaxPool, AvgPool and AvgPoolGrad on the CPU through oneDNN's pooling
// primitives, cached per shape (float); MaxPoolGrad on loops
// (max_pool_grad.h says why).
//
// oneDNN takes both data formats as memory layouts (nhwc, nchw), so no
// transposes happen here. AvgPool excludes padding from each window's count.
#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "core/util/pool_geometry.h"
#include "kernels/index_values.h"
#include "kernels/nn/max_pool_grad.h"
#include "kernels/nn/onednn.h"
#include "kernels/nn/pool_args.h"

namespace tensorgrid {
namespace nn {
namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;

// The cache key: thread count, algorithm and every size that shapes the
// primitive.
std::string PoolKey(int threads, algorithm alg, const Pool2DGeometry& g) {
  return absl::StrCat(threads, "/", static_cast<int>(alg), "/", static_cast<int>(g.format), "/",
                      g.batch, ",", g.channels, "/", g.rows.input, ",", g.rows.window, ",",
                      g.rows.stride, ",", g.rows.pad_before, ",", g.rows.pad_after, "/",
                      g.cols.input, ",", g.cols.window, ",", g.cols.stride, ",", g.cols.pad_before,
                      ",", g.cols.pad_after);
}

memory::desc SrcDesc(const Pool2DGeometry& g) {
  return ImageDesc({g.batch, g.channels, g.rows.input, g.cols.input}, g.format);
}
memory::desc DstDesc(const Pool2DGeometry& g) {
  return ImageDesc({g.batch, g.channels, g.rows.output, g.cols.output}, g.format);
}

dnnl::pooling_forward::desc ForwardDesc(prop_kind prop, algorithm alg, const Pool2DGeometry& g) {
  return dnnl::pooling_forward::desc(prop, alg, SrcDesc(g), DstDesc(g),
                                     {g.rows.stride, g.cols.stride}, {g.rows.window, g.cols.window},
                                     {g.rows.pad_before, g.cols.pad_before},
                                     {g.rows.pad_after, g.cols.pad_after});
}

struct PoolForward {
  dnnl::pooling_forward::primitive_desc pd;
  dnnl::pooling_forward primitive;
};

PoolForward MakeForward(prop_kind prop, algorithm alg, const Pool2DGeometry& g) {
  PoolForward f;
  f.pd = dnnl::pooling_forward::primitive_desc(ForwardDesc(prop, alg, g), UserScratchpad(),
                                               OneDnnCpuEngine());
  f.primitive = dnnl::pooling_forward(f.pd);
  return f;
}

// The backward primitive and the forward it is built against.
struct PoolBackward {
  PoolForward forward;
  dnnl::pooling_backward::primitive_desc pd;
  dnnl::pooling_backward primitive;
};

PoolBackward MakeBackward(algorithm alg, const Pool2DGeometry& g) {
  PoolBackward b;
  b.forward = MakeForward(prop_kind::forward_training, alg, g);
  dnnl::pooling_backward::desc desc(
      alg, SrcDesc(g), DstDesc(g), {g.rows.stride, g.cols.stride}, {g.rows.window, g.cols.window},
      {g.rows.pad_before, g.cols.pad_before}, {g.rows.pad_after, g.cols.pad_after});
  b.pd = dnnl::pooling_backward::primitive_desc(desc, UserScratchpad(), OneDnnCpuEngine(),
                                                b.forward.pd);
  b.primitive = dnnl::pooling_backward(b.pd);
  return b;
}

PrimitiveCache<PoolForward>& ForwardCache() {
  static auto* cache = new PrimitiveCache<PoolForward>();
  return *cache;
}
PrimitiveCache<PoolBackward>& BackwardCache() {
  static auto* cache = new PrimitiveCache<PoolBackward>();
  return *cache;
}

// MaxPool (pooling_max) and AvgPool (pooling_avg_exclude_padding).
template <algorithm kAlg>
class PoolOp final : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    TG_ASSIGN_OR_RETURN(Pool2DGeometry g, PoolGeometryOf(attrs_, input.shape(), "input"));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, PooledShape(g), &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    return Guard("pooling", [&]() -> absl::Status {
      const int threads = UseIntraOpThreads(ctx);
      auto f = ForwardCache().Get(PoolKey(threads, kAlg, g), [&] {
        return MakeForward(prop_kind::forward_inference, kAlg, g);
      });
      return Execute(ctx, f->primitive,
                     {{DNNL_ARG_SRC, Memory(f->pd.src_desc(), input.raw_data())},
                      {DNNL_ARG_DST, Memory(f->pd.dst_desc(), output->raw_data())}});
    });
  }
};

class MaxPoolGradOp final : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& grad = ctx.input(2);
    TG_ASSIGN_OR_RETURN(Pool2DGeometry g, PoolGeometryOf(attrs_, input.shape(), "orig_input"));
    TG_RETURN_IF_ERROR(CheckPooledShape(ctx.input(1), "orig_output", g, input.shape()));
    TG_RETURN_IF_ERROR(CheckPooledShape(grad, "grad", g, input.shape()));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, input.shape(), &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    MaxPoolGrad(ctx, g, input.data<float>(), grad.data<float>(), output->data<float>());
    return absl::OkStatus();
  }
};

class AvgPoolGradOp final : public PoolKernel {
 public:
  using PoolKernel::PoolKernel;

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& grad = ctx.input(1);
    TG_ASSIGN_OR_RETURN(const TensorShape shape, OrigInputShape(ctx.input(0)));
    TG_ASSIGN_OR_RETURN(Pool2DGeometry g, PoolGeometryOf(attrs_, shape, "orig_input_shape"));
    TG_RETURN_IF_ERROR(CheckPooledShape(grad, "grad", g, shape));
    Tensor* output;
    TG_RETURN_IF_ERROR(ctx.allocate_output(0, shape, &output));
    if (output->NumElements() == 0) return absl::OkStatus();
    constexpr algorithm kAlg = algorithm::pooling_avg_exclude_padding;
    return Guard("average pooling backward", [&]() -> absl::Status {
      const int threads = UseIntraOpThreads(ctx);
      auto b =
          BackwardCache().Get(PoolKey(threads, kAlg, g), [&] { return MakeBackward(kAlg, g); });
      return Execute(ctx, b->primitive,
                     {{DNNL_ARG_DIFF_DST, Memory(b->pd.diff_dst_desc(), grad.raw_data())},
                      {DNNL_ARG_DIFF_SRC, Memory(b->pd.diff_src_desc(), output->raw_data())}});
    });
  }
};

TG_REGISTER_KERNEL(KernelDefBuilder("MaxPool").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   PoolOp<algorithm::pooling_max>);
TG_REGISTER_KERNEL(KernelDefBuilder("AvgPool").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   PoolOp<algorithm::pooling_avg_exclude_padding>);
TG_REGISTER_KERNEL(KernelDefBuilder("MaxPoolGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   MaxPoolGradOp);
TG_REGISTER_KERNEL(KernelDefBuilder("AvgPoolGrad").Device(DEVICE_CPU).TypeConstraint<float>("T"),
                   AvgPoolGradOp);

}  // namespace

PoolKernel::PoolKernel(OpKernelConstruction& ctx) : OpKernel(ctx) {
  auto attrs = ParsePool2DAttrs(ctx.def());
  TG_REQUIRES_OK_CTOR(ctx, attrs.status());
  attrs_ = *attrs;
}

absl::StatusOr<Pool2DGeometry> PoolGeometryOf(const Pool2DAttrs& attrs, const TensorShape& shape,
                                              const char* what) {
  if (shape.dims() != 4) {
    return errors::InvalidArgument(what, " must be 4-D, got ", shape.DebugString());
  }
  return ComputePool2DGeometry(
      attrs, {shape.dim_size(0), shape.dim_size(1), shape.dim_size(2), shape.dim_size(3)});
}

TensorShape PooledShape(const Pool2DGeometry& g) {
  const std::array<int64_t, 4> dims = g.OutputDims();
  return TensorShape({dims[0], dims[1], dims[2], dims[3]});
}

absl::Status CheckPooledShape(const Tensor& t, const char* what, const Pool2DGeometry& g,
                              const TensorShape& input) {
  const TensorShape want = PooledShape(g);
  if (t.shape() == want) return absl::OkStatus();
  return errors::InvalidArgument(what, " must have the pooled shape ", want.DebugString(),
                                 " of an input of shape ", input.DebugString(), ", got ",
                                 t.shape().DebugString());
}

absl::StatusOr<TensorShape> OrigInputShape(const Tensor& shape_tensor) {
  if (shape_tensor.dims() != 1 || shape_tensor.NumElements() != 4) {
    return errors::InvalidArgument("orig_input_shape must be a vector of 4, got shape ",
                                   shape_tensor.shape().DebugString());
  }
  auto shape = BuildTensorShape(IndexValues(shape_tensor));
  if (!shape.ok()) return WithContext(shape.status(), "orig_input_shape");
  return *shape;
}

}  // namespace nn
}  // namespace tensorgrid
