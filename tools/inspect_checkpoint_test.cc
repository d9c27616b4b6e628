// tg_inspect --checkpoint: listings and tensor values, flags.
#include "tools/inspect_checkpoint.h"

#include <cstdlib>
#include <string>

#include "core/platform/status_testutil.h"
#include "core/util/tensor_bundle.h"
#include "gtest/gtest.h"
#include "tools/inspect_lib.h"

namespace tensorgrid {
namespace tg_inspect {
namespace {

constexpr char kHalfPlusTwo[] =
    "tests/testdata/tf_saved_models/saved_model_half_plus_two_cpu/00000123/variables/variables";

TEST(InspectCheckpointTest, ListsTensorFlowsCheckpointSortedByName) {
  auto listing = ListCheckpoint(kHalfPlusTwo);
  ASSERT_TRUE(listing.ok()) << listing.status();
  EXPECT_EQ(*listing,
            "name  dtype  shape  bytes\n"
            "a     float  []     4\n"
            "a2    float  []     4\n"
            "b     float  []     4\n"
            "c     float  []     4\n"
            "c2    float  []     4\n"
            "5 tensors in 1 data shard(s)\n");
}

TEST(InspectCheckpointTest, PrintsATensorSummarized) {
  auto b = PrintCheckpointTensor(kHalfPlusTwo, "b");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(*b, "b (float [])\n2\n");
  const char* root = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(root != nullptr ? root : "/tmp") + "/inspectXXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  Tensor big(DT_INT32, TensorShape({200}));
  for (int i = 0; i < 200; ++i) big.data<int32_t>()[i] = i;
  auto writer = checkpoint::CheckpointWriter::Create(dir + "/model");
  ASSERT_TRUE(writer.ok());
  ASSERT_OK((*writer)->Add("big", big));
  ASSERT_OK((*writer)->Finish());
  auto text = PrintCheckpointTensor(dir + "/model", "big", 3);
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(text->substr(0, 18), "big (int32 [200])\n");
  EXPECT_NE(text->find("(first 3 of 200 values)"), std::string::npos) << *text;
  EXPECT_STATUS(PrintCheckpointTensor(dir + "/model", "nope").status(), kNotFound,
                "tensor 'nope' not found");
  EXPECT_STATUS(ListCheckpoint(dir + "/none").status(), kNotFound, dir + "/none.index");
}

TEST(InspectCheckpointTest, CheckpointFlagsCombineOnlyWithTensor) {
  auto o = ParseFlags({"--checkpoint=/ckpt/model", "--tensor=w"});
  ASSERT_TRUE(o.ok()) << o.status();
  EXPECT_EQ(o->checkpoint, "/ckpt/model");
  EXPECT_EQ(o->tensor, "w");
  EXPECT_STATUS(ParseFlags({"--checkpoint=/ckpt/model", "--graph=g.pbtxt"}).status(),
                kInvalidArgument, "takes only --tensor");
  EXPECT_STATUS(ParseFlags({"--tensor=w", "--graph=g.pbtxt"}).status(), kInvalidArgument,
                "--tensor applies to --checkpoint only");
}

}  // namespace
}  // namespace tg_inspect
}  // namespace tensorgrid
