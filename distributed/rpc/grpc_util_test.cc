#include "distributed/rpc/grpc_util.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/platform/status_testutil.h"
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
  // 20 names no code, yet a grpc::StatusCode may hold it (its values need 6
  // bits); 99 could not be held without undefined behaviour (UBSan).
  grpc::Status odd(static_cast<grpc::StatusCode>(20), "what");
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

std::string WriteTemp(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir == nullptr ? "/tmp" : dir) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(RpcSecurityTest, TokenFileIsTrimmedAndMustNotBeEmpty) {
  absl::StatusOr<RpcSecurity> s =
      RpcSecurity::FromFiles(WriteTemp("token", "  s3cret\n"), "", "", "");
  ASSERT_OK(s.status());
  EXPECT_EQ(s->auth_token, "s3cret");
  EXPECT_FALSE(s->tls());
  const std::string empty = WriteTemp("empty_token", "\n\n");
  EXPECT_STATUS(RpcSecurity::FromFiles(empty, "", "", "").status(), kInvalidArgument,
                "the auth token file '" + empty + "' is empty");
}

TEST(RpcSecurityTest, MissingFilesAndHalfACertificateAreNamed) {
  EXPECT_STATUS(RpcSecurity::FromFiles("/nonexistent/token", "", "", "").status(), kInvalidArgument,
                "cannot read the auth token file '/nonexistent/token'");
  EXPECT_STATUS(RpcSecurity::FromFiles("", "/nonexistent/ca.pem", "", "").status(),
                kInvalidArgument, "TLS CA certificate file '/nonexistent/ca.pem'");
  const std::string cert = WriteTemp("cert.pem", "not really a certificate");
  EXPECT_STATUS(RpcSecurity::FromFiles("", "", cert, "").status(), kInvalidArgument,
                "TLS needs both a certificate and its key; got only the certificate '" + cert);
  absl::StatusOr<RpcSecurity> both = RpcSecurity::FromFiles("", "", cert, cert);
  ASSERT_OK(both.status());
  EXPECT_TRUE(both->tls());
}

TEST(RpcSecurityTest, EnvironmentErrorsSayWhereTheyCameFrom) {
  setenv("TG_AUTH_TOKEN_FILE", "/nonexistent/token", 1);
  absl::StatusOr<RpcSecurity> s = RpcSecurity::FromEnvironment();
  unsetenv("TG_AUTH_TOKEN_FILE");
  EXPECT_STATUS(s.status(), kInvalidArgument, "TG_* environment variables");
  ASSERT_OK(RpcSecurity::FromEnvironment().status());
}

}  // namespace
}  // namespace tensorgrid
