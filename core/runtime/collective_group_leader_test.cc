#include "core/runtime/collective_group_leader.h"

#include <memory>

#include "absl/synchronization/notification.h"
#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

constexpr char kTask0[] = "/job:worker/replica:0/task:0";
constexpr char kTask1[] = "/job:worker/replica:0/task:1";

std::string Cpu(const char* task, int i) { return absl::StrCat(task, "/device:CPU:", i); }

CompleteGroupArgs Join(const std::string& device, int size = 2,
                       absl::Duration timeout = absl::Seconds(30)) {
  CompleteGroupArgs a;
  a.group_key = 7;
  a.group_size = size;
  a.device_type = "CPU";
  a.device = device;
  a.timeout = timeout;
  return a;
}

// One join's answer, waited for (bounded).
struct Answer {
  CompleteGroupResult result;
  absl::Notification done;
  absl::Status status;
  StatusCallback callback() {
    return [this](absl::Status s) {
      status = s;
      done.Notify();
    };
  }
  absl::Status Wait() {
    EXPECT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(30)));
    return status;
  }
};

class LeaderTest : public ::testing::Test {
 protected:
  LeaderTest() : pool_(2), leader_(&pool_) { leader_.SetClusterTasks({kTask0, kTask1}); }
  ThreadPool pool_;
  CollectiveGroupLeader leader_;
};

TEST_F(LeaderTest, AnswersEveryMemberOnceAllJoinedSortedByName) {
  Answer a, b, again;
  leader_.CompleteGroupAsync(Join(Cpu(kTask1, 0)), &a.result, a.callback());
  EXPECT_FALSE(a.done.HasBeenNotified());
  leader_.CompleteGroupAsync(Join(Cpu(kTask0, 0)), &b.result, b.callback());
  ASSERT_OK(a.Wait());
  ASSERT_OK(b.Wait());
  const std::vector<std::string> sorted = {Cpu(kTask0, 0), Cpu(kTask1, 0)};
  EXPECT_EQ(a.result.devices, sorted);
  EXPECT_EQ(b.result.devices, sorted);
  // Later joins of members are answered from the complete group.
  leader_.CompleteGroupAsync(Join(Cpu(kTask1, 0)), &again.result, again.callback());
  ASSERT_OK(again.Wait());
  EXPECT_EQ(again.result.devices, sorted);
}

TEST_F(LeaderTest, TimeoutNamesJoinedMembersAndTasksWithoutOne) {
  Answer a;
  leader_.CompleteGroupAsync(Join(Cpu(kTask0, 0), 2, absl::Milliseconds(50)), &a.result,
                             a.callback());
  EXPECT_STATUS(a.Wait(), kDeadlineExceeded,
                absl::StrCat("collective group 7 (size 2): 1 of 2 members joined within 50ms: ",
                             Cpu(kTask0, 0), "; never joined: ", kTask1));
}

TEST_F(LeaderTest, DisagreeingGroupSizeOrOutsiderIsInvalidArgument) {
  Answer a, b, c, outsider;
  leader_.CompleteGroupAsync(Join(Cpu(kTask0, 0)), &a.result, a.callback());
  leader_.CompleteGroupAsync(Join(Cpu(kTask0, 1), 3), &b.result, b.callback());
  EXPECT_STATUS(b.Wait(), kInvalidArgument, "joins with group_size 3");
  leader_.CompleteGroupAsync(Join(Cpu(kTask1, 0)), &c.result, c.callback());
  ASSERT_OK(a.Wait());
  leader_.CompleteGroupAsync(Join(Cpu(kTask1, 1)), &outsider.result, outsider.callback());
  EXPECT_STATUS(outsider.Wait(), kInvalidArgument, "is not one of them");
}

TEST_F(LeaderTest, InstanceMismatchFailsEveryWaitingMember) {
  Answer a, b;
  leader_.CompleteGroupAsync(Join(Cpu(kTask0, 0)), &a.result, a.callback());
  leader_.CompleteGroupAsync(Join(Cpu(kTask1, 0)), &b.result, b.callback());
  ASSERT_OK(a.Wait());
  auto instance = [](const std::string& device, std::vector<int64_t> shape) {
    CompleteInstanceArgs i;
    i.group_key = 7;
    i.group_size = 2;
    i.instance_key = 1;
    i.device = device;
    i.op = "CollectiveReduce";
    i.dtype = DT_FLOAT;
    i.shape = std::move(shape);
    i.timeout = absl::Seconds(30);
    return i;
  };
  CompleteInstanceResult r0, r1;
  Answer i0, i1;
  leader_.CompleteInstanceAsync(instance(Cpu(kTask0, 0), {4}), &r0, i0.callback());
  leader_.CompleteInstanceAsync(instance(Cpu(kTask1, 0), {5}), &r1, i1.callback());
  EXPECT_STATUS(i0.Wait(), kInvalidArgument, "members disagree");
  EXPECT_STATUS(i1.Wait(), kInvalidArgument, "[5]");
}

TEST_F(LeaderTest, JoinsWithFieldsOutOfRangeAreInvalidArgumentAndChangeNothing) {
  auto join = [&](CompleteGroupArgs args) {
    Answer answer;
    leader_.CompleteGroupAsync(args, &answer.result, answer.callback());
    return answer.Wait();
  };
  EXPECT_STATUS(join(Join(Cpu(kTask0, 0), -5)), kInvalidArgument, "group_size -5 is outside");
  EXPECT_STATUS(join(Join(Cpu(kTask0, 0), 0)), kInvalidArgument, "group_size 0 is outside");
  EXPECT_STATUS(join(Join(Cpu(kTask0, 0), 1 << 20)), kInvalidArgument, "is outside [1, 65536]");
  EXPECT_STATUS(join(Join("/job:worker/task:0")), kInvalidArgument, "is not a full device name");
  EXPECT_STATUS(join(Join("garbage")), kInvalidArgument, "is not a full device name");
  CompleteGroupArgs gpu = Join(Cpu(kTask0, 0));
  gpu.device_type = "GPU";
  EXPECT_STATUS(join(gpu), kInvalidArgument, "device_type 'GPU' is not the type of");
  EXPECT_STATUS(join(Join(Cpu(kTask0, 0), 2, absl::Seconds(-1))), kInvalidArgument,
                "a timeout of -1s is outside");
  // None of them made a group: a good join of size 1 completes at once.
  EXPECT_OK(join(Join(Cpu(kTask0, 0), 1)));
}

TEST_F(LeaderTest, InstancesWithFieldsOutOfRangeAreInvalidArgument) {
  CompleteInstanceArgs good;
  good.group_key = 7;
  good.group_size = 2;
  good.instance_key = 1;
  good.device = Cpu(kTask0, 0);
  good.op = "CollectiveReduce";
  good.dtype = DT_FLOAT;
  good.shape = {4};
  good.timeout = absl::Seconds(30);
  EXPECT_OK(ValidateInstanceJoin(good));
  auto bad = [&](auto change) {
    CompleteInstanceArgs args = good;
    change(args);
    CompleteInstanceResult result;
    Answer answer;
    leader_.CompleteInstanceAsync(args, &result, answer.callback());
    return answer.Wait();
  };
  EXPECT_STATUS(bad([](auto& a) { a.op = "Explode"; }), kInvalidArgument,
                "unknown collective op 'Explode'");
  EXPECT_STATUS(bad([](auto& a) { a.dtype = DT_STRING; }), kInvalidArgument,
                "is not a plain numeric type");
  EXPECT_STATUS(bad([](auto& a) { a.dtype = static_cast<DataType>(999); }), kInvalidArgument,
                "dtype 999");
  EXPECT_STATUS(bad([](auto& a) { a.shape = {-3}; }), kInvalidArgument,
                "joining collective instance 1 of group 7");
  EXPECT_STATUS(bad([](auto& a) { a.next_seq = -1; }), kInvalidArgument, "next_seq -1");
  EXPECT_STATUS(bad([](auto& a) { a.group_size = -5; }), kInvalidArgument, "group_size -5");
  EXPECT_STATUS(bad([](auto& a) { a.device = "/cpu:0"; }), kInvalidArgument,
                "is not a full device name");
}

}  // namespace
}  // namespace tensorgrid
