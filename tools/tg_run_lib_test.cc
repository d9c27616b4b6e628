#include "tools/tg_run_lib.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"
#include "proto/example.pb.h"
#include "proto/saved_model.pb.h"

namespace tensorgrid {
namespace tg_run {
namespace {

const char kVariableGraph[] = "tests/testdata/tf_graphs/variable_mul_add.pbtxt";

Tensor ParseOk(const std::string& text, DataType dtype) {
  absl::StatusOr<Tensor> t = ParseTensorValues(text, dtype);
  EXPECT_TRUE(t.ok()) << text << ": " << t.status();
  return t.ok() ? *t : Tensor();
}

// ---------------------------------------------------------------------------
// Names and dtypes

TEST(SplitNameAndTypeTest, PlainNameDefaultsToFloat) {
  TensorNameAndType t = SplitNameAndType("x");
  EXPECT_EQ(t.name, "x");
  EXPECT_EQ(t.dtype, DT_FLOAT);
}

TEST(SplitNameAndTypeTest, PortStaysInName) {
  TensorNameAndType t = SplitNameAndType("x:0");
  EXPECT_EQ(t.name, "x:0");
  EXPECT_EQ(t.dtype, DT_FLOAT);
}

TEST(SplitNameAndTypeTest, TrailingKnownDtypeIsSplitOff) {
  EXPECT_EQ(SplitNameAndType("x:int32").name, "x");
  EXPECT_EQ(SplitNameAndType("x:int32").dtype, DT_INT32);
  EXPECT_EQ(SplitNameAndType("scope/x:1:string").name, "scope/x:1");
  EXPECT_EQ(SplitNameAndType("scope/x:1:string").dtype, DT_STRING);
}

TEST(SplitNameAndTypeTest, EveryFeedTypeNameIsRecognized) {
  const std::vector<std::pair<std::string, DataType>> expected = {
      {"float", DT_FLOAT}, {"double", DT_DOUBLE}, {"int32", DT_INT32},  {"int64", DT_INT64},
      {"uint8", DT_UINT8}, {"bool", DT_BOOL},     {"string", DT_STRING}};
  ASSERT_EQ(FeedTypeNames().size(), expected.size());
  for (const auto& [name, dtype] : expected) {
    EXPECT_EQ(SplitNameAndType("t:" + name).dtype, dtype) << name;
    EXPECT_EQ(SplitNameAndType("t:" + name).name, "t") << name;
  }
}

TEST(SplitNameAndTypeTest, UnknownSuffixStaysInName) {
  TensorNameAndType t = SplitNameAndType("x:complex64");
  EXPECT_EQ(t.name, "x:complex64");
  EXPECT_EQ(t.dtype, DT_FLOAT);
}

// ---------------------------------------------------------------------------
// Values

TEST(ParseTensorValuesTest, ScalarHasEmptyShape) {
  Tensor t = ParseOk("3", DT_FLOAT);
  ExpectTensorEqual<float>(t, {3.0f}, TensorShape({}));
}

TEST(ParseTensorValuesTest, VectorAndMatrixShapesFollowNesting) {
  ExpectTensorEqual<float>(ParseOk("[1,2]", DT_FLOAT), {1, 2}, TensorShape({2}));
  ExpectTensorEqual<float>(ParseOk("[[1,2],[3,4]]", DT_FLOAT), {1, 2, 3, 4}, TensorShape({2, 2}));
  ExpectTensorEqual<float>(ParseOk("[[[1],[2],[3]]]", DT_FLOAT), {1, 2, 3}, TensorShape({1, 3, 1}));
}

TEST(ParseTensorValuesTest, WhitespaceIsIgnored) {
  ExpectTensorEqual<float>(ParseOk(" [ [1 , 2] ,\t[3,4] ] ", DT_FLOAT), {1, 2, 3, 4},
                           TensorShape({2, 2}));
}

TEST(ParseTensorValuesTest, EmptyListsGiveZeroSizedDims) {
  EXPECT_EQ(ParseOk("[]", DT_FLOAT).shape(), TensorShape({0}));
  EXPECT_EQ(ParseOk("[[],[]]", DT_INT32).shape(), TensorShape({2, 0}));
}

TEST(ParseTensorValuesTest, FloatingForms) {
  Tensor f = ParseOk("[-1.5,2e3,0.1,inf,-inf]", DT_FLOAT);
  ExpectTensorEqual<float>(f,
                           {-1.5f, 2000.0f, 0.1f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()},
                           TensorShape({5}));
  EXPECT_TRUE(std::isnan(ParseOk("nan", DT_FLOAT).scalar<float>()));
  ExpectTensorEqual<double>(ParseOk("[0.1,1e300]", DT_DOUBLE), {0.1, 1e300}, TensorShape({2}));
}

TEST(ParseTensorValuesTest, IntegerTypes) {
  ExpectTensorEqual<int32_t>(ParseOk("[-2147483648,2147483647]", DT_INT32),
                             {-2147483647 - 1, 2147483647}, TensorShape({2}));
  ExpectTensorEqual<int64_t>(ParseOk("[9223372036854775807]", DT_INT64), {9223372036854775807LL},
                             TensorShape({1}));
  ExpectTensorEqual<uint8_t>(ParseOk("[0,255]", DT_UINT8), {0, 255}, TensorShape({2}));
}

TEST(ParseTensorValuesTest, BoolAndString) {
  ExpectTensorEqual<bool>(ParseOk("[true,false]", DT_BOOL), {true, false}, TensorShape({2}));
  Tensor s = ParseOk(R"(["a", "b,c", "q\"\n"])", DT_STRING);
  ASSERT_EQ(s.shape(), TensorShape({3}));
  EXPECT_EQ(s.data<std::string>()[0], "a");
  EXPECT_EQ(s.data<std::string>()[1], "b,c");
  EXPECT_EQ(s.data<std::string>()[2], "q\"\n");
  EXPECT_EQ(ParseOk(R"("")", DT_STRING).scalar<std::string>(), "");
}

TEST(ParseTensorValuesTest, RaggedNestingNamesColumnAndShapes) {
  EXPECT_STATUS(ParseTensorValues("[[1,2],[3]]", DT_FLOAT).status(), kInvalidArgument,
                "column 8: ragged nesting: element has shape [1] but the first has [2]");
  EXPECT_STATUS(ParseTensorValues("[1,[2]]", DT_FLOAT).status(), kInvalidArgument,
                "column 4: ragged");
  EXPECT_STATUS(ParseTensorValues("[[1],2]", DT_FLOAT).status(), kInvalidArgument,
                "column 6: ragged");
}

TEST(ParseTensorValuesTest, SyntaxErrorsNameColumn) {
  EXPECT_STATUS(ParseTensorValues("[1,2", DT_FLOAT).status(), kInvalidArgument,
                "column 5: expected ',' or ']', found the end");
  EXPECT_STATUS(ParseTensorValues("[1 2]", DT_FLOAT).status(), kInvalidArgument,
                "column 4: expected ',' or ']', found '2'");
  EXPECT_STATUS(ParseTensorValues("[1,,2]", DT_FLOAT).status(), kInvalidArgument,
                "column 4: expected a value, found ','");
  EXPECT_STATUS(ParseTensorValues("", DT_FLOAT).status(), kInvalidArgument,
                "column 1: expected a value, found the end");
  EXPECT_STATUS(ParseTensorValues("1]", DT_FLOAT).status(), kInvalidArgument,
                "column 2: unexpected text after the value");
  EXPECT_STATUS(ParseTensorValues(R"(["abc)", DT_STRING).status(), kInvalidArgument,
                "column 2: unterminated string");
}

TEST(ParseTensorValuesTest, BadScalarsNameColumnAndType) {
  EXPECT_STATUS(ParseTensorValues("[1,2,x]", DT_FLOAT).status(), kInvalidArgument,
                "column 6: 'x' is not a valid float");
  EXPECT_STATUS(ParseTensorValues("1.5", DT_INT32).status(), kInvalidArgument,
                "column 1: '1.5' is not a valid int32");
  EXPECT_STATUS(ParseTensorValues("[2147483648]", DT_INT32).status(), kInvalidArgument,
                "column 2: '2147483648' is out of range for int32");
  EXPECT_STATUS(ParseTensorValues("[1,256]", DT_UINT8).status(), kInvalidArgument,
                "column 4: '256' is out of range for uint8");
  EXPECT_STATUS(ParseTensorValues("-1", DT_UINT8).status(), kInvalidArgument,
                "out of range for uint8");
  EXPECT_STATUS(ParseTensorValues("1e39", DT_FLOAT).status(), kInvalidArgument,
                "'1e39' is out of range for float");
  EXPECT_STATUS(ParseTensorValues("1e999", DT_DOUBLE).status(), kInvalidArgument,
                "out of range for double");
  EXPECT_STATUS(ParseTensorValues("[true,1]", DT_BOOL).status(), kInvalidArgument,
                "column 7: expected true or false, found '1'");
  EXPECT_STATUS(ParseTensorValues("[abc]", DT_STRING).status(), kInvalidArgument,
                "column 2: strings must be in double quotes");
  EXPECT_STATUS(ParseTensorValues(R"("1")", DT_FLOAT).status(), kInvalidArgument,
                "column 1: expected a float, found a quoted string");
}

TEST(ParseTensorValuesTest, TooDeepNestingIsRejected) {
  std::string deep = std::string(40, '[') + "1" + std::string(40, ']');
  EXPECT_STATUS(ParseTensorValues(deep, DT_FLOAT).status(), kInvalidArgument, "maximum rank 32");
}

TEST(ParseFeedTest, NameDtypeAndValue) {
  absl::StatusOr<Feed> feed = ParseFeed("x:0:int64=[[1],[2]]");
  ASSERT_OK(feed.status());
  EXPECT_EQ(feed->name, "x:0");
  ExpectTensorEqual<int64_t>(feed->value, {1, 2}, TensorShape({2, 1}));
}

TEST(ParseFeedTest, SplitsAtFirstEquals) {
  absl::StatusOr<Feed> feed = ParseFeed(R"(s:string="a=b")");
  ASSERT_OK(feed.status());
  EXPECT_EQ(feed->name, "s");
  EXPECT_EQ(feed->value.scalar<std::string>(), "a=b");
}

TEST(ParseFeedTest, ErrorsNameFeedValueAndColumn) {
  EXPECT_STATUS(ParseFeed("x=[1,y]").status(), kInvalidArgument,
                "feed 'x', value '[1,y]': column 4: 'y' is not a valid float");
  EXPECT_STATUS(ParseFeed("x:0").status(), kInvalidArgument, "feed 'x:0': expected NAME=VALUES");
  EXPECT_STATUS(ParseFeed("=1").status(), kInvalidArgument, "empty tensor name");
  EXPECT_STATUS(ParseFeed(":int32=1").status(), kInvalidArgument, "empty tensor name");
}

// ---------------------------------------------------------------------------
// Formatting

TEST(FormatTest, FloatsUseShortestRoundTrip) {
  EXPECT_EQ(FormatFloat(2.0f), "2");
  EXPECT_EQ(FormatFloat(0.1f), "0.1");
  EXPECT_EQ(FormatFloat(-1.5f), "-1.5");
  EXPECT_EQ(FormatFloat(1.0f / 3.0f), "0.33333334");
  EXPECT_EQ(FormatFloat(1e20f), "1e+20");
  EXPECT_EQ(FormatFloat(std::numeric_limits<float>::infinity()), "inf");
  EXPECT_EQ(FormatFloat(-std::numeric_limits<float>::infinity()), "-inf");
  EXPECT_EQ(FormatFloat(std::nanf("")), "nan");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(1.0 / 3.0), "0.3333333333333333");
}

TEST(FormatTest, FormattedFloatsParseBack) {
  for (float v : {0.1f, 1.0f / 3.0f, 3.14159274f, 1e-30f, 123456789.0f, -0.0f}) {
    EXPECT_EQ(std::strtof(FormatFloat(v).c_str(), nullptr), v) << FormatFloat(v);
  }
}

TEST(FormatTest, ValuesAreNestedLikeFeeds) {
  EXPECT_EQ(FormatValues(Tensor::Scalar<float>(2.0f), 0), "2");
  EXPECT_EQ(FormatValues(Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}), 0), "[[1,2],[3,4]]");
  EXPECT_EQ(FormatValues(Tensor(DT_FLOAT, TensorShape({0})), 0), "[]");
  EXPECT_EQ(FormatValues(Tensor(DT_FLOAT, TensorShape({2, 0})), 0), "[[],[]]");
}

TEST(FormatTest, EachDtype) {
  EXPECT_EQ(FormatValues(Tensor::FromVector<double>({0.1, 2}, {2}), 0), "[0.1,2]");
  EXPECT_EQ(FormatValues(Tensor::FromVector<int32_t>({-1, 7}, {2}), 0), "[-1,7]");
  EXPECT_EQ(FormatValues(Tensor::FromVector<int64_t>({1LL << 40}, {1}), 0), "[1099511627776]");
  EXPECT_EQ(FormatValues(Tensor::FromVector<uint8_t>({0, 255}, {2}), 0), "[0,255]");
  EXPECT_EQ(FormatValues(Tensor::FromVector<int8_t>({-3}, {1}), 0), "[-3]");
  EXPECT_EQ(FormatValues(Tensor::FromVector<bool>({true, false}, {2}), 0), "[true,false]");
  EXPECT_EQ(FormatValues(Tensor::FromVector<std::string>({"a", "q\"\n"}, {2}), 0),
            R"(["a","q\"\n"])");
  EXPECT_EQ(FormatValues(Tensor::Scalar<half>(half(0.5f)), 0), "0.5");
}

TEST(FormatTest, MaxValuesCutsWithEllipsis) {
  Tensor m = Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(FormatValues(m, 3), "[[1,2],[3,...]]");
  EXPECT_EQ(FormatValues(m, 2), "[[1,2],...]");
  EXPECT_EQ(FormatValues(m, 6), "[[1,2],[3,4],[5,6]]");
  EXPECT_EQ(FormatValues(m, 100), "[[1,2],[3,4],[5,6]]");
  EXPECT_EQ(FormatValues(Tensor::FromVector<int32_t>({1, 2, 3}, {3}), 1), "[1,...]");
  EXPECT_EQ(FormatValues(Tensor::Scalar<int32_t>(7), 1), "7");
}

TEST(FormatTest, FetchLine) {
  EXPECT_EQ(FormatFetch("output_node", Tensor::Scalar<float>(2.0f), 0), "output_node float [] 2");
  EXPECT_EQ(FormatFetch("Add2", Tensor::FromVector<float>({11, 22}, {2}), 0),
            "Add2 float [2] [11,22]");
  EXPECT_EQ(FormatFetch("m:0", Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}), 0),
            "m:0 float [2,2] [[1,2],[3,4]]");
}

TEST(FormatTest, FormattedValuesParseBack) {
  const std::vector<std::pair<std::string, DataType>> cases = {
      {"[[0.1,2],[-3.5,1e+20]]", DT_FLOAT},
      {"[1,-2]", DT_INT64},
      {R"(["x","\"y\"","tab\t"])", DT_STRING},
      {"[[true],[false]]", DT_BOOL}};
  for (const auto& [text, dtype] : cases) {
    Tensor t = ParseOk(text, dtype);
    std::string formatted = FormatValues(t, 0);
    Tensor back = ParseOk(formatted, dtype);
    EXPECT_EQ(back.shape(), t.shape()) << text;
    EXPECT_EQ(FormatValues(back, 0), formatted) << text;
  }
}

// ---------------------------------------------------------------------------
// Flags

TEST(ParseFlagsTest, AllFlags) {
  absl::StatusOr<Options> o =
      ParseFlags({"--graph=g.pbtxt", "--target=local", "--run=init,step", "--run", "more",
                  "--feed=x=[1]", "--feed", "y:int32=2", "--fetch=a, b:0", "--max_values=5"});
  ASSERT_OK(o.status());
  EXPECT_EQ(o->graph_path, "g.pbtxt");
  EXPECT_EQ(o->target, "local");
  EXPECT_EQ(o->run_targets, (std::vector<std::string>{"init", "step", "more"}));
  EXPECT_EQ(o->feeds, (std::vector<std::string>{"x=[1]", "y:int32=2"}));
  EXPECT_EQ(o->fetches, (std::vector<std::string>{"a", "b:0"}));
  EXPECT_EQ(o->max_values, 5);
  EXPECT_FALSE(o->help);
}

TEST(ParseFlagsTest, EmptyFetchIsFineWithRun) {
  absl::StatusOr<Options> o = ParseFlags({"--graph=g", "--run=init", "--fetch="});
  ASSERT_OK(o.status());
  EXPECT_TRUE(o->fetches.empty());
}

TEST(ParseFlagsTest, HelpNeedsNothingElse) {
  absl::StatusOr<Options> o = ParseFlags({"--help"});
  ASSERT_OK(o.status());
  EXPECT_TRUE(o->help);
  EXPECT_NE(Usage().find("--max_values"), std::string::npos);
}

TEST(ParseFlagsTest, Errors) {
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch=y", "--bogus=1"}).status(), kInvalidArgument,
                "unknown flag '--bogus'");
  EXPECT_STATUS(ParseFlags({"--fetch=y"}).status(), kInvalidArgument,
                "--graph or --saved_model is required");
  EXPECT_STATUS(ParseFlags({"--graph=g"}).status(), kInvalidArgument, "nothing to do");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch=a,,b"}).status(), kInvalidArgument, "empty name");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch"}).status(), kInvalidArgument,
                "'--fetch' needs a value");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch=y", "extra"}).status(), kInvalidArgument,
                "unexpected argument 'extra'");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch=y", "--max_values=-1"}).status(),
                kInvalidArgument, "--max_values");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--run=init", "--feed=x=1"}).status(), kInvalidArgument,
                "give --fetch too");
}

TEST(ParseFlagsTest, ConfigIsAConfigProtoInTextFormatInBothModes) {
  absl::StatusOr<Options> o =
      ParseFlags({"--graph=g", "--fetch=y",
                  "--config=operation_timeout_in_ms: 5000 log_device_placement: true"});
  ASSERT_OK(o.status());
  EXPECT_EQ(o->config.operation_timeout_in_ms(), 5000);
  EXPECT_TRUE(o->config.log_device_placement());
  // The last --config counts, as for every single-valued flag.
  o = ParseFlags({"--saved_model=/m/1", "--config=log_device_placement: true",
                  "--config", "intra_op_parallelism_threads: 2"});
  ASSERT_OK(o.status());
  EXPECT_FALSE(o->config.log_device_placement());
  EXPECT_EQ(o->config.intra_op_parallelism_threads(), 2);

  // A field ConfigProto lacks is a typo here, not a field to skip.
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch=y", "--config=operation_timeout_ms: 5"}).status(),
                kInvalidArgument, "operation_timeout_ms");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch=y", "--config=log_device_placement: maybe"})
                    .status(),
                kInvalidArgument, "--config is not a ConfigProto in text format: line 1");
}

TEST(ParseFlagsTest, SavedModelMode) {
  absl::StatusOr<Options> o = ParseFlags({"--saved_model=/m/1", "--input=x=[1,2]", "--input",
                                          "k=\"a=b\"", "--output=y"});
  ASSERT_OK(o.status());
  EXPECT_EQ(o->saved_model_dir, "/m/1");
  EXPECT_EQ(o->tags, std::vector<std::string>{"serve"});
  EXPECT_EQ(o->signature, "serving_default");
  EXPECT_EQ(o->inputs, (std::vector<std::string>{"x=[1,2]", "k=\"a=b\""}));
  EXPECT_EQ(o->outputs, std::vector<std::string>{"y"});
  o = ParseFlags({"--saved_model=/m/1", "--tag=serve,gpu", "--signature=count", "--show"});
  ASSERT_OK(o.status());
  EXPECT_EQ(o->tags, (std::vector<std::string>{"serve", "gpu"}));
  EXPECT_EQ(o->signature, "count");
  EXPECT_TRUE(o->show);

  EXPECT_STATUS(ParseFlags({"--saved_model=/m", "--graph=g"}).status(), kInvalidArgument,
                "not both");
  EXPECT_STATUS(ParseFlags({"--saved_model=/m", "--fetch=y"}).status(), kInvalidArgument,
                "use --input and --output");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--fetch=y", "--input=x=1"}).status(), kInvalidArgument,
                "need --saved_model");
}

TEST(SplitSignatureInputTest, SplitsAtTheFirstEquals) {
  auto kv = SplitSignatureInput("k=\"a=b\"");
  ASSERT_OK(kv.status());
  EXPECT_EQ(kv->first, "k");
  EXPECT_EQ(kv->second, "\"a=b\"");
  EXPECT_STATUS(SplitSignatureInput("x").status(), kInvalidArgument, "not KEY=VALUES");
  EXPECT_STATUS(SplitSignatureInput("=1").status(), kInvalidArgument, "not KEY=VALUES");
}

TEST(ParseExamplesTest, FeaturesTakeTheirKindFromTheValues) {
  auto t = ParseExamples(R"([{"x": [1.5, 2], "ids": [1, -2], "w": ["a", "b\n"]}, {"x": 3e0}, {}])");
  ASSERT_OK(t.status());
  ASSERT_EQ(t->dtype(), DT_STRING);
  ASSERT_EQ(t->shape(), TensorShape({3}));
  Example e;
  ASSERT_TRUE(e.ParseFromString(t->data<std::string>()[0]));
  const auto& f = e.features().feature();
  ASSERT_EQ(f.at("x").float_list().value_size(), 2);
  EXPECT_EQ(f.at("x").float_list().value(0), 1.5f);
  EXPECT_EQ(f.at("x").float_list().value(1), 2.0f);  // one float makes the list float
  EXPECT_EQ(f.at("ids").int64_list().value(1), -2);
  EXPECT_EQ(f.at("w").bytes_list().value(1), "b\n");
  ASSERT_TRUE(e.ParseFromString(t->data<std::string>()[1]));
  EXPECT_EQ(e.features().feature().at("x").float_list().value(0), 3.0f);  // a scalar
  ASSERT_TRUE(e.ParseFromString(t->data<std::string>()[2]));
  EXPECT_EQ(e.features().feature_size(), 0);
  auto none = ParseExamples("[]");
  ASSERT_OK(none.status());
  EXPECT_EQ(none->shape(), TensorShape({0}));
}

TEST(ParseExamplesTest, ErrorsNameTheExampleAndFeature) {
  EXPECT_STATUS(ParseExamples(R"([{"x": [1, "a"]}])").status(), kInvalidArgument,
                "example 0, feature 'x'");
  EXPECT_STATUS(ParseExamples(R"([{"x": 1}, {"y": [[1], [2]]}])").status(), kInvalidArgument,
                "example 1, feature 'y': a feature is a flat list, not [2,1]");
  EXPECT_STATUS(ParseExamples(R"([{"x": []}])").status(), kInvalidArgument, "empty list");
  EXPECT_STATUS(ParseExamples(R"([{"x": 1, "x": 2}])").status(), kInvalidArgument, "given twice");
  EXPECT_STATUS(ParseExamples(R"({"x": 1})").status(), kInvalidArgument, "column 1: expected '['");
  EXPECT_STATUS(ParseExamples(R"([{x: 1}])").status(), kInvalidArgument,
                "column 3: expected a feature name in double quotes");
  EXPECT_STATUS(ParseExamples(R"([{"x": [1}])").status(), kInvalidArgument, "unbalanced");
  EXPECT_STATUS(ParseExamples(R"([{"x": "a}])").status(), kInvalidArgument, "unterminated");
  EXPECT_STATUS(ParseExamples(R"([{"x": 1}] extra)").status(), kInvalidArgument,
                "unexpected text after the list");
}

TEST(FormatSignaturesTest, KeysSortedWithDtypesShapesAndTensors) {
  MetaGraphDef mg;
  SignatureDef& sig = (*mg.mutable_signature_def())["serving_default"];
  sig.set_method_name("tensorflow/serving/predict");
  TensorInfo& x = (*sig.mutable_inputs())["x"];
  x.set_name("x:0");
  x.set_dtype(DT_FLOAT);
  x.mutable_tensor_shape()->add_dim()->set_size(-1);
  x.mutable_tensor_shape()->add_dim()->set_size(1);
  TensorInfo& y = (*sig.mutable_outputs())["y"];
  y.set_name("y:0");
  y.set_dtype(DT_INT64);
  y.mutable_tensor_shape()->set_unknown_rank(true);
  (*mg.mutable_signature_def())["a"].set_method_name("m");
  EXPECT_EQ(FormatSignatures(mg),
            "signature 'a' (m)\n"
            "signature 'serving_default' (tensorflow/serving/predict)\n"
            "  input  x: float [?,1] (x:0)\n"
            "  output y: int64 <unknown> (y:0)\n");
}

// ---------------------------------------------------------------------------
// Graph loading

std::string WriteTempFile(const std::string& name, const std::string& content) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr) << path;
  if (f != nullptr) {
    std::fwrite(content.data(), 1, content.size(), f);
    std::fclose(f);
  }
  return path;
}

TEST(LoadGraphDefTest, TextGraph) {
  absl::StatusOr<GraphDef> g = LoadGraphDef(kVariableGraph);
  ASSERT_OK(g.status());
  EXPECT_GT(g->node_size(), 10);
}

TEST(LoadGraphDefTest, BinaryGraphAndTextFallback) {
  absl::StatusOr<GraphDef> text = LoadGraphDef(kVariableGraph);
  ASSERT_OK(text.status());
  std::string binary_path = WriteTempFile("graph.pb", text->SerializeAsString());
  absl::StatusOr<GraphDef> binary = LoadGraphDef(binary_path);
  ASSERT_OK(binary.status());
  EXPECT_EQ(binary->node_size(), text->node_size());

  std::string text_path = WriteTempFile("text_graph.pb", "node { name: 'a' op: 'NoOp' }\n");
  absl::StatusOr<GraphDef> fallback = LoadGraphDef(text_path);
  ASSERT_OK(fallback.status());
  EXPECT_EQ(fallback->node(0).name(), "a");
}

TEST(LoadGraphDefTest, UnknownTextFieldsAreSkipped) {
  std::string path =
      WriteTempFile("unknown.pbtxt",
                    "node { name: 'a' op: 'NoOp' experimental_debug_info { x: 1 } }\n"
                    "some_future_field: 3\n");
  absl::StatusOr<GraphDef> g = LoadGraphDef(path);
  ASSERT_OK(g.status());
  EXPECT_EQ(g->node_size(), 1);
}

TEST(LoadGraphDefTest, ASavedModelFileSaysHowToRunIt) {
  SavedModel saved_model;
  saved_model.add_meta_graphs()->mutable_meta_info_def()->add_tags("serve");
  std::string path = WriteTempFile("saved_model.pb", saved_model.SerializeAsString());
  EXPECT_STATUS(LoadGraphDef(path).status(), kInvalidArgument,
                "saved_model.pb' is a SavedModel, not a GraphDef: tg_run --saved_model=");
}

TEST(LoadGraphDefTest, ErrorsNameTheFile) {
  EXPECT_STATUS(LoadGraphDef("/nonexistent/g.pbtxt").status(), kNotFound,
                "cannot read graph file '/nonexistent/g.pbtxt': No such file");
  std::string bad_text = WriteTempFile("bad.pbtxt", "node { name: 'a'\n op: }");
  EXPECT_STATUS(LoadGraphDef(bad_text).status(), kInvalidArgument,
                "bad.pbtxt' as a text GraphDef: line 2");
  std::string garbage = WriteTempFile("garbage.pb", "this is not a graph");
  EXPECT_STATUS(LoadGraphDef(garbage).status(), kInvalidArgument,
                "garbage.pb' as a GraphDef: not a binary GraphDef");
  std::string empty = WriteTempFile("empty.pbtxt", "");
  EXPECT_STATUS(LoadGraphDef(empty).status(), kInvalidArgument, "holds no nodes");
}

}  // namespace
}  // namespace tg_run
}  // namespace tensorgrid
