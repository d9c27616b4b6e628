// TensorFlow 1.14's half_plus_two SavedModel graph (tests/testdata/
// tf_saved_models/), imported as it is into a local session: its
// tf.Example parsing, its arithmetic, and the name-building part of its
// Saver (StringJoin, ShardedFilename, Pack, SaveV2, MergeV2Checkpoints,
// RestoreV2), all as TensorFlow wrote them. The variables come from their
// initializers, or from TensorFlow's checkpoint through the graph's own
// restore ops (client/saved_model/ is the loader that does this for users).
// Also TensorFlow 1.5's counter model.
//
//   tf_example ─► ParseExample ─► x ─► y = a*x + b,  y2 = a*x + c
//                             └─► x2 ─► y3 = a2*x2 + c2
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "client/saved_model/loader.h"
#include "core/platform/status_testutil.h"
#include "core/public/session.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"
#include "proto/example.pb.h"

namespace tensorgrid {
namespace {

constexpr char kHalfPlusTwo[] = "tests/testdata/tf_saved_models/saved_model_half_plus_two_cpu/00000123";
constexpr char kCounter[] = "tests/testdata/tf_saved_models/saved_model_counter/00000123";

// The graph of the SavedModel's "serve" MetaGraphDef, nothing loaded.
GraphDef SavedModelGraph(const std::string& dir) {
  absl::StatusOr<MetaGraphDef> meta_graph = ReadMetaGraphDefFromSavedModel(dir, {"serve"});
  EXPECT_OK(meta_graph.status());
  return meta_graph.ok() ? meta_graph->graph_def() : GraphDef();
}

GraphDef HalfPlusTwoGraph() { return SavedModelGraph(kHalfPlusTwo); }

// A serialized tf.Example with float features.
std::string SerializedExample(std::vector<std::pair<std::string, std::vector<float>>> features) {
  Example example;
  for (const auto& [key, values] : features) {
    Feature& f = (*example.mutable_features()->mutable_feature())[key];
    for (float v : values) f.mutable_float_list()->add_value(v);
  }
  return example.SerializeAsString();
}

class HalfPlusTwoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto session = NewSession(SessionOptions());
    ASSERT_OK(session.status());
    session_ = std::move(session).value();
    const GraphDef graph = HalfPlusTwoGraph();
    EXPECT_EQ(graph.versions().producer(), 149);
    ASSERT_OK(session_->Create(graph));
  }

  Tensor Batch(std::vector<std::string> examples) {
    return Tensor::FromVector<std::string>(examples,
                                           TensorShape({static_cast<int64_t>(examples.size())}));
  }

  std::unique_ptr<Session> session_;
};

TEST_F(HalfPlusTwoTest, ParsesTfExamplesWithoutVariables) {
  std::vector<Tensor> out;
  ASSERT_OK(session_->Run(
      {{"tf_example:0",
        Batch({SerializedExample({{"x", {1}}}), SerializedExample({{"x", {3}}, {"x2", {5}}})})}},
      {"ParseExample/ParseExample:0", "ParseExample/ParseExample:1", "x2:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {1, 3}, {2, 1});
  ExpectTensorEqual<float>(out[1], {0, 5}, {2, 1});  // x2 defaults to 0
  ExpectTensorEqual<float>(out[2], {0, 5}, {2, 1});
}

TEST_F(HalfPlusTwoTest, MissingRequiredFeatureNamesKeyAndExample) {
  std::vector<Tensor> out;
  EXPECT_STATUS(session_->Run({{"tf_example:0", Batch({SerializedExample({{"x", {1}}}),
                                                       SerializedExample({{"x2", {2}}})})}},
                              {"x:0"}, {}, &out),
                kInvalidArgument, "example 1: feature 'x' (float) is required but missing");
  EXPECT_STATUS(session_->Run({{"tf_example:0", Batch({"not a tf.Example"})}}, {"x:0"}, {}, &out),
                kInvalidArgument, "not a serialized tf.Example");
}

TEST_F(HalfPlusTwoTest, RegressesAfterTheInitializers) {
  std::vector<Tensor> out;
  ASSERT_OK(session_->Run({}, {}, {"init"}, &out));
  ASSERT_OK(session_->Run({{"tf_example:0", Batch({SerializedExample({{"x", {1}}, {"x2", {4}}}),
                                                   SerializedExample({{"x", {4}}})})}},
                          {"y:0", "y2:0", "y3:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {2.5f, 4}, {2, 1});  // a*x + b, a = 0.5, b = 2
  ExpectTensorEqual<float>(out[1], {3.5f, 5}, {2, 1});  // a*x + c, c = 3
  ExpectTensorEqual<float>(out[2], {5, 3}, {2, 1});     // a2*x2 + c2
  // x2 fed directly, [[1], [2], [3]] as its consumers expect.
  ASSERT_OK(
      session_->Run({{"x2:0", Tensor::FromVector<float>({1, 2, 3}, {3, 1})}}, {"y3:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {3.5f, 4, 4.5f}, {3, 1});
}

TEST_F(HalfPlusTwoTest, SaverNamesItsShardsAsTensorFlowDoes) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  ASSERT_NE(tmp, nullptr);
  const std::string prefix = std::string(tmp) + "/export/variables";
  const std::string temp = prefix + "_temp_792c9351451a4c0480d4742f6b9af436/part";
  std::vector<Tensor> out;
  ASSERT_OK(session_->Run({{"save/Const:0", Tensor::Scalar<std::string>(prefix)}},
                          {"save/StringJoin:0", "save/ShardedFilename:0"}, {}, &out));
  ExpectTensorEqual<std::string>(out[0], {temp}, {});
  ExpectTensorEqual<std::string>(out[1], {temp + "-00000-of-00001"}, {});
  // The Pack of the shards' prefixes runs once SaveV2 has written its shard.
  ASSERT_OK(session_->Run({}, {}, {"init"}, &out));
  ASSERT_OK(session_->Run({{"save/Const:0", Tensor::Scalar<std::string>(prefix)}},
                          {"save/MergeV2Checkpoints/checkpoint_prefixes:0"}, {}, &out));
  ExpectTensorEqual<std::string>(out[0], {temp + "-00000-of-00001"}, {1});
}

TEST_F(HalfPlusTwoTest, RestoresFromTensorFlowsCheckpointThenSavesAgain) {
  // The graph's own Saver restores what TensorFlow wrote (no initializer
  // runs: an unrestored variable would fail the fetches).
  const std::string variables =
      "tests/testdata/tf_saved_models/saved_model_half_plus_two_cpu/00000123/variables/variables";
  std::vector<Tensor> out;
  ASSERT_OK(session_->Run({{"save/Const:0", Tensor::Scalar<std::string>(variables)}}, {},
                          {"save/restore_all"}, &out));
  ASSERT_OK(session_->Run({{"tf_example:0", Batch({SerializedExample({{"x", {2}}, {"x2", {4}}})})}},
                          {"y:0", "y2:0", "y3:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {3}, {1, 1});
  ExpectTensorEqual<float>(out[1], {4}, {1, 1});
  ExpectTensorEqual<float>(out[2], {5}, {1, 1});
  // save/Identity runs SaveV2 into the temporary shard and
  // MergeV2Checkpoints into the prefix; a fresh session restores from it.
  const std::string prefix = std::string(std::getenv("TEST_TMPDIR")) + "/resaved/variables";
  ASSERT_OK(session_->Run({{"save/Const:0", Tensor::Scalar<std::string>(prefix)}},
                          {"save/Identity:0"}, {}, &out));
  ExpectTensorEqual<std::string>(out[0], {prefix}, {});
  auto fresh = NewSession(SessionOptions());
  ASSERT_OK(fresh.status());
  ASSERT_OK((*fresh)->Create(HalfPlusTwoGraph()));
  ASSERT_OK((*fresh)->Run({{"save/Const:0", Tensor::Scalar<std::string>(prefix)}}, {},
                          {"save/restore_all"}, &out));
  ASSERT_OK((*fresh)->Run({{"x:0", Tensor::FromVector<float>({4}, {1, 1})}}, {"y:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {4}, {1, 1});
}

// TensorFlow 1.5's counter model (producer 26): restore, then the
// signatures' ops, AssignAdd by a fed delta among them.
TEST(CounterTest, RestoresThenCounts) {
  auto session = NewSession(SessionOptions());
  ASSERT_OK(session.status());
  const GraphDef graph = SavedModelGraph(kCounter);
  EXPECT_EQ(graph.versions().producer(), 26);
  ASSERT_OK((*session)->Create(graph));
  std::vector<Tensor> out;
  const Tensor prefix = Tensor::Scalar<std::string>(std::string(kCounter) + "/variables/variables");
  ASSERT_OK((*session)->Run({{"save/Const:0", prefix}}, {}, {"save/restore_all"}, &out));
  ASSERT_OK((*session)->Run({}, {"counter:0"}, {}, &out));
  ASSERT_EQ(out[0].dtype(), DT_FLOAT);
  const float restored = out[0].scalar<float>();
  ASSERT_OK((*session)->Run({}, {"incr_counter_op/AssignAdd:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {restored + 1}, {});
  ASSERT_OK((*session)->Run({{"delta:0", Tensor::Scalar<float>(5)}},
                            {"incr_counter_by_op/AssignAdd:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {restored + 6}, {});
  ASSERT_OK((*session)->Run({}, {"reset_counter_op/Assign:0"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {0}, {});
}

}  // namespace
}  // namespace tensorgrid
