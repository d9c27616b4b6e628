// ParseExample and ParseExampleV2: serialized tf.Example protos to tensors
// (docs/parsing.md). The kernels read the keys and defaults from their
// inputs into an ExampleParseSpec; example_parser.cc does the rest.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/framework/op_kernel.h"
#include "core/platform/status.h"
#include "kernels/parsing/example_parser.h"

namespace tensorgrid {
namespace {

// The attrs both versions share, read and checked once.
struct ParseAttrs {
  int64_t num_sparse = 0;
  std::vector<DataType> sparse_types, dense_types, ragged_value_types, ragged_split_types;
  std::vector<PartialTensorShape> dense_shapes;

  absl::Status Read(OpKernelConstruction& ctx, bool v2) {
    TG_RETURN_IF_ERROR(ctx.GetAttr(v2 ? "num_sparse" : "Nsparse", &num_sparse));
    TG_RETURN_IF_ERROR(ctx.GetAttr("sparse_types", &sparse_types));
    TG_RETURN_IF_ERROR(ctx.GetAttr("Tdense", &dense_types));
    TG_RETURN_IF_ERROR(ctx.GetAttr("dense_shapes", &dense_shapes));
    if (v2) {
      TG_RETURN_IF_ERROR(ctx.GetAttr("ragged_value_types", &ragged_value_types));
      TG_RETURN_IF_ERROR(ctx.GetAttr("ragged_split_types", &ragged_split_types));
    } else {
      int64_t num_dense;
      TG_RETURN_IF_ERROR(ctx.GetAttr("Ndense", &num_dense));
      if (num_dense != static_cast<int64_t>(dense_types.size())) {
        return errors::InvalidArgument("Ndense is ", num_dense, " but Tdense has ",
                                       dense_types.size(), " types");
      }
    }
    if (num_sparse != static_cast<int64_t>(sparse_types.size())) {
      return errors::InvalidArgument(v2 ? "num_sparse" : "Nsparse", " is ", num_sparse,
                                     " but sparse_types has ", sparse_types.size(), " types");
    }
    if (dense_shapes.size() != dense_types.size()) {
      return errors::InvalidArgument("dense_shapes has ", dense_shapes.size(),
                                     " shapes but Tdense has ", dense_types.size(), " types");
    }
    if (ragged_value_types.size() != ragged_split_types.size()) {
      return errors::InvalidArgument("ragged_value_types has ", ragged_value_types.size(),
                                     " types but ragged_split_types has ",
                                     ragged_split_types.size());
    }
    return absl::OkStatus();
  }
};

// The string keys `t` holds: a scalar (V1, one input per key) or a vector of
// `count` (V2, one input per kind of feature).
absl::Status ReadKeys(const Tensor& t, const char* what, bool vector, size_t count,
                      std::vector<std::string>* keys) {
  if (vector ? t.dims() != 1 || t.NumElements() != static_cast<int64_t>(count) : t.dims() != 0) {
    return errors::InvalidArgument(
        what,
        vector ? absl::StrCat(" must be a vector of ", count) : std::string(" must be scalars"),
        ", got a tensor of shape ", t.shape().DebugString());
  }
  for (int64_t i = 0; i < t.NumElements(); ++i) keys->push_back(t.data<std::string>()[i]);
  return absl::OkStatus();
}

template <bool kV2>
class ParseExampleOp final : public OpKernel {
 public:
  explicit ParseExampleOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, attrs_.Read(ctx, kV2));
  }

  absl::Status Compute(OpKernelContext& ctx) override {
    const Tensor& serialized = ctx.input(0);
    if (!kV2 && serialized.dims() != 1) {
      return errors::InvalidArgument("serialized must be a vector, got a tensor of shape ",
                                     serialized.shape().DebugString());
    }
    TG_ASSIGN_OR_RETURN(ExampleParseSpec spec, Spec(ctx));
    TG_ASSIGN_OR_RETURN(ParsedExamples parsed, ParseExamples(spec, serialized, ctx.input(1)));
    int out = 0;
    for (auto* group : {&parsed.sparse_indices, &parsed.sparse_values, &parsed.sparse_shapes,
                        &parsed.dense_values, &parsed.ragged_values, &parsed.ragged_splits}) {
      for (Tensor& t : *group) ctx.set_output(out++, std::move(t));
    }
    return absl::OkStatus();
  }

 private:
  absl::StatusOr<ExampleParseSpec> Spec(const OpKernelContext& ctx) const {
    const size_t num_sparse = attrs_.sparse_types.size();
    const size_t num_dense = attrs_.dense_types.size();
    std::vector<std::string> sparse_keys, dense_keys, ragged_keys;
    int defaults = 0;  // the input index of dense_defaults[0]
    if (kV2) {
      TG_RETURN_IF_ERROR(ReadKeys(ctx.input(2), "sparse_keys", true, num_sparse, &sparse_keys));
      TG_RETURN_IF_ERROR(ReadKeys(ctx.input(3), "dense_keys", true, num_dense, &dense_keys));
      TG_RETURN_IF_ERROR(ReadKeys(ctx.input(4), "ragged_keys", true,
                                  attrs_.ragged_value_types.size(), &ragged_keys));
      defaults = 5;
    } else {
      for (size_t j = 0; j < num_sparse; ++j) {
        TG_RETURN_IF_ERROR(ReadKeys(ctx.input(2 + j), "sparse_keys", false, 1, &sparse_keys));
      }
      for (size_t j = 0; j < num_dense; ++j) {
        TG_RETURN_IF_ERROR(
            ReadKeys(ctx.input(2 + num_sparse + j), "dense_keys", false, 1, &dense_keys));
      }
      defaults = static_cast<int>(2 + num_sparse + num_dense);
    }
    ExampleParseSpec spec;
    for (size_t j = 0; j < num_sparse; ++j) {
      spec.sparse.push_back({sparse_keys[j], attrs_.sparse_types[j]});
    }
    for (size_t j = 0; j < num_dense; ++j) {
      spec.dense.push_back({dense_keys[j], attrs_.dense_types[j], attrs_.dense_shapes[j],
                            ctx.input(defaults + static_cast<int>(j))});
    }
    for (size_t j = 0; j < ragged_keys.size(); ++j) {
      spec.ragged.push_back({ragged_keys[j], attrs_.ragged_value_types[j]});
    }
    spec.ragged_split_types = attrs_.ragged_split_types;
    return spec;
  }

  ParseAttrs attrs_;
};

TG_REGISTER_KERNEL(KernelDefBuilder("ParseExample").Device(DEVICE_CPU), ParseExampleOp<false>);
TG_REGISTER_KERNEL(KernelDefBuilder("ParseExampleV2").Device(DEVICE_CPU), ParseExampleOp<true>);

}  // namespace
}  // namespace tensorgrid
