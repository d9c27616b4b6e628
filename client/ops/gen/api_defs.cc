#include "client/ops/gen/api_defs.h"

#include "absl/strings/match.h"

namespace tensorgrid {
namespace op_gen {
namespace {

ApiDef Renamed(const char* op, const char* endpoint, const char* node_name = "") {
  return {op, Visibility::kVisible, endpoint, node_name, ""};
}
ApiDef HandWritten(const char* op, const char* header) {
  return {op, Visibility::kHandWritten, "", "", header};
}
ApiDef Skipped(const char* op) { return {op, Visibility::kSkip, "", "", ""}; }

const std::vector<ApiDef>& ApiDefs() {
  static const auto* defs = new std::vector<ApiDef>{
      // Const takes C++ literals and initializer lists (Input::Initializer);
      // TensorFlow hand-writes it too, and the generated code builds on it.
      HandWritten("Const", "client/ops/const_op.h"),
      // Free functions returning an Output, with timeout_seconds positional,
      // as the distribution strategies and their tests call them.
      HandWritten("CollectiveReduce", "client/ops/collective_ops.h"),
      HandWritten("CollectiveBcastSend", "client/ops/collective_ops.h"),
      HandWritten("CollectiveBcastRecv", "client/ops/collective_ops.h"),
      HandWritten("CollectiveGather", "client/ops/collective_ops.h"),
      // TensorFlow's C++ names: the current version of an op under the plain
      // name, TensorFlow's old Ref(string)-handle names for the resource forms.
      Renamed("ConcatV2", "Concat"),
      Renamed("Pack", "Stack"),
      Renamed("Unpack", "Unstack"),
      Renamed("VariableV2", "Variable"),
      Skipped("Variable"),  // the old op; VariableV2 has its name
      // The queue and accumulator ops under TensorFlow's C++ names. The two
      // that create resources keep the node names TensorFlow's Python API
      // gives them: an unshared queue or accumulator is named after its node.
      Renamed("FIFOQueueV2", "FIFOQueue", "fifo_queue"),
      Renamed("QueueEnqueueV2", "QueueEnqueue"),
      Renamed("QueueEnqueueManyV2", "QueueEnqueueMany"),
      Renamed("QueueDequeueV2", "QueueDequeue"),
      Renamed("QueueDequeueManyV2", "QueueDequeueMany"),
      Renamed("QueueCloseV2", "QueueClose"),
      Renamed("QueueSizeV2", "QueueSize"),
      Renamed("ResourceConditionalAccumulator", "ConditionalAccumulator",
              "conditional_accumulator"),
      Renamed("ResourceAccumulatorApplyGradient", "AccumulatorApplyGradient"),
      Renamed("ResourceAccumulatorNumAccumulated", "AccumulatorNumAccumulated"),
      Renamed("ResourceAccumulatorSetGlobalStep", "AccumulatorSetGlobalStep"),
      Renamed("ResourceAccumulatorTakeGradient", "AccumulatorTakeGradient"),
  };
  return *defs;
}

const std::vector<FamilyDef>& Families() {
  static const auto* families = new std::vector<FamilyDef>{
      {"array_ops",
       R"(Array ops: placeholders, identity and shape manipulation, with Const
(hand-written, client/ops/const_op.h). Type attrs ("T", "Tshape", ...) are
inferred from the inputs.

  auto x = ops::Placeholder(scope, DT_FLOAT, ops::Placeholder::Shape({-1, 784}));
  auto img = ops::Reshape(scope, x, {-1, 28, 28, 1});
  auto both = ops::Concat(scope, {a, b}, /*axis=*/0);)",
       {"client/ops/const_op.h"}},
      {"conv_ops",
       R"(Convolution ops: Conv2D and DepthwiseConv2dNative with their backprops
(docs/conv.md), in TensorFlow's NHWC or NCHW; strides and dilations have
one entry per dimension, 1 for batch and depth.

  auto y = ops::Conv2D(scope, images, filter, {1, 2, 2, 1}, "SAME");
  auto dw = ops::DepthwiseConv2dNative(scope, y, dw_filter, {1, 1, 1, 1}, "SAME");
  auto nchw = ops::Conv2D(scope, x, filter, {1, 1, 1, 1}, "EXPLICIT",
                          ops::Conv2D::ExplicitPaddings({0, 0, 0, 0, 1, 1, 2, 2})
                              .DataFormat("NCHW"));)",
       {}},
      {"data_flow_ops",
       R"(Data-flow ops: FIFO queues and conditional accumulators, TensorFlow's
building blocks for handing tensors between steps, sessions and tasks
(docs/queues.md), and the sync-replicas gate (docs/sync_replicas.md). They
live in the resource manager of the device they are placed on; graphs that
name the same shared_name there share one.

  auto q = ops::FIFOQueue(scope.WithOpName("q"), {DT_FLOAT}, ops::FIFOQueue::Capacity(10));
  auto put = ops::QueueEnqueue(scope, q, {x});            // waits while full
  auto got = ops::QueueDequeue(scope, q, {DT_FLOAT});     // waits while empty
  auto close = ops::QueueClose(scope, q);

  auto acc = ops::ConditionalAccumulator(scope, DT_FLOAT, {2},
                                         ops::ConditionalAccumulator::SharedName("grad_w"));
  auto apply = ops::AccumulatorApplyGradient(scope, acc, local_step, grad);
  auto mean = ops::AccumulatorTakeGradient(scope, acc, 2, DT_FLOAT);  // waits for 2)",
       {}},
      {"io_ops",
       R"(Checkpoint ops: SaveV2 and RestoreV2 over tensorgrid's checkpoint format
(docs/checkpoints.md). training::Saver builds them for you.

  auto save = ops::SaveV2(scope, prefix, {"w", "b"}, {"", ""}, {w, b});
  auto restored = ops::RestoreV2(scope, prefix, {"w"}, {""}, {DT_FLOAT});)",
       {}},
      {"math_ops",
       R"(Math ops: element-wise arithmetic, MatMul, reductions, comparison, Cast.
"T" is inferred from the inputs, and both inputs of a binary op must have
the same dtype (a literal `1` is int32, `1.f` float).

  auto y = ops::Add(scope, ops::MatMul(scope, x, w), b);
  auto loss = ops::Mean(scope, ops::Square(scope, y), {0, 1});
  auto total = ops::Sum(scope, y, 1, ops::Sum::KeepDims(true));)",
       {}},
      {"nn_ops",
       R"(Neural-network ops: activations, bias, softmax and its cross-entropy losses,
pooling and batch normalization.

  auto h = ops::Relu(scope, ops::BiasAdd(scope, ops::MatMul(scope, x, w), b));
  auto p = ops::MaxPool(scope, img, {1, 2, 2, 1}, {1, 2, 2, 1}, "SAME");
  auto bn = ops::FusedBatchNormV3(scope, p, gamma, beta, moving_mean, moving_var,
                                  ops::FusedBatchNormV3::ExponentialAvgFactor(0.01f));
  auto xent = ops::SparseSoftmaxCrossEntropyWithLogits(scope, logits, labels);
  auto loss = ops::Mean(scope, xent.loss, 0);)",
       {}},
      {"parsing_ops",
       R"(Parsing ops: ParseExample and ParseExampleV2 read serialized tf.Example
protos (proto/example.proto) into dense, sparse and ragged tensors
(docs/parsing.md).

  auto parsed = ops::ParseExample(scope, serialized, names, {}, {ops::Const(scope, "x")},
                                  {ops::Const(scope, 0.f, {1})}, {}, {PartialTensorShape({1})});
  // parsed.dense_values[0]: float [batch, 1])",
       {}},
      {"random_ops",
       R"(Random ops: tensors of shape `shape` (a 1-D int32/int64 input) and dtype
`dtype` with random values. With Seed and Seed2 both 0 (the default) every
run draws fresh values; otherwise the sequence is fixed by the pair.

  auto w = ops::TruncatedNormal(scope, {784, 10}, DT_FLOAT,
                                ops::TruncatedNormal::Seed(1).Seed2(2));)",
       {}},
      {"state_ops",
       R"(State ops: variables that keep a tensor across steps. Two kinds, as in
TensorFlow: reference variables (Variable, i.e. the VariableV2 op, updated
by Assign/AssignAdd/AssignSub through its reference output) and resource
variables (VarHandleOp, read with ReadVariableOp, updated by
AssignVariableOp/AssignAddVariableOp/AssignSubVariableOp).

  auto w = ops::Variable(scope.WithOpName("w"), {2, 2}, DT_FLOAT);
  auto init = ops::Assign(scope, w, ops::ZerosLike(scope, w));
  auto step = ops::AssignSub(scope, w, grad);

  auto v = ops::VarHandleOp(scope.WithOpName("v"), DT_FLOAT, {2});
  auto set = ops::AssignVariableOp(scope, v, {1.f, 2.f});
  auto read = ops::ReadVariableOp(scope, v, DT_FLOAT);)",
       {}},
      {"string_ops",
       R"(String ops: StringJoin, element by element, scalars repeated.

  auto path = ops::StringJoin(scope, {dir, "/", names});  // names: a vector
  auto csv = ops::StringJoin(scope, {a, b}, ops::StringJoin::Separator(","));)",
       {}},
      {"training_ops",
       R"(Training ops: the optimizer updates. The Apply* forms update a reference
variable (ops::Variable) in place and output it; the ResourceApply* forms
update a resource variable (ops::VarHandleOp) and have no outputs: run them
as targets. Both run on the variable's device (the Placer colocates them
through the reference or resource edge). The optimizers in
client/training/optimizer.h build these for you.

  auto w = ops::Variable(scope.WithOpName("w"), {2}, DT_FLOAT);
  auto step = ops::ApplyGradientDescent(scope, w, 0.1f, grad);
  auto accum = ops::Variable(scope.WithOpName("w/Momentum"), {2}, DT_FLOAT);
  auto nesterov = ops::ApplyMomentum(scope, w, accum, 0.1f, grad, 0.9f,
                                     ops::ApplyMomentum::UseNesterov(true));)",
       {}},
  };
  return *families;
}

}  // namespace

ApiDef GetApiDef(absl::string_view op) {
  ApiDef api;
  api.op = std::string(op);
  for (const ApiDef& def : ApiDefs()) {
    if (def.op == op) api = def;
  }
  if (absl::StartsWith(op, "_")) api.visibility = Visibility::kSkip;  // internal
  if (api.endpoint.empty()) api.endpoint = api.op;
  if (api.node_name.empty()) api.node_name = api.endpoint;
  return api;
}

const FamilyDef* FindFamily(absl::string_view name) {
  for (const FamilyDef& family : Families()) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

}  // namespace op_gen
}  // namespace tensorgrid
