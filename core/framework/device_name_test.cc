#include "core/framework/device_name.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

ParsedDeviceName P(absl::string_view name) {
  absl::StatusOr<ParsedDeviceName> parsed = DeviceNameUtils::Parse(name);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : ParsedDeviceName();
}

std::string RoundTrip(absl::string_view name) { return DeviceNameUtils::ToString(P(name)); }

TEST(DeviceNameTest, ParsesAFullName) {
  ParsedDeviceName n = P("/job:ps/replica:1/task:2/device:GPU:3");
  EXPECT_TRUE(n.IsFullySpecified());
  EXPECT_EQ(n.job, "ps");
  EXPECT_EQ(n.replica, 1);
  EXPECT_EQ(n.task, 2);
  EXPECT_EQ(n.type, "GPU");
  EXPECT_EQ(n.id, 3);
  EXPECT_EQ(DeviceNameUtils::ToString(n), "/job:ps/replica:1/task:2/device:GPU:3");
}

TEST(DeviceNameTest, EveryPartIsOptional) {
  EXPECT_TRUE(P("").IsEmpty());
  EXPECT_TRUE(P("/").IsEmpty());
  ParsedDeviceName n = P("/job:worker/task:1");
  EXPECT_TRUE(n.has_job && n.has_task);
  EXPECT_FALSE(n.has_replica || n.has_type || n.has_id);
  EXPECT_EQ(RoundTrip("/job:worker/task:1"), "/job:worker/task:1");
  EXPECT_EQ(RoundTrip("/replica:0"), "/replica:0");
  EXPECT_EQ(RoundTrip("/task:7/device:CPU:1"), "/task:7/device:CPU:1");
  EXPECT_EQ(RoundTrip("/device:CPU"), "/device:CPU");
  EXPECT_EQ(RoundTrip(""), "");
}

TEST(DeviceNameTest, WildcardsMeanUnset) {
  EXPECT_TRUE(P("/job:*/replica:*/task:*/device:*:*").IsEmpty());
  EXPECT_TRUE(P("/device:*").IsEmpty());
  ParsedDeviceName n = P("/job:ps/replica:*/task:0/device:GPU:*");
  EXPECT_FALSE(n.has_replica);
  EXPECT_FALSE(n.has_id);
  EXPECT_TRUE(n.has_type);
  EXPECT_EQ(DeviceNameUtils::ToString(n), "/job:ps/task:0/device:GPU");
  ParsedDeviceName id_only = P("/device:*:2");
  EXPECT_FALSE(id_only.has_type);
  EXPECT_TRUE(id_only.has_id);
  EXPECT_EQ(DeviceNameUtils::ToString(id_only), "/device:*:2");
  EXPECT_EQ(P(DeviceNameUtils::ToString(id_only)), id_only);
}

TEST(DeviceNameTest, LegacyNamesAndLowerCaseTypes) {
  EXPECT_EQ(RoundTrip("/cpu:0"), "/device:CPU:0");
  EXPECT_EQ(RoundTrip("/gpu:1"), "/device:GPU:1");
  EXPECT_EQ(RoundTrip("/GPU:2"), "/device:GPU:2");
  EXPECT_EQ(RoundTrip("/gpu:*"), "/device:GPU");
  EXPECT_EQ(RoundTrip("/job:ps/task:0/cpu:3"), "/job:ps/task:0/device:CPU:3");
  EXPECT_EQ(RoundTrip("/device:cpu:0"), "/device:CPU:0");
  EXPECT_EQ(RoundTrip("/device:xla_cpu:0"), "/device:XLA_CPU:0");
  EXPECT_EQ(P("/cpu:0"), P("/device:CPU:0"));
}

// Each malformed name is rejected with a message that quotes it and says which
// part is wrong.
TEST(DeviceNameTest, RejectsMalformedNames) {
  struct Case {
    const char* name;
    const char* why;
  };
  const std::vector<Case> cases = {
      {"job:ps", "it must start with '/'"},
      {"cpu:0", "it must start with '/'"},
      {"/job:ps/task:x", "task must be a non-negative integer, got 'x'"},
      {"/job:ps/task:-1", "task must be a non-negative integer, got '-1'"},
      {"/job:ps/task:", "task must be a non-negative integer, got ''"},
      {"/job:ps/task:+1", "task must be a non-negative integer, got '+1'"},
      {"/task:99999999999", "task must be a non-negative integer, got '99999999999'"},
      {"/replica:one", "replica must be a non-negative integer, got 'one'"},
      {"/device:CPU:x", "device id must be a non-negative integer, got 'x'"},
      {"/device:CPU:0:1", "device id must be a non-negative integer, got '0:1'"},
      {"/device:CPU:", "device id must be a non-negative integer, got ''"},
      {"/cpu:", "device id must be a non-negative integer, got ''"},
      {"/gpu:a", "device id must be a non-negative integer, got 'a'"},
      {"/device:", "device type must be a letter followed by letters, digits or '_', got ''"},
      {"/device:0", "device type must be a letter followed by letters, digits or '_', got '0'"},
      {"/device:C-PU:0",
       "device type must be a letter followed by letters, digits or '_', got 'C-PU'"},
      {"/job:", "job must be a letter followed by letters, digits or '_', got ''"},
      {"/job:1ps", "job must be a letter followed by letters, digits or '_', got '1ps'"},
      {"/job:my job", "job must be a letter followed by letters, digits or '_', got 'my job'"},
      {"/job:ps//task:0", "it has an empty part (a stray '/')"},
      {"/job:ps/", "it has an empty part (a stray '/')"},
      {"//", "it has an empty part (a stray '/')"},
      {"/job", "part 'job' has no ':' (expected job:, replica:, task: or device:)"},
      {"/job:ps/CPU", "part 'CPU' has no ':'"},
      {"/host:a", "unknown part 'host:a' (expected job, replica, task or device)"},
      {"/tpu:0", "unknown part 'tpu:0'"},
      {"/task:0/replica:0", "replica must come before task"},
      {"/device:CPU:0/job:ps", "job must come before device"},
      {"/cpu:0/task:1", "task must come before device"},
      {"/job:a/job:b", "job appears twice"},
      {"/task:0/task:0", "task appears twice"},
      {"/device:CPU:0/gpu:0", "device appears twice"},
      {"/cpu:0/cpu:0", "device appears twice"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    absl::Status s = DeviceNameUtils::Parse(c.name).status();
    EXPECT_STATUS(s, kInvalidArgument, absl::StrCat("device name '", c.name, "' is malformed: "));
    EXPECT_STATUS(s, kInvalidArgument, c.why);
  }
}

TEST(DeviceNameTest, FullNameTaskNameAndAddressSpace) {
  EXPECT_EQ(DeviceNameUtils::FullName("worker", 0, 3, "CPU", 1),
            "/job:worker/replica:0/task:3/device:CPU:1");
  ParsedDeviceName n = P("/job:ps/replica:0/task:0/device:CPU:0");
  EXPECT_EQ(DeviceNameUtils::TaskName(n), "/job:ps/replica:0/task:0");
  EXPECT_EQ(DeviceNameUtils::TaskName(P("/job:ps/device:CPU:0")), "/job:ps");
  EXPECT_EQ(DeviceNameUtils::ToString(DeviceNameUtils::AddressSpace(n)),
            "/job:ps/replica:0/task:0");
}

TEST(DeviceNameTest, MergeFillsUnsetParts) {
  ParsedDeviceName target = P("/job:ps");
  ASSERT_OK(DeviceNameUtils::MergeDevNames(&target, P("/task:1/device:CPU:0")));
  EXPECT_EQ(DeviceNameUtils::ToString(target), "/job:ps/task:1/device:CPU:0");
  ASSERT_OK(DeviceNameUtils::MergeDevNames(&target, P("/job:ps/cpu:0")));
  EXPECT_EQ(DeviceNameUtils::ToString(target), "/job:ps/task:1/device:CPU:0");
  ASSERT_OK(DeviceNameUtils::MergeDevNames(&target, P("")));
  EXPECT_EQ(DeviceNameUtils::ToString(target), "/job:ps/task:1/device:CPU:0");
}

TEST(DeviceNameTest, MergeConflictsNameBoth) {
  ParsedDeviceName target = P("/job:ps/task:0");
  EXPECT_STATUS(DeviceNameUtils::MergeDevNames(&target, P("/job:worker")), kInvalidArgument,
                "cannot merge device names '/job:ps/task:0' and '/job:worker': jobs differ "
                "('ps' vs 'worker')");
  EXPECT_EQ(DeviceNameUtils::ToString(target), "/job:ps/task:0");  // unchanged
  EXPECT_STATUS(DeviceNameUtils::MergeDevNames(&target, P("/task:1")), kInvalidArgument,
                "tasks differ ('0' vs '1')");
  ParsedDeviceName r = P("/replica:0");
  EXPECT_STATUS(DeviceNameUtils::MergeDevNames(&r, P("/replica:2")), kInvalidArgument,
                "replicas differ");
  ParsedDeviceName t = P("/device:CPU:0");
  EXPECT_STATUS(DeviceNameUtils::MergeDevNames(&t, P("/gpu:0")), kInvalidArgument,
                "device types differ ('CPU' vs 'GPU')");
  EXPECT_STATUS(DeviceNameUtils::MergeDevNames(&t, P("/cpu:1")), kInvalidArgument,
                "device ids differ ('0' vs '1')");
  EXPECT_EQ(DeviceNameUtils::ToString(t), "/device:CPU:0");
}

TEST(DeviceNameTest, SoftMergeDropsConflictingTypeAndId) {
  ParsedDeviceName t = P("/job:ps/device:GPU:0");
  ASSERT_OK(DeviceNameUtils::MergeDevNames(&t, P("/task:2/device:CPU:1"), true));
  EXPECT_EQ(DeviceNameUtils::ToString(t), "/job:ps/task:2");
  ParsedDeviceName ids = P("/device:CPU:0");
  ASSERT_OK(DeviceNameUtils::MergeDevNames(&ids, P("/device:CPU:3"), true));
  EXPECT_EQ(DeviceNameUtils::ToString(ids), "/device:CPU");
  // Job conflicts fail even with soft placement.
  ParsedDeviceName job = P("/job:ps");
  EXPECT_STATUS(DeviceNameUtils::MergeDevNames(&job, P("/job:worker"), true), kInvalidArgument,
                "jobs differ");
  EXPECT_TRUE(DeviceNameUtils::AreCompatibleDevNames(P("/job:ps"), P("/task:0/cpu:0")));
  EXPECT_FALSE(DeviceNameUtils::AreCompatibleDevNames(P("/cpu:0"), P("/gpu:0")));
}

TEST(DeviceNameTest, SpecificationMatching) {
  const ParsedDeviceName dev = P("/job:worker/replica:0/task:1/device:CPU:2");
  EXPECT_TRUE(DeviceNameUtils::IsSpecification(P(""), dev));
  EXPECT_TRUE(DeviceNameUtils::IsSpecification(P("/job:worker"), dev));
  EXPECT_TRUE(DeviceNameUtils::IsSpecification(P("/task:1/cpu:2"), dev));
  EXPECT_TRUE(DeviceNameUtils::IsSpecification(P("/device:CPU:*"), dev));
  EXPECT_FALSE(DeviceNameUtils::IsSpecification(P("/job:ps"), dev));
  EXPECT_FALSE(DeviceNameUtils::IsSpecification(P("/gpu:2"), dev));
  EXPECT_FALSE(DeviceNameUtils::IsSpecification(P("/device:CPU:0"), dev));
  // A set part in the spec needs the same part set in the name.
  EXPECT_FALSE(DeviceNameUtils::IsSpecification(P("/task:1"), P("/job:worker")));
  EXPECT_TRUE(DeviceNameUtils::IsCompleteSpecification(P("/job:worker"), dev));
  EXPECT_FALSE(DeviceNameUtils::IsCompleteSpecification(P("/job:worker"), P("/job:worker/task:1")));
}

TEST(DeviceNameTest, SameAddressSpace) {
  EXPECT_TRUE(DeviceNameUtils::IsSameAddressSpace("/job:ps/replica:0/task:0/device:CPU:0",
                                                  "/job:ps/replica:0/task:0/device:GPU:1"));
  EXPECT_FALSE(DeviceNameUtils::IsSameAddressSpace("/job:ps/replica:0/task:0/device:CPU:0",
                                                   "/job:ps/replica:0/task:1/device:CPU:0"));
  EXPECT_FALSE(DeviceNameUtils::IsSameAddressSpace("/job:ps/task:0", "/job:ps/task:0"));
  EXPECT_FALSE(DeviceNameUtils::IsSameAddressSpace("/job:ps/replica:0/task:0", "bad"));
}

TEST(DeviceNameTest, EqualityAndOrdering) {
  EXPECT_EQ(P("/job:a/task:1"), P("/job:a/task:1/device:*"));
  EXPECT_NE(P("/job:a/task:1"), P("/job:a/task:2"));
  EXPECT_NE(P("/job:a"), P("/job:a/task:0"));
  EXPECT_LT(P("/job:a"), P("/job:b"));
  EXPECT_LT(P("/job:a/task:2"), P("/job:a/task:10"));
  EXPECT_LT(P("/job:a"), P("/job:a/task:0"));  // unset before set
  std::vector<std::string> names = {
      "/job:worker/replica:0/task:0/device:CPU:10", "/job:worker/replica:0/task:0/device:CPU:2",
      "/job:ps/replica:0/task:0/device:CPU:0",      "not a device",
      "/job:worker/replica:0/task:0/device:GPU:0",
  };
  std::sort(names.begin(), names.end(), DeviceNameUtils::CompareFullNames);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "not a device",
                       "/job:ps/replica:0/task:0/device:CPU:0",
                       "/job:worker/replica:0/task:0/device:CPU:2",
                       "/job:worker/replica:0/task:0/device:CPU:10",
                       "/job:worker/replica:0/task:0/device:GPU:0",
                   }));
  EXPECT_FALSE(DeviceNameUtils::CompareFullNames("/cpu:0", "/cpu:0"));
}

}  // namespace
}  // namespace tensorgrid
