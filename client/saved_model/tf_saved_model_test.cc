// LoadSavedModel on SavedModels TensorFlow wrote (tests/testdata/
// tf_saved_models, README.md there): the half_plus_two model's signatures,
// the counter's state across calls in one session, and a re-export through
// the TensorFlow graph's own sharded saver (ShardedFilename, SaveV2,
// MergeV2Checkpoints) that loads back with the same values.
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/saved_model/builder.h"
#include "client/saved_model/constants.h"
#include "client/saved_model/loader.h"
#include "client/saved_model/signature_runner.h"
#include "core/framework/op_def.h"
#include "core/platform/status_testutil.h"
#include "core/platform/test_dir.h"
#include "proto/example.pb.h"

namespace tensorgrid {
namespace {

std::string ModelDir(const std::string& name) {
  return std::string(std::getenv("TEST_SRCDIR")) + "/tensorgrid/tests/testdata/tf_saved_models/" +
         name + "/00000123";
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

SavedModelBundle Load(const std::string& dir) {
  SavedModelBundle bundle;
  absl::Status s =
      LoadSavedModel(SessionOptions(), RunOptions(), dir, {kSavedModelTagServe}, &bundle);
  EXPECT_TRUE(s.ok()) << s;
  return bundle;
}

// Runs `signature` with `inputs` and returns output `key` as floats.
std::vector<float> RunFloats(SavedModelBundle& bundle, const std::string& signature,
                             const std::map<std::string, Tensor>& inputs, const std::string& key) {
  auto runner = SignatureRunner::Create(&bundle, signature);
  EXPECT_TRUE(runner.ok()) << runner.status();
  if (!runner.ok()) return {};
  auto out = (*runner)->Run(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? Floats(out->at(key)) : std::vector<float>{};
}

// The arguments of `op` as text: names, types, type attrs, refs.
std::string Args(const OpDefProto& op) {
  OpDefProto args;
  *args.mutable_input_arg() = op.input_arg();
  *args.mutable_output_arg() = op.output_arg();
  for (auto* list : {args.mutable_input_arg(), args.mutable_output_arg()}) {
    for (OpDefProto::ArgDef& arg : *list) arg.clear_description();
  }
  args.DiscardUnknownFields();
  return args.ShortDebugString();
}

// An attr as text, less its description and allowed values (which list
// what each TensorFlow version and tensorgrid implement).
std::string Attr(OpDefProto::AttrDef attr) {
  attr.clear_description();
  attr.clear_allowed_values();
  return attr.ShortDebugString();
}

// Every op of TensorFlow's own stripped_op_list that tensorgrid registers is
// what tensorgrid writes into the stripped_op_list of a SavedModel it
// exports: the same arguments, statefulness, and attrs with the same types,
// defaults and minimums. tensorgrid may have attrs that later TensorFlow
// versions added, each with a default (so older graphs load).
TEST(TfSavedModelTest, OurOpDefsAreTensorFlowsForTheOpsBothHave) {
  int compared = 0;
  for (const char* model : {"saved_model_half_plus_two_cpu", "saved_model_counter"}) {
    SavedModelBundle bundle = Load(ModelDir(model));
    for (const OpDefProto& theirs : bundle.meta_graph_def.meta_info_def().stripped_op_list().op()) {
      const OpDef* def = OpRegistry::Global()->Find(theirs.name());
      if (def == nullptr) continue;
      const OpDefProto ours = OpDefToProto(*def, /*docs=*/false);
      const std::string where = absl::StrCat(model, ": op ", theirs.name());
      EXPECT_EQ(Args(ours), Args(theirs)) << where;
      EXPECT_EQ(ours.is_stateful(), theirs.is_stateful()) << where;
      std::map<std::string, std::string> our_attrs;
      for (const OpDefProto::AttrDef& attr : ours.attr()) our_attrs[attr.name()] = Attr(attr);
      for (const OpDefProto::AttrDef& attr : theirs.attr()) {
        auto it = our_attrs.find(attr.name());
        if (it == our_attrs.end()) {
          ADD_FAILURE() << where << ": no attr " << attr.name();
          continue;
        }
        EXPECT_EQ(it->second, Attr(attr)) << where;
        our_attrs.erase(it);
      }
      for (const OpDefProto::AttrDef& attr : ours.attr()) {
        if (our_attrs.count(attr.name()) > 0) {
          EXPECT_TRUE(attr.has_default_value()) << where << ": attr " << attr.name();
        }
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 10);
}

TEST(TfSavedModelTest, HalfPlusTwoServingDefault) {
  SavedModelBundle bundle = Load(ModelDir("saved_model_half_plus_two_cpu"));
  ASSERT_NE(bundle.session, nullptr);
  EXPECT_EQ(bundle.meta_graph_def.meta_info_def().tensorflow_version(), "1.14.0");
  EXPECT_EQ(
      RunFloats(bundle, "serving_default", {{"x", Tensor::FromVector<float>({1, 2, 3}, {3})}}, "y"),
      (std::vector<float>{2.5f, 3.0f, 3.5f}));
  // regress_x2_to_y3: y3 = a * x2 + c, c = 3 from the checkpoint.
  EXPECT_EQ(RunFloats(bundle, "regress_x2_to_y3",
                      {{"inputs", Tensor::FromVector<float>({1, 2}, {2, 1})}}, "outputs"),
            (std::vector<float>{3.5f, 4.0f}));
}

// The regress and classify signatures take serialized tf.Examples, parsed
// by the graph's own ParseExample.
TEST(TfSavedModelTest, HalfPlusTwoRegressAndClassifyOverExamples) {
  SavedModelBundle bundle = Load(ModelDir("saved_model_half_plus_two_cpu"));
  ASSERT_NE(bundle.session, nullptr);
  Tensor examples(DT_STRING, TensorShape({3}));
  for (int i = 0; i < 3; ++i) {
    Example example;
    (*example.mutable_features()->mutable_feature())["x"].mutable_float_list()->add_value(i + 1);
    ASSERT_TRUE(example.SerializeToString(&examples.data<std::string>()[i]));
  }
  EXPECT_EQ(RunFloats(bundle, "regress_x_to_y", {{"inputs", examples}}, "outputs"),
            (std::vector<float>{2.5f, 3.0f, 3.5f}));
  EXPECT_EQ(RunFloats(bundle, "regress_x_to_y2", {{"inputs", examples}}, "outputs"),
            (std::vector<float>{3.5f, 4.0f, 4.5f}));  // a*x + c
  EXPECT_EQ(RunFloats(bundle, "classify_x_to_y", {{"inputs", examples}}, "scores"),
            (std::vector<float>{2.5f, 3.0f, 3.5f}));
  // Garbage where an Example should be: the parser names the example.
  auto regress = SignatureRunner::Create(&bundle, "regress_x_to_y");
  ASSERT_OK(regress.status());
  Tensor garbage(DT_STRING, TensorShape({1}));
  garbage.data<std::string>()[0] = "\xff\xff not a proto";
  EXPECT_STATUS((*regress)->Run({{"inputs", garbage}}).status(), kInvalidArgument, "example 0");
}

TEST(TfSavedModelTest, CounterKeepsItsStateAcrossCallsInOneSession) {
  SavedModelBundle bundle = Load(ModelDir("saved_model_counter"));
  ASSERT_NE(bundle.session, nullptr);
  auto get = SignatureRunner::Create(&bundle, "get_counter");
  auto incr = SignatureRunner::Create(&bundle, "incr_counter");
  auto incr_by = SignatureRunner::Create(&bundle, "incr_counter_by");
  auto reset = SignatureRunner::Create(&bundle, "reset_counter");
  ASSERT_OK(get.status());
  ASSERT_OK(incr.status());
  ASSERT_OK(incr_by.status());
  ASSERT_OK(reset.status());
  auto value = [](absl::StatusOr<std::map<std::string, Tensor>> out) {
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? out->at("output").scalar<float>() : -1.0f;
  };
  EXPECT_EQ(value((*get)->Run({})), 0.0f);
  EXPECT_EQ(value((*incr)->Run({})), 1.0f);
  EXPECT_EQ(value((*incr)->Run({})), 2.0f);
  EXPECT_EQ(value((*incr_by)->Run({{"delta", Tensor::Scalar<float>(10)}})), 12.0f);
  EXPECT_EQ(value((*get)->Run({})), 12.0f);
  EXPECT_EQ(value((*reset)->Run({})), 0.0f);
  EXPECT_EQ(value((*incr)->Run({})), 1.0f);
  EXPECT_STATUS((*reset)->Run({{"delta", Tensor::Scalar<float>(1)}}).status(), kInvalidArgument,
                "signature 'reset_counter' has no input 'delta'; it takes none");
}

TEST(TfSavedModelTest, ReExportThroughTheGraphsOwnShardedSaver) {
  SavedModelBundle bundle = Load(ModelDir("saved_model_counter"));
  ASSERT_NE(bundle.session, nullptr);
  auto incr_by = SignatureRunner::Create(&bundle, "incr_counter_by");
  ASSERT_OK(incr_by.status());
  ASSERT_OK((*incr_by)->Run({{"delta", Tensor::Scalar<float>(7)}}).status());

  const std::string dir = NewTestDir("tfsm") + "/counter/1";
  SavedModelBuilder builder(dir);
  std::map<std::string, SignatureDef> signatures(bundle.GetSignatures().begin(),
                                                 bundle.GetSignatures().end());
  ASSERT_OK(builder.AddMetaGraphAndVariables(*bundle.session, bundle.meta_graph_def.graph_def(),
                                             bundle.meta_graph_def.saver_def(), {"serve"},
                                             signatures));
  ASSERT_OK(builder.Save());

  SavedModelBundle again = Load(dir);
  ASSERT_NE(again.session, nullptr);
  auto get = SignatureRunner::Create(&again, "get_counter");
  ASSERT_OK(get.status());
  auto out = (*get)->Run({});
  ASSERT_OK(out.status());
  EXPECT_EQ(out->at("output").scalar<float>(), 7.0f);
}

}  // namespace
}  // namespace tensorgrid
