// The GPU's optimizer updates and variable kernels against the CPU's: each
// update runs a few steps on a CPU variable and a GPU variable from the same
// start, and the variables (and slots) must agree. Skips with "no GPU" where
// CUDA sees none.
#include "core/framework/device_context.h"
#include "kernels/gpu/gpu_kernel_testutil.h"

namespace tensorgrid {
namespace gpu {
namespace {

struct Slots {
  std::vector<std::shared_ptr<Var>> cpu, gpu;
};

class GpuTrainingOpsTest : public GpuKernelTest {
 protected:
  // Variables 0..n-1 of an update, the same starting values on both devices.
  Slots MakeVars(int n, const TensorShape& shape, bool positive = false) {
    Slots s;
    for (int i = 0; i < n; ++i) {
      Tensor init = positive ? Random<float>(shape, 0.1, 1) : Random<float>(shape);
      s.cpu.push_back(MakeVar(cpu(), init, "v" + std::to_string(i)));
      s.gpu.push_back(MakeVar(gpu(), init, "v" + std::to_string(i)));
    }
    return s;
  }

  // Runs `node` `steps` times on each device, with the ref variables first
  // and then `inputs` (fresh random gradients each step come from `grad`).
  void ExpectSameUpdates(const NodeDefBuilder& node, Slots& vars,
                         const std::function<std::vector<Tensor>()>& inputs, int steps = 3) {
    SCOPED_TRACE(node.def().op());
    for (int step = 0; step < steps; ++step) {
      const std::vector<Tensor> in = inputs();
      for (bool on_gpu : {false, true}) {
        std::vector<TensorValue> values;
        for (const auto& v : on_gpu ? vars.gpu : vars.cpu) values.push_back({Tensor(), v});
        for (const Tensor& t : in) values.push_back({t, nullptr});
        KernelRun run = Run(on_gpu ? gpu() : cpu(), node, std::move(values));
        ASSERT_OK(run.status);
      }
      for (size_t i = 0; i < vars.cpu.size(); ++i) {
        EXPECT_TRUE(TensorsMatch(VarValue(vars.cpu[i]), VarValue(vars.gpu[i]), 1e-5))
            << "variable " << i << " after step " << step;
      }
    }
  }
};

NodeDefBuilder Apply(const std::string& op) {
  NodeDefBuilder b("update", op);
  b.Attr("T", DT_FLOAT);
  return b;
}

TEST_F(GpuTrainingOpsTest, ApplyGradientDescent) {
  for (const TensorShape& shape : std::vector<TensorShape>{{784, 500}, {10}, {}, {0}}) {
    Slots vars = MakeVars(1, shape);
    ExpectSameUpdates(Apply("ApplyGradientDescent"), vars, [&] {
      return std::vector<Tensor>{Tensor::Scalar<float>(0.1f), Random<float>(shape)};
    });
  }
}

TEST_F(GpuTrainingOpsTest, ApplyMomentum) {
  for (bool nesterov : {false, true}) {
    NodeDefBuilder op = Apply("ApplyMomentum");
    op.Attr("use_nesterov", nesterov);
    Slots vars = MakeVars(2, {500, 10});
    ExpectSameUpdates(op, vars, [&] {
      return std::vector<Tensor>{Tensor::Scalar<float>(0.05f), Random<float>({500, 10}),
                                 Tensor::Scalar<float>(0.9f)};
    });
  }
}

TEST_F(GpuTrainingOpsTest, ApplyAdagrad) {
  Slots vars = MakeVars(2, {300}, /*positive=*/true);
  ExpectSameUpdates(Apply("ApplyAdagrad"), vars, [&] {
    return std::vector<Tensor>{Tensor::Scalar<float>(0.1f), Random<float>({300})};
  });
}

TEST_F(GpuTrainingOpsTest, ApplyAdam) {
  for (bool nesterov : {false, true}) {
    NodeDefBuilder op = Apply("ApplyAdam");
    op.Attr("use_nesterov", nesterov);
    Slots vars = MakeVars(1, {500, 500});
    for (int i = 0; i < 2; ++i) {  // m and v start at 0, as the optimizer's slots do
      Tensor zeros(DT_FLOAT, TensorShape({500, 500}));
      for (int64_t j = 0; j < zeros.NumElements(); ++j) zeros.data<float>()[j] = 0;
      vars.cpu.push_back(MakeVar(cpu(), zeros, "slot"));
      vars.gpu.push_back(MakeVar(gpu(), zeros, "slot"));
    }
    float beta1_power = 0.9f, beta2_power = 0.999f;
    ExpectSameUpdates(op, vars, [&] {
      std::vector<Tensor> in = {
          Tensor::Scalar<float>(beta1_power), Tensor::Scalar<float>(beta2_power),
          Tensor::Scalar<float>(0.001f),      Tensor::Scalar<float>(0.9f),
          Tensor::Scalar<float>(0.999f),      Tensor::Scalar<float>(1e-7f),
          Random<float>({500, 500})};
      beta1_power *= 0.9f;
      beta2_power *= 0.999f;
      return in;
    });
  }
}

TEST_F(GpuTrainingOpsTest, ResourceApplyAdamUpdatesTheResourceVariables) {
  const TensorShape shape({20, 3});
  const Tensor init = Random<float>(shape);
  Tensor zeros(DT_FLOAT, shape);
  for (int64_t j = 0; j < zeros.NumElements(); ++j) zeros.data<float>()[j] = 0;
  for (int step = 0; step < 3; ++step) {
    const Tensor grad = Random<float>(shape);
    for (Device* d : {cpu(), gpu()}) {
      std::vector<Tensor> in;
      if (step == 0) {
        MakeResourceVar(d, init, "w");
        MakeResourceVar(d, zeros, "w/m");
        MakeResourceVar(d, zeros, "w/v");
      }
      for (const char* name : {"w", "w/m", "w/v"}) {
        ResourceHandle h;
        h.name = name;
        h.device = d->name();
        h.type_name = "Var";
        in.push_back(Tensor::Scalar<ResourceHandle>(h));
      }
      for (float s : {0.9f, 0.999f, 0.01f, 0.9f, 0.999f, 1e-7f}) in.push_back(Tensor::Scalar(s));
      in.push_back(grad);
      ASSERT_OK(Run(d, Apply("ResourceApplyAdam"), in).status);
    }
    for (const char* name : {"w", "w/m", "w/v"}) {
      EXPECT_TRUE(TensorsMatch(ResourceVarValue(cpu(), name), ResourceVarValue(gpu(), name), 1e-5))
          << name << " after step " << step;
    }
  }
}

TEST_F(GpuTrainingOpsTest, ApplyChecksMatchTheCpu) {
  Slots vars = MakeVars(1, {4});
  for (bool on_gpu : {false, true}) {
    std::vector<TensorValue> in = {{Tensor(), (on_gpu ? vars.gpu : vars.cpu)[0]},
                                   {Tensor::FromVector<float>({0.1f}, {1}), nullptr},
                                   {Random<float>({4}), nullptr}};
    EXPECT_STATUS(Run(on_gpu ? gpu() : cpu(), Apply("ApplyGradientDescent"), in).status,
                  kInvalidArgument, "input 'alpha' must be a scalar");
    in[1].tensor = Tensor::Scalar<float>(0.1f);
    in[2].tensor = Random<float>({5});
    EXPECT_STATUS(Run(on_gpu ? gpu() : cpu(), Apply("ApplyGradientDescent"), in).status,
                  kInvalidArgument, "delta");
  }
}

// A reader's snapshot taken before an update keeps its value: the update
// copies the shared buffer (on the device) instead of writing under it.
TEST_F(GpuTrainingOpsTest, UpdatesLeaveReadersSnapshotsAlone) {
  const Tensor init = Random<float>({64});
  std::shared_ptr<Var> var = MakeVar(gpu(), init, "w");
  Tensor snapshot;
  {
    absl::MutexLock lock(&var->mu);
    snapshot = var->tensor;
  }
  std::vector<TensorValue> in = {
      {Tensor(), var}, {Tensor::Scalar<float>(1.0f), nullptr}, {Random<float>({64}), nullptr}};
  ASSERT_OK(Run(gpu(), Apply("ApplyGradientDescent"), in).status);
  absl::StatusOr<Tensor> before =
      EnsureMemory(snapshot, HOST_MEMORY, gpu()->GetAllocator(DEVICE_MEMORY));
  ASSERT_OK(before.status());
  EXPECT_TRUE(TensorsMatch(init, *before, 0));
  EXPECT_FALSE(TensorsMatch(init, VarValue(var), 0));
}

TEST_F(GpuTrainingOpsTest, AssignAddAndAssignSub) {
  for (const char* op : {"AssignAdd", "AssignSub"}) {
    Slots vars = MakeVars(1, {7, 3});
    ExpectSameUpdates(Apply(op), vars, [&] { return std::vector<Tensor>{Random<float>({7, 3})}; });
  }
  // int64 counters (the global step).
  for (bool on_gpu : {false, true}) {
    Device* d = on_gpu ? gpu() : cpu();
    std::shared_ptr<Var> step = MakeVar(d, Tensor::Scalar<int64_t>(41), "global_step");
    NodeDefBuilder add("inc", "AssignAdd");
    add.Attr("T", DT_INT64);
    ASSERT_OK(Run(d, add,
                  std::vector<TensorValue>{{Tensor(), step}, {Tensor::Scalar<int64_t>(1), nullptr}})
                  .status);
    EXPECT_EQ(VarValue(step).scalar<int64_t>(), 42);
    EXPECT_STATUS(Run(d, add,
                      std::vector<TensorValue>{{Tensor(), step},
                                               {Tensor::FromVector<int64_t>({1, 2}, {2}), nullptr}})
                      .status,
                  kInvalidArgument, "cannot update variable 'global_step' of shape []");
  }
}

TEST_F(GpuTrainingOpsTest, ResourceVariablesAssignReadAndUpdate) {
  const Tensor init = Random<float>({5, 2});
  const Tensor delta = Random<float>({5, 2});
  for (Device* d : {cpu(), gpu()}) {
    ResourceHandle h;
    h.name = "r";
    h.device = d->name();
    h.type_name = "Var";
    const Tensor handle = Tensor::Scalar<ResourceHandle>(h);
    NodeDefBuilder assign("a", "AssignVariableOp");
    assign.Attr("dtype", DT_FLOAT);
    ASSERT_OK(Run(d, assign, {handle, init}).status);
    NodeDefBuilder add("b", "AssignAddVariableOp");
    add.Attr("dtype", DT_FLOAT);
    ASSERT_OK(Run(d, add, {handle, delta}).status);
    NodeDefBuilder read("c", "ReadVariableOp");
    read.Attr("dtype", DT_FLOAT);
    KernelRun r = Run(d, read, {handle});
    ASSERT_OK(r.status);
    for (int64_t i = 0; i < init.NumElements(); ++i) {
      EXPECT_FLOAT_EQ(r.outputs[0].data<float>()[i],
                      init.data<float>()[i] + delta.data<float>()[i]);
    }
    NodeDefBuilder bad("d", "AssignAddVariableOp");
    bad.Attr("dtype", DT_FLOAT);
    EXPECT_STATUS(Run(d, bad, {handle, Random<float>({3})}).status, kInvalidArgument,
                  "cannot update variable 'r' of shape [5,2]");
  }
}

}  // namespace
}  // namespace gpu
}  // namespace tensorgrid
