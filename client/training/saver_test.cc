// Saver end to end on the in-process session: round trips, the state file,
// max_to_keep, restore checks, corruption, and crashes during a save.
#include "client/training/saver.h"

#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/client_session.h"
#include "client/ops/standard_ops.h"
#include "core/platform/file.h"
#include "core/platform/status_testutil.h"
#include "core/platform/test_dir.h"
#include "core/util/tensor_bundle.h"

namespace tensorgrid {
namespace training {
namespace {

std::string ReadText(const std::string& path) {
  auto s = ReadFileToString(path);
  return s.ok() ? *s : "<" + s.status().ToString() + ">";
}

void WriteText(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.NumElements());
}

struct ModelOptions {
  TensorShape w_shape{2, 2};
  DataType w_dtype = DT_FLOAT;
  bool with_step = true;
  std::string w_device;
};

// w: float [2,2] ref variable; b: float [2] resource variable; step: int64
// scalar ref variable; vocab: string [2] ref variable. `init` sets them from
// `scale`: w = scale * {1,2,3,4}, b = scale * {5,6}, step = 10 * scale,
// vocab = {"a<scale>", "b"}.
struct Model {
  explicit Model(float scale, const ModelOptions& options = ModelOptions()) {
    const Scope wd = options.w_device.empty() ? root : root.WithDevice(options.w_device);
    w = ops::Variable(wd.WithOpName("w"), PartialTensorShape(options.w_shape.dim_sizes()),
                      options.w_dtype);
    b = ops::VarHandleOp(root.WithOpName("b"), DT_FLOAT, {2});
    vocab = ops::Variable(root.WithOpName("vocab"), {2}, DT_STRING);
    std::vector<Operation> inits;
    if (options.w_dtype == DT_FLOAT && options.w_shape == TensorShape({2, 2})) {
      inits.push_back(ops::Assign(wd, w,
                                  Input::Initializer({scale, 2 * scale, 3 * scale, 4 * scale},
                                                     TensorShape({2, 2})))
                          .operation);
    }
    inits.push_back(ops::AssignVariableOp(root, b, {5 * scale, 6 * scale}).operation);
    inits.push_back(
        ops::Assign(root, vocab, {"a" + std::to_string(static_cast<int>(scale)), std::string("b")})
            .operation);
    if (options.with_step) {
      step = ops::Variable(root.WithOpName("step"), PartialTensorShape(absl::Span<const int64_t>()),
                           DT_INT64);
      inits.push_back(ops::Assign(root, step, static_cast<int64_t>(10 * scale)).operation);
      read_step = ops::Identity(root, step);
    }
    init = ops::NoOp(root.WithOpName("init").WithControlDependencies(inits)).operation;
    read_w = ops::Identity(wd, w);
    read_b = ops::ReadVariableOp(root, b, DT_FLOAT);
    read_vocab = ops::Identity(root, vocab);
  }

  // Expects the variables to hold what `init` with `scale` gives.
  void ExpectValues(ClientSession& session, float scale) {
    std::vector<Tensor> out;
    absl::Status s = session.Run({read_w, read_b, read_step, read_vocab}, &out);
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(Floats(out[0]), (std::vector<float>{scale, 2 * scale, 3 * scale, 4 * scale}));
    EXPECT_EQ(Floats(out[1]), (std::vector<float>{5 * scale, 6 * scale}));
    EXPECT_EQ(out[2].scalar<int64_t>(), static_cast<int64_t>(10 * scale));
    EXPECT_EQ(out[3].data<std::string>()[0], "a" + std::to_string(static_cast<int>(scale)));
  }

  Scope root = Scope::NewRootScope();
  Output w, b, step, vocab;
  Output read_w, read_b, read_step, read_vocab;
  Operation init;
};

// A session with the model initialized from `scale` and saved at `step`.
std::string SaveModel(const std::string& prefix, float scale, int64_t step,
                      const SaverOptions& options = SaverOptions()) {
  Model m(scale);
  Saver saver(m.root, options);
  ClientSession session(m.root);
  absl::Status s = session.Run({}, {}, {m.init}, nullptr);
  EXPECT_TRUE(s.ok()) << s;
  auto path = saver.Save(session, prefix, step);
  EXPECT_TRUE(path.ok()) << path.status();
  return path.ok() ? *path : "";
}

TEST(SaverTest, SavesAndRestoresRefAndResourceVariables) {
  const std::string dir = NewTestDir("saver");
  Model m(1);
  Saver saver(m.root);
  ASSERT_OK(saver.status());
  EXPECT_EQ(saver.variable_names(), (std::vector<std::string>{"b", "step", "vocab", "w"}));
  ClientSession session(m.root);
  ASSERT_OK(session.Run({}, {}, {m.init}, nullptr));
  auto path = saver.Save(session, dir + "/model", 7);
  ASSERT_TRUE(path.ok()) << path.status();
  EXPECT_EQ(*path, dir + "/model-7");
  EXPECT_TRUE(checkpoint::CheckpointExists(*path));

  // Into a fresh session of the same graph, nothing initialized.
  Model fresh(0);
  Saver fresh_saver(fresh.root);
  ClientSession fresh_session(fresh.root);
  ASSERT_OK(fresh_saver.Restore(fresh_session, *path));
  fresh.ExpectValues(fresh_session, 1);

  // Into the saving session, after the variables changed.
  ASSERT_OK(session.Run(
      {}, {}, {ops::AssignAdd(m.root, m.w, Input::Initializer(1.f, {2, 2})).operation}, nullptr));
  ASSERT_OK(saver.Restore(session, *path));
  m.ExpectValues(session, 1);
}

TEST(SaverTest, GraphHasTensorFlowsNodeNames) {
  Model m(1);
  Saver saver(m.root);
  ASSERT_OK(saver.status());
  EXPECT_EQ(saver.filename_tensor_name(), "save/filename:0");
  EXPECT_EQ(saver.save_tensor_name(), "save/control_dependency:0");
  EXPECT_EQ(saver.restore_op_name(), "save/restore_all");
  Saver second(m.root);
  EXPECT_EQ(second.restore_op_name(), "save_1/restore_all");
  GraphDef graph;
  ASSERT_OK(m.root.ToGraphDef(&graph));
  std::vector<std::string> ops;
  for (const NodeDef& n : graph.node()) {
    if (n.name() == "save/SaveV2" || n.name() == "save/RestoreV2") ops.push_back(n.op());
  }
  EXPECT_EQ(ops, (std::vector<std::string>{"SaveV2", "RestoreV2"}));
}

TEST(SaverTest, SaveOpsRunOnTheCpuOfTheFirstPlacedVariable) {
  ModelOptions gpu;
  gpu.w_device = "/job:ps/task:1/device:GPU:0";
  Model m(1, gpu);
  Saver saver(m.root, std::vector<Output>{m.w, m.b});  // b has no device: w decides
  GraphDef graph;
  ASSERT_OK(m.root.ToGraphDef(&graph));
  int checked = 0;
  for (const NodeDef& n : graph.node()) {
    if (n.name() == "save/SaveV2" || n.name() == "save/RestoreV2") {
      EXPECT_EQ(n.device(), "/job:ps/task:1/device:CPU:0") << n.name();
      ++checked;
    }
  }
  EXPECT_EQ(checked, 2);

  // Two CPUs, w on CPU:1: the save runs there, b's value comes from CPU:0.
  ModelOptions cpu1;
  cpu1.w_device = "/device:CPU:1";
  Model two(3, cpu1);
  Saver two_saver(two.root);
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 2;
  ClientSession session(two.root, options);
  ASSERT_OK(session.Run({}, {}, {two.init}, nullptr));
  const std::string dir = NewTestDir("saver");
  RunOptions run_options;
  run_options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  const Output filename(Operation("save/filename", {DT_STRING}), 0);
  const Output saved(Operation("save/control_dependency", {DT_STRING}), 0);
  ASSERT_OK(session.Run(run_options, {{filename, dir + "/model"}}, {saved}, {}, &out, &metadata));
  std::string save_device;
  for (const GraphDef& partition : metadata.partition_graphs()) {
    for (const NodeDef& n : partition.node()) {
      if (n.name() == "save/SaveV2") save_device = n.device();
    }
  }
  EXPECT_TRUE(absl::EndsWith(save_device, "/device:CPU:1")) << save_device;
  ASSERT_OK(session.Run(
      {}, {}, {ops::AssignAdd(two.root, two.w, Input::Initializer(1.f, {2, 2})).operation},
      nullptr));
  ASSERT_OK(two_saver.Restore(session, dir + "/model"));
  two.ExpectValues(session, 3);
}

TEST(SaverTest, WritesTheCheckpointStateFileAndFindsTheLatest) {
  const std::string dir = NewTestDir("saver");
  EXPECT_STATUS(LatestCheckpoint(dir).status(), kNotFound,
                "no checkpoint state file '" + dir + "/checkpoint'");
  SaveModel(dir + "/model", 1, 100);
  SaveModel(dir + "/model", 2, 200);  // a new Saver takes over model-100
  EXPECT_EQ(ReadText(dir + "/checkpoint"),
            "model_checkpoint_path: \"model-200\"\n"
            "all_model_checkpoint_paths: \"model-100\"\n"
            "all_model_checkpoint_paths: \"model-200\"\n");
  auto latest = LatestCheckpoint(dir);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, dir + "/model-200");
  auto state = GetCheckpointState(dir);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->all_model_checkpoint_paths,
            (std::vector<std::string>{dir + "/model-100", dir + "/model-200"}));

  Model m(0);
  Saver saver(m.root);
  ClientSession session(m.root);
  ASSERT_OK(saver.Restore(session, *latest));
  m.ExpectValues(session, 2);
}

TEST(SaverTest, ReadsTensorFlowStateFilesAndRejectsGarbage) {
  const std::string dir = NewTestDir("saver");
  SaveModel(dir + "/model", 1, 5);
  WriteText(dir + "/checkpoint", "model_checkpoint_path: \"" + dir +
                                     "/model-5\"\n"
                                     "all_model_checkpoint_paths: \"" +
                                     dir +
                                     "/model-5\"\n"
                                     "all_model_checkpoint_timestamps: 1700000000.5\n"
                                     "last_preserved_timestamp: 1699999999.25\n");
  auto latest = LatestCheckpoint(dir);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, dir + "/model-5");

  WriteText(dir + "/checkpoint", "model_checkpoint_path: \"model-6\"\n");
  EXPECT_STATUS(LatestCheckpoint(dir).status(), kNotFound,
                "names checkpoint '" + dir + "/model-6', which does not exist");
  WriteText(dir + "/checkpoint", "\x01\x02 garbage without a colon\n");
  EXPECT_STATUS(LatestCheckpoint(dir).status(), kDataLoss,
                "checkpoint state file '" + dir + "/checkpoint' line 1");
  WriteText(dir + "/checkpoint", "model_checkpoint_path: model-5\n");
  EXPECT_STATUS(LatestCheckpoint(dir).status(), kDataLoss, "expected a quoted path");
  WriteText(dir + "/checkpoint", "");
  EXPECT_STATUS(LatestCheckpoint(dir).status(), kNotFound, "names no checkpoint");
}

TEST(SaverTest, MaxToKeepDeletesTheOldestCheckpoints) {
  const std::string dir = NewTestDir("saver");
  Model m(1);
  SaverOptions options;
  options.max_to_keep = 2;
  Saver saver(m.root, options);
  ClientSession session(m.root);
  ASSERT_OK(session.Run({}, {}, {m.init}, nullptr));
  for (int step = 1; step <= 4; ++step) ASSERT_TRUE(saver.Save(session, dir + "/model", step).ok());
  EXPECT_EQ(saver.last_checkpoints(),
            (std::vector<std::string>{dir + "/model-3", dir + "/model-4"}));
  EXPECT_FALSE(checkpoint::CheckpointExists(dir + "/model-1"));
  EXPECT_FALSE(checkpoint::CheckpointExists(dir + "/model-2"));
  EXPECT_TRUE(checkpoint::CheckpointExists(dir + "/model-3"));
  EXPECT_EQ(ListDir(dir).size(), 5u);  // checkpoint + 2 x (index, data)
  EXPECT_EQ(ReadText(dir + "/checkpoint"),
            "model_checkpoint_path: \"model-4\"\n"
            "all_model_checkpoint_paths: \"model-3\"\n"
            "all_model_checkpoint_paths: \"model-4\"\n");

  // Saving the same step again moves it to the end instead of duplicating it.
  ASSERT_TRUE(saver.Save(session, dir + "/model", 3).ok());
  EXPECT_EQ(saver.last_checkpoints(),
            (std::vector<std::string>{dir + "/model-4", dir + "/model-3"}));

  // A later run's Saver counts the checkpoints already there.
  Model later(2);
  Saver later_saver(later.root, options);
  ClientSession later_session(later.root);
  ASSERT_OK(later_session.Run({}, {}, {later.init}, nullptr));
  ASSERT_TRUE(later_saver.Save(later_session, dir + "/model", 5).ok());
  EXPECT_FALSE(checkpoint::CheckpointExists(dir + "/model-4"));
  EXPECT_EQ(later_saver.last_checkpoints(),
            (std::vector<std::string>{dir + "/model-3", dir + "/model-5"}));
}

TEST(SaverTest, MaxToKeepZeroKeepsEverythingAndNoStepOverwrites) {
  const std::string dir = NewTestDir("saver");
  Model m(1);
  SaverOptions options;
  options.max_to_keep = 0;
  Saver saver(m.root, options);
  ClientSession session(m.root);
  ASSERT_OK(session.Run({}, {}, {m.init}, nullptr));
  for (int step = 1; step <= 7; ++step) ASSERT_TRUE(saver.Save(session, dir + "/model", step).ok());
  EXPECT_EQ(saver.last_checkpoints().size(), 7u);
  auto a = saver.Save(session, dir + "/plain");
  auto b = saver.Save(session, dir + "/plain");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*b, dir + "/plain");
  // The state file, an index and a data file per step, and "plain"'s
  // second save in two shards (the first shard count's files are gone).
  EXPECT_EQ(ListDir(dir).size(), 1u + 2 * 7 + 3);
  EXPECT_EQ(*LatestCheckpoint(dir), dir + "/plain");
}

TEST(SaverTest, VarListChoosesTheVariables) {
  const std::string dir = NewTestDir("saver");
  Model m(1);
  Saver partial(m.root, std::vector<Output>{m.w, m.read_b});  // a ReadVariableOp names b
  ASSERT_OK(partial.status());
  EXPECT_EQ(partial.variable_names(), (std::vector<std::string>{"b", "w"}));
  ClientSession session(m.root);
  ASSERT_OK(session.Run({}, {}, {m.init}, nullptr));
  auto path = partial.Save(session, dir + "/partial");
  ASSERT_TRUE(path.ok()) << path.status();

  // A Saver of every variable misses "step" (and "vocab") in that checkpoint.
  Model fresh(0);
  Saver all(fresh.root);
  ClientSession fresh_session(fresh.root);
  absl::Status s = all.Restore(fresh_session, *path);
  EXPECT_STATUS(s, kNotFound, "tensor 'step' not found in checkpoint '" + *path + "'");
  EXPECT_STATUS(s, kNotFound, *path + ".index");

  EXPECT_STATUS(Saver(m.root, std::vector<Output>{m.read_w}).status(), kInvalidArgument,
                "(op Identity) is not a variable");
  EXPECT_STATUS(Saver(m.root, std::vector<Output>{m.w, m.w}).status(), kInvalidArgument,
                "variable 'w' is listed twice");
  Scope empty = Scope::NewRootScope();
  ops::Const(empty, 1.f);
  EXPECT_STATUS(Saver(empty).status(), kInvalidArgument, "no variables to save");
  EXPECT_STATUS(Saver(m.root.NewSubScope("nothing_here")).status(), kInvalidArgument,
                "no variables to save in scope 'nothing_here'");
}

TEST(SaverTest, RestoreChecksShapesAndDtypes) {
  const std::string dir = NewTestDir("saver");
  const std::string path = SaveModel(dir + "/model", 1, 1);

  ModelOptions wrong_shape;
  wrong_shape.w_shape = TensorShape({4});
  Model reshaped(0, wrong_shape);
  Saver saver(reshaped.root);
  ClientSession session(reshaped.root);
  absl::Status s = saver.Restore(session, path);
  EXPECT_STATUS(
      s, kInvalidArgument,
      "tensor 'w' in checkpoint '" + path + "' has shape [2,2], but the graph expects shape [4]");

  ModelOptions wrong_dtype;
  wrong_dtype.w_dtype = DT_INT32;
  Model retyped(0, wrong_dtype);
  Saver retyped_saver(retyped.root);
  ClientSession retyped_session(retyped.root);
  EXPECT_STATUS(
      retyped_saver.Restore(retyped_session, path), kInvalidArgument,
      "tensor 'w' in checkpoint '" + path + "' has dtype float, but the graph expects int32");

  Model m(0);
  Saver ok_saver(m.root);
  ClientSession ok_session(m.root);
  EXPECT_STATUS(ok_saver.Restore(ok_session, dir + "/model-99"), kNotFound,
                "checkpoint '" + dir + "/model-99' not found");
}

TEST(SaverTest, CorruptedCheckpointsAreDataLossNamingFileAndTensor) {
  const std::string dir = NewTestDir("saver");
  const std::string path = SaveModel(dir + "/model", 1, 1);
  std::string data_path, w_place;
  {
    auto reader = checkpoint::CheckpointReader::Open(path);
    ASSERT_TRUE(reader.ok());
    data_path = (*reader)->data_path();
    std::string bytes = ReadText(data_path);
    bytes[(*reader)->Find("w")->offset + 1] ^= 0x10;  // one bit of w
    WriteText(data_path, bytes);
  }
  Model m(0);
  Saver saver(m.root);
  ClientSession session(m.root);
  absl::Status s = saver.Restore(session, path);
  EXPECT_STATUS(s, kDataLoss,
                "tensor 'w' in checkpoint data file '" + data_path + "' is corrupted");

  ASSERT_EQ(::truncate(data_path.c_str(), 2), 0);
  EXPECT_STATUS(saver.Restore(session, path), kDataLoss, "truncated");
  WriteText(path + ".index", "garbage");
  EXPECT_STATUS(saver.Restore(session, path), kDataLoss,
                "checkpoint index '" + path + ".index' is corrupted");
}

// ---------------------------------------------------------------- crashes

// A fixed directory per crash point: the death test child (the "threadsafe"
// style re-runs this test in a new process) must use the parent's.
class SaverCrashTest : public ::testing::TestWithParam<checkpoint::SavePoint> {
 protected:
  void SetUp() override {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    dir_ = TestTmpRoot() + "/crash" + std::to_string(static_cast<int>(GetParam()));
    ::mkdir(dir_.c_str(), 0755);
    for (const std::string& name : ListDir(dir_)) ::unlink((dir_ + "/" + name).c_str());
  }
  std::string dir_;
};

// Saves model-2 from a new session and is killed at `point` of the save.
void SaveAndDieAt(const std::string& dir, checkpoint::SavePoint point) {
  checkpoint::SetSaveHookForTesting([point](checkpoint::SavePoint p, const std::string&) {
    if (p == point) ::raise(SIGKILL);
  });
  SaveModel(dir + "/model", 2, 2);
  std::fprintf(stderr, "the save finished without reaching the kill point\n");
  std::exit(0);
}

TEST_P(SaverCrashTest, TheLatestCheckpointSurvivesACrashDuringTheNextSave) {
  const std::string first = SaveModel(dir_ + "/model", 1, 1);
  const std::string state = ReadText(dir_ + "/checkpoint");
  EXPECT_EXIT(SaveAndDieAt(dir_, GetParam()), ::testing::KilledBySignal(SIGKILL), "");

  EXPECT_EQ(ReadText(dir_ + "/checkpoint"), state);
  auto latest = LatestCheckpoint(dir_);
  ASSERT_TRUE(latest.ok()) << latest.status();
  EXPECT_EQ(*latest, first);
  Model m(0);
  Saver saver(m.root);
  ClientSession session(m.root);
  ASSERT_OK(saver.Restore(session, *latest));
  m.ExpectValues(session, 1);

  // Saving goes on normally afterwards.
  const std::string third = SaveModel(dir_ + "/model", 3, 3);
  EXPECT_EQ(*LatestCheckpoint(dir_), third);
}

INSTANTIATE_TEST_SUITE_P(EverySavePoint, SaverCrashTest,
                         ::testing::Values(checkpoint::SavePoint::kDataFilePartlyWritten,
                                           checkpoint::SavePoint::kDataFileWritten,
                                           checkpoint::SavePoint::kIndexTempWritten,
                                           checkpoint::SavePoint::kIndexRenamed,
                                           checkpoint::SavePoint::kAtomicTempWritten));

}  // namespace
}  // namespace training
}  // namespace tensorgrid
