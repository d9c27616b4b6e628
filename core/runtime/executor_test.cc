#include "core/runtime/executor.h"

#include <atomic>
#include <thread>

#include "core/framework/attr_value_util.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

// Counts how often it ran; optionally fails.
class CountingOp final : public OpKernel {
 public:
  explicit CountingOp(OpKernelConstruction& ctx) : OpKernel(ctx) {
    TG_REQUIRES_OK_CTOR(ctx, ctx.GetAttr("fail", &fail_));
  }
  absl::Status Compute(OpKernelContext& ctx) override {
    runs.fetch_add(1);
    if (fail_) return errors::InvalidArgument("told to fail");
    return absl::OkStatus();
  }
  static std::atomic<int> runs;

 private:
  bool fail_ = false;
};
std::atomic<int> CountingOp::runs{0};

TG_REGISTER_OP("ExecutorTestCount").Attr("fail: bool = false").SetIsStateful();
TG_REGISTER_KERNEL(KernelDefBuilder("ExecutorTestCount").Device(DEVICE_CPU), CountingOp);

class AsyncDoubleOp final : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;
  void ComputeAsync(OpKernelContext& ctx, DoneCallback done) override {
    // Completes on another thread, as a receive from a peer would.
    std::thread([&ctx, done = std::move(done)] {
      Tensor* out;
      absl::Status s = ctx.allocate_output(0, ctx.input(0).shape(), &out);
      if (s.ok()) out->scalar<float>() = 2 * ctx.input(0).scalar<float>();
      done(s);
    }).detach();
  }
};
TG_REGISTER_OP("ExecutorTestAsyncDouble").Input("x: float").Output("y: float");
TG_REGISTER_KERNEL(KernelDefBuilder("ExecutorTestAsyncDouble").Device(DEVICE_CPU), AsyncDoubleOp);

class ExecutorTest : public ::testing::Test {
 protected:
  ExecutorTest()
      : device_(NewCpuDevice("/job:localhost/replica:0/task:0/device:CPU:0", 1)), pool_(2) {}

  NodeDef* Add(GraphDef* g, const std::string& name, const std::string& op,
               std::vector<std::string> inputs = {}) {
    NodeDef* n = g->add_node();
    n->set_name(name);
    n->set_op(op);
    for (auto& i : inputs) n->add_input(i);
    return n;
  }
  NodeDef* Scalar(GraphDef* g, const std::string& name, float v) {
    NodeDef* n = Add(g, name, "Const");
    SetAttr(n, "dtype", DT_FLOAT);
    SetAttr(n, "value", Tensor::Scalar<float>(v));
    return n;
  }
  NodeDef* Retval(GraphDef* g, const std::string& input, int index) {
    NodeDef* n = Add(g, "ret" + std::to_string(index), "_Retval", {input});
    SetAttr(n, "T", DT_FLOAT);
    SetAttr(n, "index", index);
    return n;
  }
  absl::StatusOr<std::unique_ptr<Executor>> Make(const GraphDef& def) {
    auto g = ImportGraphDef(def);
    if (!g.ok()) return g.status();
    return Executor::Create(device_.get(), std::move(g).value());
  }
  absl::Status Run(Executor& e, CallFrame* frame, bool with_pool = true) {
    Executor::Args args;
    args.call_frame = frame;
    args.inter_op_pool = with_pool ? &pool_ : nullptr;
    return e.Run(args);
  }

  std::unique_ptr<Device> device_;
  ThreadPool pool_;
};

TEST_F(ExecutorTest, DiamondComputesWithAndWithoutPool) {
  GraphDef g;
  Scalar(&g, "a", 3);
  NodeDef* b = Add(&g, "b", "Mul", {"a", "a"});
  SetAttr(b, "T", DT_FLOAT);
  NodeDef* c = Add(&g, "c", "Neg", {"a"});
  SetAttr(c, "T", DT_FLOAT);
  NodeDef* d = Add(&g, "d", "AddV2", {"b", "c"});
  SetAttr(d, "T", DT_FLOAT);
  Retval(&g, "d", 0);
  auto e = Make(g);
  ASSERT_TRUE(e.ok()) << e.status();
  for (bool pool : {true, false}) {
    CallFrame frame;
    frame.retvals.resize(1);
    ASSERT_OK(Run(**e, &frame, pool));
    EXPECT_EQ(frame.retvals[0].scalar<float>(), 6.f);  // 9 + (-3)
  }
}

TEST_F(ExecutorTest, ControlEdgesOrderExecution) {
  GraphDef g;
  Add(&g, "first", "ExecutorTestCount");
  Add(&g, "second", "ExecutorTestCount", {"^first"});
  auto e = Make(g);
  ASSERT_TRUE(e.ok());
  CountingOp::runs = 0;
  CallFrame frame;
  ASSERT_OK(Run(**e, &frame));
  EXPECT_EQ(CountingOp::runs.load(), 2);
}

TEST_F(ExecutorTest, FirstErrorAbortsStepAndNamesNodeAndOp) {
  GraphDef g;
  SetAttr(Add(&g, "boom", "ExecutorTestCount"), "fail", true);
  Add(&g, "after", "ExecutorTestCount", {"^boom"});
  auto e = Make(g);
  ASSERT_TRUE(e.ok());
  CountingOp::runs = 0;
  CallFrame frame;
  EXPECT_STATUS(Run(**e, &frame), kInvalidArgument,
                "node 'boom' (ExecutorTestCount): told to fail");
  EXPECT_EQ(CountingOp::runs.load(), 1);  // 'after' never ran
}

TEST_F(ExecutorTest, KernelShapeErrorNamesNode) {
  GraphDef g;
  NodeDef* a = Add(&g, "a", "Const");
  SetAttr(a, "dtype", DT_FLOAT);
  SetAttr(a, "value", Tensor::FromVector<float>({1, 2}, TensorShape({2})));
  NodeDef* b = Add(&g, "b", "Const");
  SetAttr(b, "dtype", DT_FLOAT);
  SetAttr(b, "value", Tensor::FromVector<float>({1, 2, 3}, TensorShape({3})));
  NodeDef* s = Add(&g, "sum", "AddV2", {"a", "b"});
  SetAttr(s, "T", DT_FLOAT);
  Retval(&g, "sum", 0);
  auto e = Make(g);
  ASSERT_TRUE(e.ok());
  CallFrame frame;
  frame.retvals.resize(1);
  EXPECT_STATUS(Run(**e, &frame), kInvalidArgument, "node 'sum' (AddV2)");
}

TEST_F(ExecutorTest, AsyncKernelsCompleteOnOtherThreads) {
  GraphDef g;
  Scalar(&g, "a", 1.5f);
  Add(&g, "x2", "ExecutorTestAsyncDouble", {"a"});
  Add(&g, "x4", "ExecutorTestAsyncDouble", {"x2"});
  Retval(&g, "x4", 0);
  auto e = Make(g);
  ASSERT_TRUE(e.ok()) << e.status();
  for (bool pool : {true, false}) {
    CallFrame frame;
    frame.retvals.resize(1);
    ASSERT_OK(Run(**e, &frame, pool));
    EXPECT_EQ(frame.retvals[0].scalar<float>(), 6.f);
  }
}

TEST_F(ExecutorTest, UnregisteredOpIsUnimplemented) {
  GraphDef g;
  Add(&g, "w", "NotAnOpAnywhere");
  EXPECT_STATUS(Make(g).status(), kUnimplemented, "op 'NotAnOpAnywhere' (node 'w')");
}

TEST_F(ExecutorTest, ConcurrentStepsOnOneExecutor) {
  GraphDef g;
  Scalar(&g, "a", 2);
  NodeDef* b = Add(&g, "b", "Mul", {"a", "a"});
  SetAttr(b, "T", DT_FLOAT);
  Retval(&g, "b", 0);
  auto e = Make(g);
  ASSERT_TRUE(e.ok());
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        CallFrame frame;
        frame.retvals.resize(1);
        if (!Run(**e, &frame).ok() || frame.retvals[0].scalar<float>() != 4.f) bad++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(ExecutorTest, WideFanOutFanIn) {
  GraphDef g;
  Add(&g, "src", "NoOp");
  NodeDef* sink = nullptr;
  std::vector<std::string> deps;
  for (int i = 0; i < 2000; ++i) {
    std::string name = "n" + std::to_string(i);
    Add(&g, name, "ExecutorTestCount", {"^src"});
    deps.push_back("^" + name);
  }
  sink = Add(&g, "sink", "ExecutorTestCount", deps);
  (void)sink;
  auto e = Make(g);
  ASSERT_TRUE(e.ok());
  CountingOp::runs = 0;
  CallFrame frame;
  ASSERT_OK(Run(**e, &frame));
  EXPECT_EQ(CountingOp::runs.load(), 2001);
}

}  // namespace
}  // namespace tensorgrid
