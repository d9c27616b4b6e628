// Queues and accumulators in sessions: steps that block and are unblocked by
// concurrent steps, a step timeout cancelling a blocked dequeue, and two
// sessions (masters) sharing one queue on a task by shared_name. Waits are
// bounded; nothing here asserts a duration.
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "client/client_session.h"
#include "client/ops/data_flow_ops.h"
#include "client/ops/standard_ops.h"
#include "core/runtime/master.h"
#include "core/runtime/worker.h"
#include "kernels/data_flow/fifo_queue.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

constexpr absl::Duration kBound = absl::Seconds(30);

// Runs `run` on a thread; Wait() bounds the wait for its status.
class Background {
 public:
  explicit Background(std::function<absl::Status()> run)
      : thread_([this, run = std::move(run)] {
          status_ = run();
          done_.Notify();
        }) {}
  ~Background() { thread_.join(); }
  bool Wait() { return done_.WaitForNotificationWithTimeout(kBound); }
  // A short look: true only if it finished already (never a timing check:
  // a step that must block never finishes, however long one looks).
  bool FinishedSoon() { return done_.WaitForNotificationWithTimeout(absl::Milliseconds(50)); }
  const absl::Status& status() const { return status_; }

 private:
  absl::Notification done_;
  absl::Status status_;
  std::thread thread_;
};

TEST(QueueSessionTest, EnqueueManyDequeueManyKeepOrderAndShapes) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT},
                          ops::FIFOQueue::Shapes({PartialTensorShape({2})}).Capacity(10));
  auto put_many = ops::QueueEnqueueMany(root, q, {Input({{1.f, 2.f}, {3.f, 4.f}, {5.f, 6.f}})});
  auto put_one = ops::QueueEnqueue(root, q, {Input({7.f, 8.f})});
  auto take_two = ops::QueueDequeueMany(root, q, 2, {DT_FLOAT});
  auto take_one = ops::QueueDequeue(root, q, {DT_FLOAT});
  auto size = ops::QueueSize(root, q);
  ASSERT_OK(root.status());
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({}, {}, {put_many}, &out));
  ASSERT_OK(session.Run({}, {}, {put_one}, &out));
  ASSERT_OK(session.Run({size}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>(), 4);
  ASSERT_OK(session.Run({take_two[0]}, &out));
  ExpectTensorEqual<float>(out[0], {1, 2, 3, 4}, TensorShape({2, 2}));
  ASSERT_OK(session.Run({take_one[0]}, &out));
  ExpectTensorEqual<float>(out[0], {5, 6}, TensorShape({2}));
  ASSERT_OK(session.Run({take_one[0]}, &out));
  ExpectTensorEqual<float>(out[0], {7, 8}, TensorShape({2}));
}

TEST(QueueSessionTest, FullQueueBlocksAnEnqueueUntilAConcurrentStepDequeues) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithOpName("q"), {DT_INT32}, ops::FIFOQueue::Capacity(1));
  auto x = ops::Placeholder(root, DT_INT32);
  auto put = ops::QueueEnqueue(root, q, {x});
  auto take = ops::QueueDequeue(root, q, {DT_INT32});
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({{x, 1}}, {}, {put}, &out));
  {
    Background blocked([&] {
      std::vector<Tensor> unused;
      return session.Run({{x, 2}}, {}, {put}, &unused);
    });
    EXPECT_FALSE(blocked.FinishedSoon());
    ASSERT_OK(session.Run({take[0]}, &out));  // makes room
    EXPECT_EQ(out[0].scalar<int32_t>(), 1);
    ASSERT_TRUE(blocked.Wait());
    EXPECT_OK(blocked.status());
  }
  ASSERT_OK(session.Run({take[0]}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>(), 2);
}

TEST(QueueSessionTest, StepTimeoutCancelsABlockedDequeueAndTheQueueStaysUsable) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT});
  auto x = ops::Placeholder(root, DT_FLOAT);
  auto put = ops::QueueEnqueue(root, q, {x});
  auto take = ops::QueueDequeue(root, q, {DT_FLOAT});
  auto size = ops::QueueSize(root, q);
  ClientSession session(root);
  std::vector<Tensor> out;
  RunOptions timeout;
  timeout.set_timeout_in_ms(100);
  absl::Status s = session.Run(timeout, {}, {take[0]}, {}, &out, nullptr);
  EXPECT_STATUS(s, kDeadlineExceeded, "did not finish within 100 ms");
  // The cancelled dequeue is gone: it does not swallow the next element.
  ASSERT_OK(session.Run({{x, 5.f}}, {}, {put}, &out));
  ASSERT_OK(session.Run({size}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);
  ASSERT_OK(session.Run(timeout, {}, {take[0]}, {}, &out, nullptr));
  EXPECT_EQ(out[0].scalar<float>(), 5.f);
}

TEST(QueueSessionTest, CloseWakesABlockedDequeueWithOutOfRange) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT});
  auto take = ops::QueueDequeue(root, q, {DT_FLOAT});
  auto close = ops::QueueClose(root, q);
  auto put = ops::QueueEnqueue(root, q, {Input(1.f)});
  auto size = ops::QueueSize(root, q);
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({size}, &out));  // sends the graph before the threads start
  {
    Background blocked([&] {
      std::vector<Tensor> got;
      return session.Run({take[0]}, &got);
    });
    EXPECT_FALSE(blocked.FinishedSoon());
    ASSERT_OK(session.Run({}, {}, {close}, &out));
    ASSERT_TRUE(blocked.Wait());
    EXPECT_STATUS(
        blocked.status(), kOutOfRange,
        "FIFOQueue 'q' is closed and has insufficient elements (requested 1, current size 0)");
  }
  EXPECT_STATUS(session.Run({}, {}, {put}, &out), kCancelled, "FIFOQueue 'q' is closed");
}

TEST(QueueSessionTest, AccumulatorAveragesFreshGradientsForAWaitingTake) {
  Scope root = Scope::NewRootScope();
  auto acc = ops::ConditionalAccumulator(root.WithOpName("acc"), DT_FLOAT, {2});
  auto grad = ops::Placeholder(root, DT_FLOAT);
  auto local_step = ops::Placeholder(root, DT_INT64);
  auto apply = ops::AccumulatorApplyGradient(root, acc, local_step, grad);
  auto take = ops::AccumulatorTakeGradient(root, acc, 2, DT_FLOAT);
  auto count = ops::AccumulatorNumAccumulated(root, acc);
  auto set_step = ops::AccumulatorSetGlobalStep(root, acc, int64_t{1});
  ClientSession session(root);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run({}, {}, {set_step}, &out));
  auto apply_grad = [&](int64_t step, float a, float b) {
    std::vector<Tensor> unused;
    return session.Run({{local_step, step}, {grad, {a, b}}}, {}, {apply}, &unused);
  };
  ASSERT_OK(apply_grad(0, 100, 100));  // stale: computed before global step 1
  ASSERT_OK(apply_grad(1, 1, 2));
  {
    Background chief([&] {
      std::vector<Tensor> got;
      absl::Status s = session.Run({take}, &got);
      if (s.ok()) ExpectTensorEqual<float>(got[0], {2, 3}, TensorShape({2}));
      return s;
    });
    EXPECT_FALSE(chief.FinishedSoon());  // one of two gradients
    ASSERT_OK(apply_grad(1, 3, 4));
    ASSERT_TRUE(chief.Wait());
    EXPECT_OK(chief.status());
  }
  ASSERT_OK(session.Run({count}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>(), 0);
  // A take that times out leaves what was accumulated.
  ASSERT_OK(apply_grad(2, 1, 1));
  RunOptions timeout;
  timeout.set_timeout_in_ms(100);
  EXPECT_STATUS(session.Run(timeout, {}, {take}, {}, &out, nullptr), kDeadlineExceeded, "100 ms");
  ASSERT_OK(session.Run({count}, &out));
  EXPECT_EQ(out[0].scalar<int32_t>(), 1);
}

// Two client sessions (two masters) on one task: the graphs name the queue
// differently but share it by shared_name — the "tell the ps to stop" pattern:
// the ps waits for one token per worker.
TEST(QueueSessionTest, TwoSessionsShareAQueueBySharedName) {
  constexpr char kPs[] = "/job:ps/replica:0/task:0";
  Worker ps(kPs, ConfigProto());
  auto graph = [](const std::string& node, bool dequeue) {
    Scope root = Scope::NewRootScope();
    auto q = ops::FIFOQueue(root.WithOpName(node), {DT_INT32},
                            ops::FIFOQueue::Shapes({PartialTensorShape({})}).SharedName("done"));
    if (dequeue) {
      ops::QueueDequeueMany(root.WithOpName("wait_for_workers"), q, 2, {DT_INT32});
    } else {
      ops::QueueEnqueue(root.WithOpName("signal"), q, {Input(1)});
    }
    GraphDef g;
    EXPECT_OK(root.ToGraphDef(&g));
    return g;
  };
  Master ps_session(ConfigProto(), &ps, kPs);
  Master worker_session(ConfigProto(), &ps, kPs);
  ASSERT_OK(ps_session.Create(graph("ps_queue", true)));
  ASSERT_OK(worker_session.Create(graph("worker_queue", false)));
  std::vector<Tensor> out;
  {
    Background waiting([&] {
      std::vector<Tensor> got;
      absl::Status s = ps_session.Run(RunOptions(), {}, {"wait_for_workers:0"}, {}, &got, nullptr);
      if (s.ok()) ExpectTensorEqual<int32_t>(got[0], {1, 1}, TensorShape({2}));
      return s;
    });
    ASSERT_OK(worker_session.Run(RunOptions(), {}, {}, {"signal"}, &out, nullptr));
    EXPECT_FALSE(waiting.FinishedSoon());  // one token of two
    ASSERT_OK(worker_session.Run(RunOptions(), {}, {}, {"signal"}, &out, nullptr));
    ASSERT_TRUE(waiting.Wait());
    EXPECT_OK(waiting.status());
  }
  auto queue = ps.device_mgr().devices()[0]->resource_manager()->Lookup<FIFOQueue>("", "done");
  ASSERT_OK(queue.status());
  EXPECT_EQ((*queue)->size(), 0);
  EXPECT_EQ((*queue)->num_pending_dequeues(), 0);
}

}  // namespace
}  // namespace tensorgrid

namespace tensorgrid {
namespace {

// A node failing in the same partition as a blocked dequeue ends the step
// with its own error: the failure cancels the step, which wakes the dequeue.
TEST(QueueSessionFailureTest, AFailingNodeWakesABlockedDequeueOfItsStep) {
  Scope root = Scope::NewRootScope();
  auto q = ops::FIFOQueue(root.WithOpName("q"), {DT_FLOAT});
  auto take = ops::QueueDequeue(root, q, {DT_FLOAT});
  auto w = ops::Variable(root.WithOpName("w"), {}, DT_FLOAT);
  auto read = ops::Identity(root.WithOpName("read"), w);
  ClientSession session(root);
  absl::Notification done;
  absl::Status status;
  std::thread step([&] {
    std::vector<Tensor> out;
    status = session.Run({take[0], read}, &out);  // no timeout: only the failure can end it
    done.Notify();
  });
  const bool ended = done.WaitForNotificationWithTimeout(absl::Seconds(30));
  if (!ended) {  // unblock the step so the test can end
    std::vector<Tensor> out;
    session.Run({}, {}, {ops::QueueClose(root, q)}, &out).IgnoreError();
  }
  step.join();
  ASSERT_TRUE(ended) << "the step hung after 'read' failed";
  EXPECT_STATUS(status, kFailedPrecondition, "uninitialized variable 'w'");
}

}  // namespace
}  // namespace tensorgrid
