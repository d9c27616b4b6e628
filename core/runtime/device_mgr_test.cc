#include "core/runtime/device_mgr.h"

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

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
