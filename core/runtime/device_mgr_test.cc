#define EIGEN_USE_THREADS

#include "core/runtime/device_mgr.h"

#include "core/platform/env.h"
#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"
#include "unsupported/Eigen/CXX11/Tensor"

namespace tensorgrid {
namespace {

TEST(DeviceMgrTest, DeviceCountGivesThatManyCpus) {
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 3;
  auto mgr = DeviceMgr::ForTask("/job:localhost/replica:0/task:0", config);
  ASSERT_EQ(mgr->devices().size(), 3u);
  EXPECT_EQ(mgr->devices()[2]->name(), "/job:localhost/replica:0/task:0/device:CPU:2");
  EXPECT_NE(mgr->devices()[0]->incarnation(), mgr->devices()[1]->incarnation());
}

// What a task's kernels parallelize over (MatMul cuts its product into one
// block a thread): intra_op_parallelism_threads, or one per core the
// process may run on.
TEST(DeviceMgrTest, CpuDevicesHaveTheIntraOpThreads) {
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  config.set_intra_op_parallelism_threads(3);
  auto mgr = DeviceMgr::ForTask("/job:worker/replica:0/task:1", config);
  ASSERT_EQ(mgr->devices().size(), 2u);
  for (const auto& d : mgr->devices())
    EXPECT_EQ(d->eigen_cpu_device().numThreads(), 3) << d->name();
  config.set_intra_op_parallelism_threads(0);
  mgr = DeviceMgr::ForTask("/job:worker/replica:0/task:1", config);
  EXPECT_EQ(mgr->devices()[0]->eigen_cpu_device().numThreads(), NumSchedulableCPUs());
}

TEST(DeviceMgrTest, LookupByFullOrPartialName) {
  ConfigProto config;
  (*config.mutable_device_count())["CPU"] = 2;
  auto mgr = DeviceMgr::ForTask("/job:localhost/replica:0/task:0", config);
  auto full = mgr->LookupDevice("/job:localhost/replica:0/task:0/device:CPU:1");
  ASSERT_TRUE(full.ok());
  auto legacy = mgr->LookupDevice("/cpu:1");
  ASSERT_TRUE(legacy.ok());
  EXPECT_EQ(*full, *legacy);
  EXPECT_STATUS(mgr->LookupDevice("/device:CPU").status(), kNotFound, "ambiguous");
  EXPECT_STATUS(mgr->LookupDevice("/device:GPU:0").status(), kNotFound,
                "does not exist here; devices: /job:localhost/replica:0/task:0/device:CPU:0");
  EXPECT_STATUS(mgr->LookupDevice("/task:x").status(), kInvalidArgument, "malformed");
}

}  // namespace
}  // namespace tensorgrid
