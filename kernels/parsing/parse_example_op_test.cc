#include <string>
#include <utility>
#include <vector>

#include "kernels/ops_testutil.h"
#include "proto/example.pb.h"

namespace tensorgrid {
namespace {

Feature Floats(std::vector<float> values) {
  Feature f;
  for (float v : values) f.mutable_float_list()->add_value(v);
  return f;
}
Feature Int64s(std::vector<int64_t> values) {
  Feature f;
  for (int64_t v : values) f.mutable_int64_list()->add_value(v);
  return f;
}
Feature Bytes(std::vector<std::string> values) {
  Feature f;
  for (const std::string& v : values) f.mutable_bytes_list()->add_value(v);
  return f;
}

std::string Serialized(std::vector<std::pair<std::string, Feature>> features) {
  Example example;
  for (auto& [key, feature] : features)
    (*example.mutable_features()->mutable_feature())[key] = feature;
  return example.SerializeAsString();
}

Tensor Strings(std::vector<std::string> values) {
  return Tensor::FromVector<std::string>(values,
                                         TensorShape({static_cast<int64_t>(values.size())}));
}

class ParseExampleTest : public OpsTestBase {
 protected:
  // ParseExample with dense features (key, dtype, shape) and sparse ones.
  absl::Status MakeV1(std::vector<DataType> sparse_types, std::vector<DataType> dense_types,
                      std::vector<PartialTensorShape> dense_shapes) {
    return MakeOp(NodeDefBuilder("parse", "ParseExample")
                      .Attr("Nsparse", static_cast<int64_t>(sparse_types.size()))
                      .Attr("Ndense", static_cast<int64_t>(dense_types.size()))
                      .Attr("sparse_types", sparse_types)
                      .Attr("Tdense", dense_types)
                      .Attr("dense_shapes", dense_shapes));
  }
};

TEST_F(ParseExampleTest, DenseFeaturesWithDefaults) {
  ASSERT_OK(MakeV1({}, {DT_FLOAT, DT_FLOAT}, {PartialTensorShape({1}), PartialTensorShape({1})}));
  AddInput(Strings({Serialized({{"x", Floats({1.5f})}, {"x2", Floats({7})}}),
                    Serialized({{"x", Floats({-2})}})}));
  AddInput(Strings({}));
  AddInput(Tensor::Scalar<std::string>("x"));
  AddInput(Tensor::Scalar<std::string>("x2"));
  AddInput(Tensor(DT_FLOAT, TensorShape({0})));       // x is required
  AddInput(Tensor::FromVector<float>({0.25f}, {1}));  // x2 defaults to 0.25
  ASSERT_OK(RunOp());
  ExpectTensorEqual<float>(GetOutput(0), {1.5f, -2}, {2, 1});
  ExpectTensorEqual<float>(GetOutput(1), {7, 0.25f}, {2, 1});
}

TEST_F(ParseExampleTest, MissingRequiredFeatureNamesKeyAndExample) {
  ASSERT_OK(MakeV1({}, {DT_FLOAT}, {PartialTensorShape({1})}));
  AddInput(Strings({Serialized({{"x", Floats({1})}}), Serialized({{"y", Floats({1})}})}));
  AddInput(Strings({"first", "second"}));
  AddInput(Tensor::Scalar<std::string>("x"));
  AddInput(Tensor(DT_FLOAT, TensorShape({0})));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "example 1 ('second'): feature 'x' (float) is required but missing");
}

TEST_F(ParseExampleTest, WrongDtypeAndWrongLengthAreInvalidArgument) {
  ASSERT_OK(MakeV1({}, {DT_FLOAT}, {PartialTensorShape({2})}));
  AddInput(Strings({Serialized({{"x", Int64s({1, 2})}})}));
  AddInput(Strings({}));
  AddInput(Tensor::Scalar<std::string>("x"));
  AddInput(Tensor(DT_FLOAT, TensorShape({0})));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "example 0: feature 'x' holds int64 values, but float is expected");
  inputs_[0].tensor =
      Strings({Serialized({{"x", Floats({1, 2})}}), Serialized({{"x", Floats({3})}})});
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "example 1: feature 'x' has 1 float values, but its dense shape [2] needs 2");
}

TEST_F(ParseExampleTest, GarbageBytesAreInvalidArgument) {
  ASSERT_OK(MakeV1({}, {DT_FLOAT}, {PartialTensorShape({1})}));
  AddInput(Strings({Serialized({{"x", Floats({1})}}), std::string("\xff\xff\xff\x0f", 4)}));
  AddInput(Strings({}));
  AddInput(Tensor::Scalar<std::string>("x"));
  AddInput(Tensor(DT_FLOAT, TensorShape({0})));
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "example 1: its 4 bytes are not a serialized tf.Example");
}

TEST_F(ParseExampleTest, SparseFeatures) {
  ASSERT_OK(MakeV1({DT_INT64, DT_STRING}, {}, {}));
  AddInput(Strings({Serialized({{"ids", Int64s({3, 1, 4})}, {"tags", Bytes({"a"})}}),
                    Serialized({}), Serialized({{"ids", Int64s({9})}})}));
  AddInput(Strings({}));
  AddInput(Tensor::Scalar<std::string>("ids"));
  AddInput(Tensor::Scalar<std::string>("tags"));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {0, 0, 0, 1, 0, 2, 2, 0}, {4, 2});
  ExpectTensorEqual<int64_t>(GetOutput(1), {0, 0}, {1, 2});
  ExpectTensorEqual<int64_t>(GetOutput(2), {3, 1, 4, 9}, {4});
  ExpectTensorEqual<std::string>(GetOutput(3), {"a"}, {1});
  ExpectTensorEqual<int64_t>(GetOutput(4), {3, 3}, {2});
  ExpectTensorEqual<int64_t>(GetOutput(5), {3, 1}, {2});
}

TEST_F(ParseExampleTest, VariableLengthDenseIsPadded) {
  ASSERT_OK(MakeV1({}, {DT_INT64}, {PartialTensorShape({-1, 2})}));
  AddInput(Strings({Serialized({{"p", Int64s({1, 2, 3, 4})}}), Serialized({})}));
  AddInput(Strings({}));
  AddInput(Tensor::Scalar<std::string>("p"));
  AddInput(Tensor::Scalar<int64_t>(-1));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 2, 3, 4, -1, -1, -1, -1}, {2, 2, 2});
  inputs_[0].tensor = Strings({Serialized({{"p", Int64s({1, 2, 3})}})});
  EXPECT_STATUS(RunOp(), kInvalidArgument, "not a whole number of rows of 2");
}

TEST_F(ParseExampleTest, BadAttrsAndInputs) {
  EXPECT_STATUS(MakeV1({}, {DT_FLOAT}, {}), kInvalidArgument,
                "dense_shapes has 0 shapes but Tdense has 1 types");
  ASSERT_OK(MakeV1({}, {DT_FLOAT}, {PartialTensorShape({2})}));
  AddInput(Tensor::Scalar<std::string>("not a vector"));
  AddInput(Strings({}));
  AddInput(Tensor::Scalar<std::string>("x"));
  AddInput(Tensor::FromVector<float>({1, 2, 3}, {3}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "serialized must be a vector");
  inputs_[0].tensor = Strings({Serialized({})});
  EXPECT_STATUS(RunOp(), kInvalidArgument,
                "the default of dense feature 'x' has shape [3], but the feature's shape is [2]");
  inputs_[3].tensor = Tensor::FromVector<float>({1, 2}, {2});
  inputs_[1].tensor = Strings({"a", "b"});
  EXPECT_STATUS(RunOp(), kInvalidArgument, "names must be empty or hold one string per example");
}

class ParseExampleV2Test : public OpsTestBase {
 protected:
  absl::Status MakeV2(int num_sparse, std::vector<DataType> sparse_types,
                      std::vector<DataType> dense_types, std::vector<PartialTensorShape> shapes,
                      std::vector<DataType> ragged_types, std::vector<DataType> split_types) {
    return MakeOp(NodeDefBuilder("parse", "ParseExampleV2")
                      .Attr("num_sparse", static_cast<int64_t>(num_sparse))
                      .Attr("sparse_types", sparse_types)
                      .Attr("Tdense", dense_types)
                      .Attr("dense_shapes", shapes)
                      .Attr("ragged_value_types", ragged_types)
                      .Attr("ragged_split_types", split_types));
  }
};

TEST_F(ParseExampleV2Test, ScalarInputDropsTheBatchDimension) {
  ASSERT_OK(MakeV2(1, {DT_FLOAT}, {DT_STRING}, {PartialTensorShape({2})}, {}, {}));
  AddInput(Tensor::Scalar<std::string>(
      Serialized({{"s", Floats({5, 6, 7})}, {"d", Bytes({"p", "q"})}})));
  AddInput(Tensor::Scalar<std::string>(""));
  AddInput(Strings({"s"}));
  AddInput(Strings({"d"}));
  AddInput(Strings({}));
  AddInput(Tensor(DT_STRING, TensorShape({0})));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {0, 1, 2}, {3, 1});
  ExpectTensorEqual<float>(GetOutput(1), {5, 6, 7}, {3});
  ExpectTensorEqual<int64_t>(GetOutput(2), {3}, {1});
  ExpectTensorEqual<std::string>(GetOutput(3), {"p", "q"}, {2});
}

TEST_F(ParseExampleV2Test, RaggedFeatures) {
  ASSERT_OK(MakeV2(0, {}, {}, {}, {DT_INT64, DT_FLOAT}, {DT_INT64, DT_INT32}));
  AddInput(Strings({Serialized({{"r", Int64s({1, 2})}}), Serialized({{"f", Floats({0.5f})}}),
                    Serialized({{"r", Int64s({3})}})}));
  AddInput(Strings({}));
  AddInput(Strings({}));
  AddInput(Strings({}));
  AddInput(Strings({"r", "f"}));
  ASSERT_OK(RunOp());
  ExpectTensorEqual<int64_t>(GetOutput(0), {1, 2, 3}, {3});
  ExpectTensorEqual<float>(GetOutput(1), {0.5f}, {1});
  ExpectTensorEqual<int64_t>(GetOutput(2), {0, 2, 2, 3}, {4});
  ExpectTensorEqual<int32_t>(GetOutput(3), {0, 0, 1, 1}, {4});
}

TEST_F(ParseExampleV2Test, KeysMustBeVectorsOfTheRightLength) {
  ASSERT_OK(MakeV2(0, {}, {DT_FLOAT}, {PartialTensorShape({1})}, {}, {}));
  AddInput(Strings({Serialized({})}));
  AddInput(Strings({}));
  AddInput(Strings({}));
  AddInput(Strings({"a", "b"}));
  AddInput(Strings({}));
  AddInput(Tensor::FromVector<float>({1}, {1}));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "dense_keys must be a vector of 1");
}

}  // namespace
}  // namespace tensorgrid
