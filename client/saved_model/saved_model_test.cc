// SavedModels end to end on the in-process session: export with
// SavedModelBuilder and load back, signatures by key, assets and main ops,
// and every error the loader names. The TensorFlow-written SavedModels of
// tests/testdata/tf_saved_models are loaded in tf_saved_model_test.cc.
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "client/saved_model/builder.h"
#include "client/saved_model/constants.h"
#include "client/saved_model/loader.h"
#include "client/saved_model/signature_runner.h"
#include "core/platform/file.h"
#include "core/platform/status_testutil.h"
#include "core/platform/test_dir.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace tensorgrid {
namespace {

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

// y = w * x + b with w, b variables (a reference and a resource variable), a
// counter `calls` that `count` adds one to, and a string asset placeholder.
struct Model {
  Model() {
    x = ops::Placeholder(root.WithOpName("x"), DT_FLOAT);
    w = ops::Variable(root.WithOpName("w"), {}, DT_FLOAT);
    b = ops::VarHandleOp(root.WithOpName("b"), DT_FLOAT, {});
    calls = ops::Variable(root.WithOpName("calls"), {}, DT_INT32);
    y = ops::Add(root.WithOpName("y"), ops::Mul(root, x, w),
                 ops::ReadVariableOp(root, b, DT_FLOAT));
    count = ops::AssignAdd(root.WithOpName("count"), calls, 1);
    vocab_file = ops::Placeholder(root.WithOpName("vocab_file"), DT_STRING);
    vocab_copy = ops::Variable(root.WithOpName("vocab_path"), {}, DT_STRING);
    remember_vocab =
        ops::Assign(root.WithOpName("remember_vocab"), vocab_copy, vocab_file).operation;
    init = ops::NoOp(root.WithOpName("init").WithControlDependencies(
                         {ops::Assign(root, w, 0.5f).operation,
                          ops::AssignVariableOp(root, b, 2.0f).operation,
                          ops::Assign(root, calls, 0).operation,
                          ops::Assign(root, vocab_copy, std::string("")).operation}))
               .operation;
  }

  // Initializes, sets w = 3, b = 4 (so a load that ran the initializers
  // instead of restoring would show), exports.
  absl::Status Export(const std::string& dir, bool as_text = false,
                      const MetaGraphExtras& extras = MetaGraphExtras()) {
    training::Saver saver(root);
    ClientSession session(root);
    TG_RETURN_IF_ERROR(session.Run({}, {}, {init}, nullptr));
    TG_RETURN_IF_ERROR(session.Run(
        {}, {},
        {ops::Assign(root, w, 3.0f).operation, ops::AssignVariableOp(root, b, 4.0f).operation},
        nullptr));
    SignatureDef predict = PredictSignatureDef({{"x", x}}, {{"y", y}});
    SignatureDef counter = PredictSignatureDef({}, {{"calls", count}});
    SavedModelBuilder builder(dir);
    TG_RETURN_IF_ERROR(builder.AddMetaGraphAndVariables(
        session, root, saver, {kSavedModelTagServe},
        {{kDefaultServingSignatureDefKey, predict}, {"count", counter}}, extras));
    return builder.Save(as_text);
  }

  Scope root = Scope::NewRootScope();
  Output x, w, b, calls, y, count, vocab_file, vocab_copy;
  Operation remember_vocab, init;
};

SavedModelBundle Load(const std::string& dir) {
  SavedModelBundle bundle;
  absl::Status s =
      LoadSavedModel(SessionOptions(), RunOptions(), dir, {kSavedModelTagServe}, &bundle);
  EXPECT_TRUE(s.ok()) << s;
  return bundle;
}

TEST(SavedModelTest, ExportThenLoadRestoresTheVariablesAndRunsSignatures) {
  const std::string dir = NewTestDir("sm") + "/model/1";
  Model model;
  ASSERT_OK(model.Export(dir));
  EXPECT_TRUE(MaybeSavedModelDirectory(dir));
  EXPECT_TRUE(IsRegularFile(dir + "/variables/variables.index"));

  SavedModelBundle bundle = Load(dir);
  ASSERT_NE(bundle.session, nullptr);
  auto predict = SignatureRunner::Create(&bundle, kDefaultServingSignatureDefKey);
  ASSERT_OK(predict.status());
  EXPECT_EQ((*predict)->input_keys(), std::vector<std::string>{"x"});
  auto out = (*predict)->Run({{"x", Tensor::FromVector<float>({1, 2, 3}, {3})}});
  ASSERT_OK(out.status());
  EXPECT_EQ(Floats(out->at("y")), (std::vector<float>{7, 10, 13}));  // 3x + 4: restored

  auto counter = SignatureRunner::Create(&bundle, "count");
  ASSERT_OK(counter.status());
  for (int i = 1; i <= 3; ++i) {
    auto c = (*counter)->Run({});
    ASSERT_OK(c.status());
    EXPECT_EQ(c->at("calls").scalar<int32_t>(), i);
  }
}

TEST(SavedModelTest, TheMetaGraphReadsBackAsWritten) {
  const std::string dir = NewTestDir("sm") + "/m";
  Model model;
  ASSERT_OK(model.Export(dir));
  auto saved = ReadSavedModel(dir);
  ASSERT_OK(saved.status());
  ASSERT_EQ(saved->meta_graphs_size(), 1);
  const MetaGraphDef& mg = saved->meta_graphs(0);
  EXPECT_EQ(saved->saved_model_schema_version(), 1);
  EXPECT_EQ(mg.meta_info_def().tags(0), "serve");
  // The stripped_op_list: every op the graph uses, once, by name, without docs.
  std::set<std::string> used;
  for (const NodeDef& node : mg.graph_def().node()) used.insert(node.op());
  std::vector<std::string> listed;
  for (const OpDefProto& op : mg.meta_info_def().stripped_op_list().op()) {
    listed.push_back(op.name());
    EXPECT_TRUE(op.summary().empty()) << op.name();
    if (op.name() == "VariableV2") {
      EXPECT_TRUE(op.is_stateful());
      ASSERT_EQ(op.output_arg_size(), 1);
      EXPECT_TRUE(op.output_arg(0).is_ref());
      EXPECT_EQ(op.output_arg(0).type_attr(), "dtype");
    }
  }
  EXPECT_EQ(listed, std::vector<std::string>(used.begin(), used.end()));
  EXPECT_EQ(mg.saver_def().version(), SaverDef::V2);
  EXPECT_EQ(mg.saver_def().filename_tensor_name(), "save/filename:0");
  EXPECT_EQ(mg.saver_def().restore_op_name(), "save/restore_all");
  const SignatureDef& predict = mg.signature_def().at("serving_default");
  EXPECT_EQ(predict.method_name(), "tensorflow/serving/predict");
  EXPECT_EQ(predict.inputs().at("x").name(), "x:0");
  EXPECT_EQ(predict.inputs().at("x").dtype(), DT_FLOAT);
  EXPECT_EQ(predict.outputs().at("y").name(), "y:0");

  // Byte for byte: the file holds map entries in key order, and what the
  // loader returns serializes to the same bytes.
  SavedModelBundle bundle = Load(dir);
  SavedModel reloaded;
  *reloaded.add_meta_graphs() = bundle.meta_graph_def;
  reloaded.set_saved_model_schema_version(1);
  auto file = ReadFileToString(dir + "/saved_model.pb");
  ASSERT_OK(file.status());
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    ASSERT_TRUE(reloaded.SerializeToCodedStream(&coded));
  }
  EXPECT_EQ(bytes, *file);
}

TEST(SavedModelTest, TextFormatExportLoadsToo) {
  const std::string dir = NewTestDir("sm") + "/m";
  Model model;
  ASSERT_OK(model.Export(dir, /*as_text=*/true));
  struct stat st;
  EXPECT_NE(::stat((dir + "/saved_model.pb").c_str(), &st), 0);
  EXPECT_EQ(::stat((dir + "/saved_model.pbtxt").c_str(), &st), 0);
  SavedModelBundle bundle = Load(dir);
  auto predict = SignatureRunner::Create(&bundle, kDefaultServingSignatureDefKey);
  ASSERT_OK(predict.status());
  auto out = (*predict)->Run({{"x", Tensor::Scalar<float>(1)}});
  ASSERT_OK(out.status());
  EXPECT_EQ(out->at("y").scalar<float>(), 7);
}

TEST(SavedModelTest, AssetsAreCopiedAndTheirPathsFedToTheMainOp) {
  const std::string tmp = NewTestDir("sm");
  { std::ofstream(tmp + "/vocab.txt") << "a\nb\n"; }
  const std::string dir = tmp + "/m";
  Model model;
  MetaGraphExtras extras;
  extras.assets = {{"vocab_file:0", tmp + "/vocab.txt"}};
  extras.main_op = "remember_vocab";
  ASSERT_OK(model.Export(dir, false, extras));
  auto copied = ReadFileToString(dir + "/assets/vocab.txt");
  ASSERT_OK(copied.status());
  EXPECT_EQ(*copied, "a\nb\n");

  SavedModelBundle bundle = Load(dir);
  std::vector<Tensor> out;
  ASSERT_OK(bundle.session->Run({}, {"vocab_path:0"}, {}, &out));
  EXPECT_EQ(out[0].scalar<std::string>(), dir + "/assets/vocab.txt");

  // An asset that went missing: NotFound naming it.
  ASSERT_EQ(::unlink((dir + "/assets/vocab.txt").c_str()), 0);
  SavedModelBundle again;
  EXPECT_STATUS(LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &again), kNotFound,
                "asset 'vocab.txt'");
}

TEST(SavedModelTest, SignatureErrorsNameTheKey) {
  const std::string dir = NewTestDir("sm") + "/m";
  Model model;
  ASSERT_OK(model.Export(dir));
  SavedModelBundle bundle = Load(dir);
  EXPECT_STATUS(SignatureRunner::Create(&bundle, "predict").status(), kNotFound,
                "no signature 'predict'; its signatures: count, serving_default");
  auto predict = SignatureRunner::Create(&bundle, kDefaultServingSignatureDefKey);
  ASSERT_OK(predict.status());
  EXPECT_STATUS((*predict)->Run({{"z", Tensor::Scalar<float>(1)}}).status(), kInvalidArgument,
                "has no input 'z'; its inputs: x");
  EXPECT_STATUS((*predict)->Run({}).status(), kInvalidArgument, "needs input 'x' (x:0)");
  EXPECT_STATUS((*predict)->Run({{"x", Tensor::Scalar<int32_t>(1)}}).status(), kInvalidArgument,
                "input 'x' (x:0) is float; got a int32 tensor");
  EXPECT_STATUS((*predict)->Run({{"x", Tensor::Scalar<float>(1)}}, {"q"}).status(),
                kInvalidArgument, "has no output 'q'; its outputs: y");
}

TEST(SavedModelTest, LoaderErrorsNameWhatIsMissing) {
  const std::string tmp = NewTestDir("sm");
  SavedModelBundle bundle;
  EXPECT_STATUS(LoadSavedModel(SessionOptions(), RunOptions(), tmp + "/none", {"serve"}, &bundle),
                kNotFound, "SavedModel not found in export directory '" + tmp + "/none'");

  const std::string dir = tmp + "/m";
  Model model;
  ASSERT_OK(model.Export(dir));
  EXPECT_STATUS(LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve", "gpu"}, &bundle),
                kNotFound, "no MetaGraphDef with the tags {gpu, serve}; its tag sets: {serve}");
  // TensorFlow Serving's base path: the versions below it are named.
  const std::string base = tmp + "/served";
  ASSERT_OK(model.Export(base + "/10"));
  ASSERT_OK(model.Export(base + "/9"));
  EXPECT_STATUS(LoadSavedModel(SessionOptions(), RunOptions(), base, {"serve"}, &bundle), kNotFound,
                "no saved_model.pb or saved_model.pbtxt; it holds the SavedModel versions "
                "9, 10 (TensorFlow Serving's layout): give '" +
                    base + "/10'");

  // A damaged saved_model.pb.
  const std::string bad = tmp + "/bad";
  ASSERT_OK(CreateDirectories(bad));
  ASSERT_OK(WriteWholeFile(bad + "/saved_model.pb", "\xff\xff\xff garbage"));
  EXPECT_STATUS(LoadSavedModel(SessionOptions(), RunOptions(), bad, {"serve"}, &bundle), kDataLoss,
                "'" + bad + "/saved_model.pb' does not parse");
  ASSERT_OK(WriteWholeFile(bad + "/saved_model.pb", ""));  // parses, as nothing
  EXPECT_STATUS(
      LoadSavedModel(SessionOptions(), RunOptions(), bad, {"serve"}, &bundle), kDataLoss,
      "'" + bad + "/saved_model.pb' holds no MetaGraphDef (0 bytes: empty or truncated?)");

  // Without a checkpoint the loader restores nothing (TensorFlow's rule for
  // models without variables), and says so as TensorFlow logs it; the
  // variables then read as uninitialized.
  ASSERT_EQ(::unlink((dir + "/variables/variables.index").c_str()), 0);
  SavedModelBundle unrestored;
  testing::internal::CaptureStderr();
  ASSERT_OK(LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &unrestored));
  EXPECT_NE(testing::internal::GetCapturedStderr().find(
                "tensorgrid: SavedModel '" + dir + "' has no variables (no '" + dir +
                "/variables/variables.index'); no checkpoint was restored"),
            std::string::npos);
  std::vector<Tensor> out;
  EXPECT_STATUS(unrestored.session->Run({{"x:0", Tensor::Scalar<float>(1)}}, {"y:0"}, {}, &out),
                kFailedPrecondition, "");
}

TEST(SavedModelTest, ExportNeverOverwrites) {
  const std::string dir = NewTestDir("sm");  // exists
  Model model;
  EXPECT_STATUS(model.Export(dir), kAlreadyExists, "already exists");
  // A failed export leaves nothing behind.
  const std::string parent = NewTestDir("sm");
  {
    SavedModelBuilder builder(parent + "/m");
    Scope root = Scope::NewRootScope();
    auto v = ops::Variable(root.WithOpName("v"), {}, DT_FLOAT);
    training::Saver saver(root);
    ClientSession session(root);
    // v was never initialized: saving it fails.
    EXPECT_FALSE(builder.AddMetaGraphAndVariables(session, root, saver, {"serve"}, {}).ok());
  }
  struct stat st;
  EXPECT_NE(::stat((parent + "/m").c_str(), &st), 0);
  EXPECT_EQ(::rmdir(parent.c_str()), 0);  // empty: no temporary directory left
}

TEST(SavedModelTest, Tf2FunctionLibrariesAreUnimplemented) {
  const std::string dir = NewTestDir("sm");
  SavedModel saved;
  saved.set_saved_model_schema_version(1);
  MetaGraphDef* mg = saved.add_meta_graphs();
  mg->mutable_meta_info_def()->add_tags("serve");
  NodeDef* call = mg->mutable_graph_def()->add_node();
  call->set_name("StatefulPartitionedCall");
  call->set_op("StatefulPartitionedCall");
  // A FunctionDefLibrary with one FunctionDef (opaque to tensorgrid): field 1.
  std::string library_bytes = std::string("\x0a\x02\x0a\x00", 4);
  GraphDef with_library;
  ASSERT_TRUE(with_library.ParseFromString(std::string("\x12\x04", 2) + library_bytes));
  *mg->mutable_graph_def()->mutable_library() = with_library.library();
  ASSERT_OK(WriteWholeFile(dir + "/saved_model.pb", saved.SerializeAsString()));
  SavedModelBundle bundle;
  EXPECT_STATUS(LoadSavedModel(SessionOptions(), RunOptions(), dir, {"serve"}, &bundle),
                kUnimplemented, "called by StatefulPartitionedCall");
}

}  // namespace
}  // namespace tensorgrid
