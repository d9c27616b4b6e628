// SaveV2 and RestoreV2 kernels, run directly.
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/platform/file.h"
#include "core/util/tensor_bundle.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

Tensor Strings(std::vector<std::string> values) {
  return Tensor::FromVector<std::string>(values,
                                         TensorShape({static_cast<int64_t>(values.size())}));
}

class SaveRestoreOpsTest : public OpsTestBase {
 protected:
  SaveRestoreOpsTest() {
    const char* root = std::getenv("TEST_TMPDIR");
    std::string dir = std::string(root != nullptr ? root : "/tmp") + "/opsXXXXXX";
    TG_CHECK(::mkdtemp(dir.data()) != nullptr);
    prefix_ = dir + "/model";
  }

  absl::Status Save(const std::vector<std::string>& names, const std::vector<Tensor>& tensors,
                    std::vector<std::string> slices = {}) {
    std::vector<DataType> dtypes;
    for (const Tensor& t : tensors) dtypes.push_back(t.dtype());
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("save", "SaveV2").Attr("dtypes", dtypes)));
    if (slices.empty()) slices.resize(names.size());
    inputs_.clear();
    AddInput(Tensor::Scalar<std::string>(prefix_));
    AddInput(Strings(names));
    AddInput(Strings(slices));
    for (const Tensor& t : tensors) AddInput(t);
    return RunOp();
  }

  // Restores `names` as `dtypes`; `expected_shapes` become the node's
  // _expected_shapes attr when given.
  absl::Status Restore(const std::vector<std::string>& names, const std::vector<DataType>& dtypes,
                       const std::vector<PartialTensorShape>& expected_shapes = {},
                       std::vector<std::string> slices = {}) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("restore", "RestoreV2").Attr("dtypes", dtypes)));
    if (!expected_shapes.empty()) {
      AttrValue shapes;
      for (const PartialTensorShape& s : expected_shapes) {
        TensorShapeProto* p = shapes.mutable_list()->add_shape();
        if (s.unknown_rank()) p->set_unknown_rank(true);
        for (int d = 0; d < s.dims(); ++d) p->add_dim()->set_size(s.dim_size(d));
      }
      (*node_def_.mutable_attr())["_expected_shapes"] = shapes;
      TG_ASSIGN_OR_RETURN(kernel_,
                          KernelRegistry::Global()->CreateKernel(
                              device(), node_def_, *OpRegistry::Global()->Find("RestoreV2")));
    }
    if (slices.empty()) slices.resize(names.size());
    inputs_.clear();
    AddInput(Tensor::Scalar<std::string>(prefix_));
    AddInput(Strings(names));
    AddInput(Strings(slices));
    return RunOp();
  }

  std::string prefix_;
};

TEST_F(SaveRestoreOpsTest, SavesAndRestoresByName) {
  ASSERT_OK(Save({"w", "step", "vocab"}, {Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}),
                                          Tensor::Scalar<int64_t>(42), Strings({"a", "bc"})}));
  EXPECT_TRUE(checkpoint::CheckpointExists(prefix_));
  // Any subset, any order.
  ASSERT_OK(Restore({"vocab", "w"}, {DT_STRING, DT_FLOAT}));
  EXPECT_EQ(GetOutput(0).data<std::string>()[1], "bc");
  ExpectTensorEqual<float>(GetOutput(1), {1, 2, 3, 4}, TensorShape({2, 2}));
  ASSERT_OK(Restore({"step"}, {DT_INT64}, {PartialTensorShape({})}));
  ExpectTensorEqual<int64_t>(GetOutput(0), {42}, TensorShape({}));
  ASSERT_OK(Restore({"w"}, {DT_FLOAT}, {PartialTensorShape({-1, 2})}));
  ASSERT_OK(Restore({"w"}, {DT_FLOAT}, {PartialTensorShape()}));
}

TEST_F(SaveRestoreOpsTest, RestoreChecksNamesDtypesAndShapes) {
  ASSERT_OK(Save({"w"}, {Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})}));
  EXPECT_STATUS(
      Restore({"v"}, {DT_FLOAT}), kNotFound,
      "tensor 'v' not found in checkpoint '" + prefix_ + "' (index file '" + prefix_ + ".index')");
  EXPECT_STATUS(
      Restore({"w"}, {DT_INT32}), kInvalidArgument,
      "tensor 'w' in checkpoint '" + prefix_ + "' has dtype float, but the graph expects int32");
  EXPECT_STATUS(Restore({"w"}, {DT_FLOAT}, {PartialTensorShape({4})}), kInvalidArgument,
                "has shape [2,2], but the graph expects shape [4]");
  EXPECT_STATUS(Restore({"w"}, {DT_FLOAT}, {PartialTensorShape({})}), kInvalidArgument,
                "has shape [2,2], but the graph expects shape []");
  prefix_ += "-missing";
  EXPECT_STATUS(Restore({"w"}, {DT_FLOAT}), kNotFound, "checkpoint '" + prefix_ + "' not found");
}

TEST_F(SaveRestoreOpsTest, SavesAndRestoresSlices) {
  // Rows 0-1 and 2-3 of a 4x2 tensor, saved as two slices, restored whole
  // and as another slice.
  ASSERT_OK(Save({"p", "p"},
                 {Tensor::FromVector<float>({0, 1, 2, 3}, {2, 2}),
                  Tensor::FromVector<float>({4, 5, 6, 7}, {2, 2})},
                 {"4 2 0,2:-", "4 2 2,2:-"}));
  ASSERT_OK(Restore({"p"}, {DT_FLOAT}));
  ExpectTensorEqual<float>(GetOutput(0), {0, 1, 2, 3, 4, 5, 6, 7}, TensorShape({4, 2}));
  ASSERT_OK(Restore({"p"}, {DT_FLOAT}, {}, {"4 2 1,2:-"}));
  ExpectTensorEqual<float>(GetOutput(0), {2, 3, 4, 5}, TensorShape({2, 2}));
  EXPECT_STATUS(Restore({"p"}, {DT_FLOAT}, {}, {"4 4 0,2:-"}), kInvalidArgument,
                "has shape [4,2], but shape_and_slices says [4,4]");
  EXPECT_STATUS(Restore({"p"}, {DT_FLOAT}, {}, {"4 2 zz"}), kInvalidArgument, "tensor 'p'");
  EXPECT_STATUS(Save({"w"}, {Tensor::FromVector<float>({1, 2}, {2})}, {"4 0,3"}),
                kInvalidArgument, "has shape [3], but the tensor given has shape [2]");
}

TEST_F(SaveRestoreOpsTest, MergeV2CheckpointsMergesAndRemovesTemporaryDirs) {
  const std::string dest = prefix_;
  const std::string temp_dir = prefix_ + "_temp_1234";
  const std::vector<std::string> parts = {temp_dir + "/part-00000-of-00002",
                                          temp_dir + "/part-00001-of-00002"};
  prefix_ = parts[0];
  ASSERT_OK(Save({"a"}, {Tensor::Scalar<float>(1)}));
  prefix_ = parts[1];
  ASSERT_OK(Save({"b"}, {Tensor::Scalar<int64_t>(2)}));
  ASSERT_OK(MakeOp(NodeDefBuilder("merge", "MergeV2Checkpoints")));
  inputs_.clear();
  AddInput(Strings(parts));
  AddInput(Tensor::Scalar<std::string>(dest));
  ASSERT_OK(RunOp());
  prefix_ = dest;
  ASSERT_OK(Restore({"a", "b"}, {DT_FLOAT, DT_INT64}));
  EXPECT_EQ(GetOutput(0).scalar<float>(), 1);
  EXPECT_EQ(GetOutput(1).scalar<int64_t>(), 2);
  EXPECT_FALSE(checkpoint::CheckpointExists(parts[0]));
  EXPECT_NE(::access(temp_dir.c_str(), F_OK), 0);  // delete_old_dirs defaults to true
  ASSERT_OK(MakeOp(NodeDefBuilder("merge", "MergeV2Checkpoints")));
  inputs_.clear();
  AddInput(Strings(parts));
  AddInput(Tensor::Scalar<std::string>(dest));
  EXPECT_STATUS(RunOp(), kNotFound, parts[0] + ".index");  // the sources are gone
}

TEST_F(SaveRestoreOpsTest, MalformedArgumentsAreInvalidArgument) {
  EXPECT_STATUS(Save({"a", "b"}, {Tensor::Scalar<float>(1)}), kInvalidArgument,
                "tensor_names must be a vector of 1 names");
  ASSERT_OK(
      MakeOp(NodeDefBuilder("save", "SaveV2").Attr("dtypes", std::vector<DataType>{DT_FLOAT})));
  inputs_.clear();
  AddInput(Strings({prefix_}));  // a vector, not a scalar
  AddInput(Strings({"a"}));
  AddInput(Strings({""}));
  AddInput(Tensor::Scalar<float>(1));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "prefix must be a string scalar");
  prefix_ = "";
  EXPECT_STATUS(Save({"a"}, {Tensor::Scalar<float>(1)}), kInvalidArgument, "prefix is empty");
}

TEST_F(SaveRestoreOpsTest, CorruptedDataIsDataLossNamingFileAndTensor) {
  ASSERT_OK(Save({"w"}, {Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2})}));
  std::string data_path = (*checkpoint::CheckpointReader::Open(prefix_))->data_path();
  std::string bytes = *ReadFileToString(data_path);
  bytes[bytes.size() - 1] ^= 1;
  ASSERT_OK(WriteFileAtomically(data_path, bytes));
  absl::Status s = Restore({"w"}, {DT_FLOAT});
  EXPECT_STATUS(s, kDataLoss,
                "tensor 'w' in checkpoint data file '" + data_path + "' is corrupted");
}

}  // namespace
}  // namespace tensorgrid
