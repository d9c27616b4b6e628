// The generated gRPC stubs build, link, and talk over loopback: a server on a
// free port answers a method it does not implement with UNIMPLEMENTED.
#include <memory>

#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "proto/worker.grpc.pb.h"

namespace tensorgrid {
namespace {

TEST(ServiceProtosTest, StubReachesServerOnLoopback) {
  WorkerService::Service service;  // every method: UNIMPLEMENTED
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ASSERT_NE(server, nullptr);
  ASSERT_GT(port, 0);

  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = WorkerService::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  GetStatusRequest request;
  GetStatusResponse response;
  grpc::Status s = stub->GetStatus(&ctx, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED) << s.error_message();
  server->Shutdown();
}

}  // namespace
}  // namespace tensorgrid
