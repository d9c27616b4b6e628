// MirroredStrategy on two CPU devices: the linear regression of
// TensorFlow's TF1-to-TF2 migration guide. One model, written once; the
// strategy mirrors its variables on both devices, gives each replica half of
// every global batch, all-reduces the gradients (CollectiveReduce) and
// applies the same Adagrad update on both copies.
//
//            global batch of 2 rows (features, labels)
//                 |  split by ExperimentalDistributeDataset
//         +-------+--------+
//         v                v
//   /device:CPU:0     /device:CPU:1
//   w, b (primary)    w, b (copy)         forward + gradients on each
//         \                /
//          CollectiveReduce (mean of the gradients, ring all-reduce)
//         /                \   the same mean to both
//   Adagrad on w, b     Adagrad on the copy   -> copies stay identical
//
//   bazel run //examples:mirrored_linear_regression -- --epochs=100
//
// Prints one progress line per epoch (Fit), then the predictions for the
// guide's evaluation features [[4, 4.5], [5, 5.5], [6, 6.5]].
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "client/data/dataset.h"
#include "client/distribute/strategy.h"
#include "client/ops/standard_ops.h"
#include "client/training/optimizer.h"
#include "client/training/variables.h"
#include "core/platform/status.h"
#include "core/public/session.h"
#include "core/util/command_line_flags.h"

using namespace tensorgrid;  // NOLINT: an example

namespace {

Tensor Matrix(const std::vector<std::vector<float>>& rows) {
  Tensor t(DT_FLOAT,
           TensorShape({static_cast<int64_t>(rows.size()), static_cast<int64_t>(rows[0].size())}));
  float* p = t.data<float>();
  for (const auto& row : rows) {
    for (float v : row) *p++ = v;
  }
  return t;
}

absl::Status Main(int epochs) {
  distribute::MirroredStrategy strategy({"/device:CPU:0", "/device:CPU:1"});
  std::printf("num_replicas_in_sync=%d\n", strategy.num_replicas_in_sync());

  const Tensor features = Matrix({{1, 1.5}, {2, 2.5}, {3, 3.5}});
  const Tensor labels = Matrix({{0.3}, {0.5}, {0.7}});
  const Tensor eval_features = Matrix({{4, 4.5}, {5, 5.5}, {6, 6.5}});
  // Two passes over the 3 rows per epoch, in global batches of 2 (1 per replica).
  const Dataset dataset = Dataset::FromTensorSlices({features, labels}).Repeat(2).Batch(2);

  Scope root = Scope::NewRootScope();
  Scope scope = strategy.scope(root);
  // tf.keras.layers.Dense(1): variables made in the strategy's scope are mirrored.
  training::Variable w(scope, "dense/kernel", {2, 1}, DT_FLOAT, training::GlorotUniform(1));
  training::Variable b(scope, "dense/bias", {1}, DT_FLOAT, training::Zeros());
  training::AdagradOptimizer adagrad(0.05);

  TG_ASSIGN_OR_RETURN(distribute::DistributedDataset data,
                      strategy.ExperimentalDistributeDataset(scope, dataset));
  auto step_fn = [&](distribute::ReplicaContext& ctx) -> absl::StatusOr<std::vector<Output>> {
    const Scope& s = ctx.scope();
    Output predictions = ops::Add(s, ops::MatMul(s, ctx.inputs()[0], w), b);  // this replica's w, b
    Output loss = ops::Mean(s, ops::Square(s, ops::Sub(s, predictions, ctx.inputs()[1])), {0, 1});
    TG_RETURN_IF_ERROR(ctx.Minimize(&adagrad, loss));
    return std::vector<Output>{loss};
  };
  TG_ASSIGN_OR_RETURN(distribute::DistributedStep step,
                      strategy.Run(scope, step_fn, data.inputs()));
  Output loss = strategy.Reduce(scope, distribute::ReduceOp::kMean, step.outputs[0]);

  // Evaluation reads the primary copies (outside a replica, a mirrored variable is its primary).
  auto eval_x = ops::Placeholder(root.WithOpName("eval_features"), DT_FLOAT);
  Output eval = ops::Add(root.WithOpName("eval_predictions"), ops::MatMul(root, eval_x, w), b);
  Operation init = training::GlobalVariablesInitializer(root);

  GraphDef graph;
  TG_RETURN_IF_ERROR(root.ToGraphDef(&graph));
  SessionOptions options;
  options.config = strategy.session_config();  // device_count {"CPU": 2}
  TG_ASSIGN_OR_RETURN(std::unique_ptr<Session> session, NewSession(options));
  TG_RETURN_IF_ERROR(session->Create(graph));
  TG_RETURN_IF_ERROR(session->Run({}, {}, {init.name()}, nullptr));

  distribute::FitOptions fit;
  fit.epochs = epochs;
  TG_RETURN_IF_ERROR(distribute::Fit(session.get(), data, step.train_op, loss, fit).status());

  std::vector<Tensor> out;
  TG_RETURN_IF_ERROR(session->Run({{"eval_features", eval_features}}, {eval.name()}, {}, &out));
  std::printf("predictions=[%.4f, %.4f, %.4f]\n", out[0].data<float>()[0], out[0].data<float>()[1],
              out[0].data<float>()[2]);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  int32_t epochs = 100;
  const std::vector<Flag> flag_list = {Flag("epochs", &epochs, "passes over the data, at least 1")};
  const std::string usage = Flags::Usage("mirrored_linear_regression [--epochs=N]", flag_list);
  if (!Flags::Parse(&argc, argv, flag_list)) {  // a bad flag (it says which), or --help
    std::fprintf(stderr, "%s", usage.c_str());
    return 2;
  }
  if (argc > 1 || epochs < 1) {
    std::fprintf(stderr, "mirrored_linear_regression: %s\n%s",
                 argc > 1 ? "takes no arguments" : "--epochs must be at least 1", usage.c_str());
    return 2;
  }
  absl::Status s = Main(epochs);
  if (!s.ok()) {
    std::fprintf(stderr, "mirrored_linear_regression: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
