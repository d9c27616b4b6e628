#include "client/ops/gen/cc_op_gen.h"

#include "absl/strings/match.h"
#include "client/ops/gen/op_info.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace op_gen {
namespace {

const FamilyDef kFamily = {"test_ops", "Ops for the generator's test.", {}};

OpDef Finalize(const OpDefBuilder& builder) {
  absl::StatusOr<OpDef> op = builder.Finalize();
  EXPECT_TRUE(op.ok()) << op.status();
  return *op;
}

GeneratedFiles Generate(const std::vector<OpDef>& ops) {
  std::vector<const OpDef*> pointers;
  for (const OpDef& op : ops) pointers.push_back(&op);
  absl::StatusOr<GeneratedFiles> files = GenerateFamily(kFamily, pointers);
  EXPECT_TRUE(files.ok()) << files.status();
  return files.ok() ? *files : GeneratedFiles();
}

// A Cast-like op: SrcT comes from the input, DstT and element_count must be
// given, Truncate has a default.
OpDef CastLike() {
  return Finalize(OpDefBuilder("GenCast")
                      .Input("x: SrcT")
                      .Output("y: DstT")
                      .Attr("SrcT: type")
                      .Attr("DstT: type")
                      .Attr("element_count: int")
                      .Attr("Truncate: bool = false")
                      .Doc(R"doc(
`x` as DstT.

DstT: The type to convert to.
Truncate: Round toward zero.
)doc"));
}

TEST(CcOpGenTest, RequiredAttrsFollowInputsInOpDefOrderAndInferredOnesAreLeftOut) {
  // The constructor also shows the wrapping of a line over 100 columns.
  GeneratedFiles files = Generate({CastLike()});
  EXPECT_TRUE(absl::StrContains(
      files.header,
      "  GenCast(const Scope& scope, Input x, DataType DstT, int64_t element_count,\n"
      "          const Attrs& attrs = Attrs());\n"))
      << files.header;
  EXPECT_FALSE(absl::StrContains(files.header, "SrcT"));
  EXPECT_TRUE(absl::StrContains(files.source,
                                "  operation = NodeBuilder(scope, \"GenCast\")\n"
                                "                  .Input(x)\n"
                                "                  .Attr(\"DstT\", DstT)\n"
                                "                  .Attr(\"element_count\", element_count)\n"
                                "                  .Attr(\"Truncate\", attrs.Truncate_)\n"
                                "                  .Finalize();\n"
                                "  y = Output(operation, 0);\n"))
      << files.source;
}

TEST(CcOpGenTest, AttrsWithDefaultsAreOptionalSettersDocumentedFromTheOpDef) {
  GeneratedFiles files = Generate({CastLike()});
  for (const char* expected : {
           "// `x` as DstT.\n//\n//   DstT: The type to convert to.\nclass GenCast {\n",
           "    // Round toward zero. Defaults to false.\n"
           "    Attrs Truncate(bool x) const {\n",
           "    std::optional<bool> Truncate_;\n",
           "  static Attrs Truncate(bool x) { return Attrs().Truncate(x); }\n",
           "  operator Output() const { return y; }\n",
           "  Output y;\n",
       }) {
    EXPECT_TRUE(absl::StrContains(files.header, expected)) << expected << "\nin\n" << files.header;
  }
}

TEST(CcOpGenTest, ListArgumentsAreInputListsAndOutputVectors) {
  GeneratedFiles files = Generate({Finalize(OpDefBuilder("GenSplit")
                                                .Input("values: N * T")
                                                .Output("parts: N * T")
                                                .Output("count: int32")
                                                .Attr("N: int >= 1")
                                                .Attr("T: type"))});
  EXPECT_TRUE(absl::StrContains(files.header, "GenSplit(const Scope& scope, InputList values);"))
      << files.header;
  EXPECT_TRUE(absl::StrContains(files.header, "  std::vector<Output> parts;\n  Output count;\n"));
  EXPECT_TRUE(absl::StrContains(files.source,
                                "  NodeBuilder builder(scope, \"GenSplit\");\n"
                                "  operation = builder.Input(values).Finalize();\n"
                                "  parts = builder.OutputList(0);\n"
                                "  if (auto list = builder.OutputList(1); !list.empty()) count = "
                                "list[0];\n"))
      << files.source;
}

TEST(CcOpGenTest, OpsWithoutOutputsConvertToOperation) {
  GeneratedFiles files = Generate({Finalize(OpDefBuilder("GenTarget").Input("x: float"))});
  EXPECT_TRUE(absl::StrContains(files.header,
                                "  GenTarget(const Scope& scope, Input x);\n"
                                "  operator Operation() const { return operation; }\n"))
      << files.header;
  GeneratedFiles none = Generate({Finalize(OpDefBuilder("GenNothing"))});
  EXPECT_TRUE(absl::StrContains(none.header, "  explicit GenNothing(const Scope& scope);\n"));
}

TEST(CcOpGenTest, ApiDefsRenameHideAndHandWrite) {
  EXPECT_EQ(GetApiDef("ConcatV2").endpoint, "Concat");
  EXPECT_EQ(GetApiDef("FIFOQueueV2").node_name, "fifo_queue");
  EXPECT_EQ(GetApiDef("MatMul").endpoint, "MatMul");
  EXPECT_EQ(GetApiDef("MatMul").visibility, Visibility::kVisible);
  EXPECT_EQ(GetApiDef("_Send").visibility, Visibility::kSkip);
  EXPECT_EQ(GetApiDef("Const").visibility, Visibility::kHandWritten);

  GeneratedFiles files = Generate({Finalize(OpDefBuilder("ConcatV2")
                                                .Input("values: N * T")
                                                .Input("axis: int32")
                                                .Output("output: T")
                                                .Attr("N: int >= 2")
                                                .Attr("T: type")),
                                   Finalize(OpDefBuilder("_GenInternal")),
                                   Finalize(OpDefBuilder("Const").Output("output: float"))});
  EXPECT_TRUE(absl::StrContains(files.header, "\n// Builds a ConcatV2 node.\nclass Concat {\n"));
  EXPECT_TRUE(absl::StrContains(files.source, "NodeBuilder(scope, \"ConcatV2\", \"Concat\")"));
  EXPECT_FALSE(absl::StrContains(files.header, "_GenInternal"));
  EXPECT_FALSE(absl::StrContains(files.header, "class Const"));
}

TEST(CcOpGenTest, KeywordsAndReservedNamesGetAnUnderscore) {
  GeneratedFiles files = Generate({Finalize(OpDefBuilder("GenKeywords")
                                                .Input("default: float")
                                                .Input("scope: float")
                                                .Output("new: float"))});
  EXPECT_TRUE(absl::StrContains(files.header,
                                "GenKeywords(const Scope& scope, Input default_, Input scope_);"))
      << files.header;
  EXPECT_TRUE(absl::StrContains(files.header, "  Output new_;\n"));
}

TEST(CcOpGenTest, UnwritableOpsAreErrorsNamingTheOp) {
  OpDef func = Finalize(OpDefBuilder("GenFunc").Attr("f: func"));
  EXPECT_STATUS(GenerateFamily(kFamily, {&func}).status(), kInvalidArgument,
                "op GenFunc: attr 'f' of type func has no C++ type");

  OpDef clash = Finalize(OpDefBuilder("Size").Attr("size: int = 0"));
  EXPECT_STATUS(GenerateFamily(kFamily, {&clash}).status(), kInvalidArgument,
                "op Size: setter 'Size' clashes with another name of class Size");
}

TEST(CcOpGenTest, CamelCase) {
  EXPECT_EQ(CamelCase("keep_dims"), "KeepDims");
  EXPECT_EQ(CamelCase("seed2"), "Seed2");
  EXPECT_EQ(CamelCase("Truncate"), "Truncate");
}

}  // namespace
}  // namespace op_gen
}  // namespace tensorgrid
