#include "core/framework/rendezvous.h"

#include <thread>

#include "absl/synchronization/notification.h"
#include "core/platform/status.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

const std::string kKey = CreateRendezvousKey("/job:a/replica:0/task:0/device:CPU:0", 0xabc,
                                             "/job:a/replica:0/task:0/device:CPU:1", "edge_x_0");

TEST(RendezvousTest, KeyFormat) {
  EXPECT_EQ(
      kKey,
      "/job:a/replica:0/task:0/device:CPU:0;abc;/job:a/replica:0/task:0/device:CPU:1;edge_x_0;0:0");
}

TEST(RendezvousTest, SendThenRecvSharesTheBuffer) {
  LocalRendezvous r;
  Tensor t = Tensor::FromVector<float>({1, 2}, TensorShape({2}));
  ASSERT_OK(r.Send(kKey, t));
  bool called = false;
  r.RecvAsync(kKey, [&](const absl::Status& s, const Tensor& v) {
    EXPECT_TRUE(s.ok());
    EXPECT_TRUE(v.SharesBufferWith(t));
    called = true;
  });
  EXPECT_TRUE(called);
}

TEST(RendezvousTest, RecvWaitsForSendFromAnotherThread) {
  LocalRendezvous r;
  absl::Notification got;
  float value = 0;
  r.RecvAsync(kKey, [&](const absl::Status& s, const Tensor& v) {
    if (s.ok()) value = v.scalar<float>();
    got.Notify();
  });
  std::thread sender([&] { EXPECT_OK(r.Send(kKey, Tensor::Scalar<float>(7))); });
  EXPECT_TRUE(got.WaitForNotificationWithTimeout(absl::Seconds(10)));
  sender.join();
  EXPECT_EQ(value, 7);
}

TEST(RendezvousTest, DoubleSendIsAlreadyExists) {
  LocalRendezvous r;
  ASSERT_OK(r.Send(kKey, Tensor::Scalar<float>(1)));
  EXPECT_STATUS(r.Send(kKey, Tensor::Scalar<float>(2)), kAlreadyExists, "sent twice");
}

TEST(RendezvousTest, AbortFailsPendingAndLaterReceivesWithRootCauseMarkedDerived) {
  LocalRendezvous r;
  absl::Status pending;
  r.RecvAsync(kKey, [&](const absl::Status& s, const Tensor&) { pending = s; });
  r.StartAbort(errors::InvalidArgument("node 'boom' (Op): bad"));
  EXPECT_STATUS(pending, kInvalidArgument, "boom");
  EXPECT_TRUE(IsDerivedError(pending));
  absl::Status later;
  r.RecvAsync("other", [&](const absl::Status& s, const Tensor&) { later = s; });
  EXPECT_STATUS(later, kInvalidArgument, "boom");
  EXPECT_STATUS(r.Send("x", Tensor::Scalar<float>(1)), kInvalidArgument, "boom");
}

TEST(RendezvousTest, DerivedMarkSurvivesAddedContext) {
  absl::Status s = WithContext(MarkDerived(errors::Cancelled("c")), "node 'r' (_Recv)");
  EXPECT_TRUE(IsDerivedError(s));
  EXPECT_FALSE(IsDerivedError(errors::Cancelled("c")));
}

TEST(RendezvousTest, CancellingAWaitingReceiveWithdrawsItAndFreesTheKey) {
  auto r = std::make_shared<LocalRendezvous>();
  CancellationManager cancellation;
  absl::Status first;
  r->RecvAsync(
      kKey, [&](const absl::Status& s, const Tensor&) { first = s; }, &cancellation);
  EXPECT_TRUE(first.ok());  // still waiting
  cancellation.StartCancel();
  EXPECT_EQ(first.code(), absl::StatusCode::kCancelled) << first;
  EXPECT_TRUE(IsDerivedError(first));
  // The key is free: the value goes to the next receiver, once.
  ASSERT_OK(r->Send(kKey, Tensor::Scalar<float>(3)));
  float value = 0;
  r->RecvAsync(kKey, [&](const absl::Status& s, const Tensor& v) {
    ASSERT_OK(s);
    value = v.scalar<float>();
  });
  EXPECT_EQ(value, 3);
}

TEST(RendezvousTest, AReceiveAnsweredBeforeItsCancellationIsNotWithdrawn) {
  auto r = std::make_shared<LocalRendezvous>();
  CancellationManager cancellation;
  int calls = 0;
  absl::Status status;
  r->RecvAsync(
      kKey,
      [&](const absl::Status& s, const Tensor&) {
        ++calls;
        status = s;
      },
      &cancellation);
  ASSERT_OK(r->Send(kKey, Tensor::Scalar<float>(1)));
  cancellation.StartCancel();
  EXPECT_EQ(calls, 1);
  EXPECT_OK(status);
  // A receive on an already cancelled step fails at once.
  absl::Status late;
  r->RecvAsync(
      "other", [&](const absl::Status& s, const Tensor&) { late = s; }, &cancellation);
  EXPECT_EQ(late.code(), absl::StatusCode::kCancelled) << late;
}

}  // namespace
}  // namespace tensorgrid
