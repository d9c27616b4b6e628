// The shape functions of ParseExample and ParseExampleV2.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/shape_fn_testutil.h"

namespace tensorgrid {
namespace {

TEST(ParseExampleShapeTest, BatchPrefixesEveryOutput) {
  NodeDefBuilder b("parse", "ParseExample");
  b.Attr("Nsparse", int64_t{1})
      .Attr("Ndense", int64_t{2})
      .Attr("sparse_types", std::vector<DataType>{DT_INT64})
      .Attr("Tdense", std::vector<DataType>{DT_FLOAT, DT_STRING})
      .Attr("dense_shapes", std::vector<PartialTensorShape>{{1}, {-1, 3}});
  ShapeFnRun r = RunShapeFn(b, {{5}, {0}, {}, {}, {}, {0}, {}});
  ASSERT_OK(r.status);
  EXPECT_EQ(r.outputs, (std::vector<std::string>{"[?,2]", "[?]", "[2]", "[5,1]", "[5,?,3]"}));
  EXPECT_STATUS(RunShapeFn(b, {{5, 1}, {0}, {}, {}, {}, {0}, {}}).status, kInvalidArgument,
                "node 'parse' (ParseExample): serialized must be a vector");
}

TEST(ParseExampleShapeTest, V2ScalarHasNoBatchDimension) {
  NodeDefBuilder b("parse", "ParseExampleV2");
  b.Attr("num_sparse", int64_t{1})
      .Attr("sparse_types", std::vector<DataType>{DT_FLOAT})
      .Attr("Tdense", std::vector<DataType>{DT_FLOAT})
      .Attr("dense_shapes", std::vector<PartialTensorShape>{{2}})
      .Attr("ragged_value_types", std::vector<DataType>{DT_INT64})
      .Attr("ragged_split_types", std::vector<DataType>{DT_INT32});
  const PartialTensorShape scalar_shape(std::vector<int64_t>{});
  ShapeFnRun scalar = RunShapeFn(b, {scalar_shape, scalar_shape, {1}, {1}, {1}, {2}});
  ASSERT_OK(scalar.status);
  EXPECT_EQ(scalar.outputs, (std::vector<std::string>{"[?,1]", "[?]", "[1]", "[2]", "[?]", "[?]"}));
  ShapeFnRun batch = RunShapeFn(b, {{4}, {4}, {1}, {1}, {1}, {2}});
  ASSERT_OK(batch.status);
  EXPECT_EQ(batch.outputs,
            (std::vector<std::string>{"[?,2]", "[?]", "[2]", "[4,2]", "[?]", "[5]"}));
}

}  // namespace
}  // namespace tensorgrid
