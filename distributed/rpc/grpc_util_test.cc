#include "distributed/rpc/grpc_util.h"

#include <chrono>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TEST(GrpcUtilTest, EveryCodeRoundTripsWithItsMessage) {
  for (int code = 0; code <= static_cast<int>(absl::StatusCode::kUnauthenticated); ++code) {
    absl::Status s(static_cast<absl::StatusCode>(code), code == 0 ? "" : "node 'x' is bad");
    grpc::Status wire = ToGrpcStatus(s);
    EXPECT_EQ(static_cast<int>(wire.error_code()), code);
    EXPECT_EQ(FromGrpcStatus(wire), s);
  }
  grpc::Status unavailable(grpc::StatusCode::UNAVAILABLE, "task /job:ps/task:0 is down");
  EXPECT_EQ(FromGrpcStatus(unavailable), absl::UnavailableError("task /job:ps/task:0 is down"));
}

TEST(GrpcUtilTest, PayloadsRoundTrip) {
  absl::Status s = absl::AbortedError("receive of 'k' aborted");
  s.SetPayload("tensorgrid/derived", absl::Cord("1"));
  s.SetPayload("example.com/other", absl::Cord(std::string("\0\1\2", 3)));
  const absl::Status back = FromGrpcStatus(ToGrpcStatus(s));
  EXPECT_EQ(back, s);
  EXPECT_EQ(back.GetPayload("tensorgrid/derived"), absl::Cord("1"));
}

TEST(GrpcUtilTest, GarbageDetailsAreIgnored) {
  grpc::Status odd(grpc::StatusCode::INTERNAL, "boom", std::string("\xff\xff\xff", 3));
  EXPECT_EQ(FromGrpcStatus(odd), absl::InternalError("boom"));
}

TEST(GrpcUtilTest, CodeOutsideTheEnumIsUnknown) {
  grpc::Status odd(static_cast<grpc::StatusCode>(99), "what");
  EXPECT_EQ(FromGrpcStatus(odd), absl::UnknownError("what"));
}

TEST(GrpcUtilTest, DeadlineIsSetOnlyForAFiniteTimeout) {
  grpc::ClientContext none;
  const auto unset = none.deadline();
  SetDeadline(&none, absl::InfiniteDuration());
  EXPECT_EQ(none.deadline(), unset);

  grpc::ClientContext two_seconds;
  const auto before = std::chrono::system_clock::now();
  SetDeadline(&two_seconds, absl::Seconds(2));
  EXPECT_GE(two_seconds.deadline(), before + std::chrono::seconds(2));
  EXPECT_LT(two_seconds.deadline(), before + std::chrono::seconds(30));  // not a timing check
}

}  // namespace
}  // namespace tensorgrid
