#include "core/public/session.h"

#include <fstream>
#include <sstream>
#include <thread>

#include "core/framework/attr_value_util.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

GraphDef LoadTextGraph(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  GraphDef graph;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text.str(), &graph)) << path;
  return graph;
}

std::unique_ptr<Session> NewLocalSession(const ConfigProto& config = ConfigProto()) {
  SessionOptions options;
  options.config = config;
  auto s = NewSession(options);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(s).value();
}

NodeDef MakeNode(const std::string& name, const std::string& op, std::vector<std::string> inputs) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (auto& i : inputs) n.add_input(i);
  return n;
}

// x (float placeholder [2]) -> y = x * x
GraphDef SquareGraph() {
  GraphDef g;
  NodeDef x = MakeNode("x", "Placeholder", {});
  SetAttr(&x, "dtype", DT_FLOAT);
  SetAttr(&x, "shape", PartialTensorShape({2}));
  *g.add_node() = x;
  NodeDef y = MakeNode("y", "Mul", {"x", "x"});
  SetAttr(&y, "T", DT_FLOAT);
  *g.add_node() = y;
  return g;
}

const char kVariableGraph[] = "tests/testdata/tf_graphs/variable_mul_add.pbtxt";

TEST(SessionTest, TensorFlowGraphInitThenFetch) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(LoadTextGraph(kVariableGraph)));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({}, {}, {"init"}, &out));
  ASSERT_OK(session->Run({}, {"output_node", "output_node2"}, {}, &out));
  ASSERT_EQ(out.size(), 2u);
  ExpectTensorEqual<float>(out[0], {2.0f}, TensorShape({}));
  ExpectTensorEqual<float>(out[1], {4.0f}, TensorShape({}));
}

TEST(SessionTest, TensorFlowGraphFeedsPlaceholders) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(LoadTextGraph(kVariableGraph)));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"placeholder_1", Tensor::FromVector<float>({1, 2}, {2})},
                          {"placeholder_2", Tensor::FromVector<float>({10, 20}, {2})}},
                         {"Add2"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {11, 22}, TensorShape({2}));
}

TEST(SessionTest, TensorFlowGraphWrongFeedShapeNamesPlaceholder) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(LoadTextGraph(kVariableGraph)));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({{"placeholder_1", Tensor::FromVector<float>({1, 2, 3}, {3})},
                              {"placeholder_2", Tensor::FromVector<float>({10, 20}, {2})}},
                             {"Add2"}, {}, &out),
                kInvalidArgument, "placeholder_1");
}

TEST(SessionTest, TensorFlowGraphUninitializedVariableIsFailedPrecondition) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(LoadTextGraph(kVariableGraph)));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({}, {"output_node"}, {}, &out), kFailedPrecondition, "variable_node");
}

// x2 (float placeholder, shape attr without dims) -> y = x2 * 2, as
// producer `producer` wrote it.
GraphDef EmptyShapePlaceholderGraph(int producer) {
  GraphDef g;
  g.mutable_versions()->set_producer(producer);
  NodeDef x = MakeNode("x2", "Placeholder", {});
  SetAttr(&x, "dtype", DT_FLOAT);
  SetAttr(&x, "shape", PartialTensorShape({}));
  *g.add_node() = x;
  NodeDef two = MakeNode("two", "Const", {});
  SetAttr(&two, "dtype", DT_FLOAT);
  SetAttr(&two, "value", Tensor::Scalar<float>(2));
  *g.add_node() = two;
  NodeDef y = MakeNode("y", "Mul", {"x2", "two"});
  SetAttr(&y, "T", DT_FLOAT);
  *g.add_node() = y;
  return g;
}

TEST(SessionTest, EmptyPlaceholderShapeOfProducer21TakesAnyShape) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(EmptyShapePlaceholderGraph(21)));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x2", Tensor::FromVector<float>({1, 2, 3}, {3, 1})}}, {"y"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {2, 4, 6}, TensorShape({3, 1}));
}

TEST(SessionTest, EmptyPlaceholderShapeOfProducer22IsAScalar) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(EmptyShapePlaceholderGraph(22)));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({{"x2", Tensor::FromVector<float>({1, 2, 3}, {3})}}, {"y"}, {}, &out),
                kInvalidArgument, "feed 'x2' has shape [3], but placeholder 'x2' has shape []");
  ASSERT_OK(session->Run({{"x2", Tensor::Scalar<float>(4)}}, {"y"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {8}, TensorShape({}));
}

// Sum of x (float [2, 3]) over the axes [[0, 1]], a rank-2 index tensor.
GraphDef SumOverMatrixOfAxesGraph(int producer) {
  GraphDef g;
  g.mutable_versions()->set_producer(producer);
  NodeDef x = MakeNode("x", "Const", {});
  SetAttr(&x, "dtype", DT_FLOAT);
  SetAttr(&x, "value", Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3}));
  *g.add_node() = x;
  NodeDef axes = MakeNode("axes", "Const", {});
  SetAttr(&axes, "dtype", DT_INT32);
  SetAttr(&axes, "value", Tensor::FromVector<int32_t>({0, 1}, {1, 2}));
  *g.add_node() = axes;
  NodeDef sum = MakeNode("sum", "Sum", {"x", "axes"});
  SetAttr(&sum, "T", DT_FLOAT);
  SetAttr(&sum, "Tidx", DT_INT32);
  *g.add_node() = sum;
  return g;
}

TEST(SessionTest, ReductionIndicesOfAnyRankBeforeProducer21) {
  auto old = NewLocalSession();
  ASSERT_OK(old->Create(SumOverMatrixOfAxesGraph(20)));
  std::vector<Tensor> out;
  ASSERT_OK(old->Run({}, {"sum"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {21}, TensorShape({}));
  auto current = NewLocalSession();
  ASSERT_OK(current->Create(SumOverMatrixOfAxesGraph(21)));
  EXPECT_STATUS(current->Run({}, {"sum"}, {}, &out), kInvalidArgument,
                "reduction_indices must be a scalar or a vector, got shape [1,2]");
}

TEST(SessionTest, GraphForNewerConsumersIsRefused) {
  auto session = NewLocalSession();
  GraphDef g = SquareGraph();
  g.mutable_versions()->set_producer(5000);
  g.mutable_versions()->set_min_consumer(5000);
  EXPECT_STATUS(session->Create(g), kInvalidArgument, "GraphDef min consumer version 5000");
}

TEST(SessionTest, StepNeedingUnregisteredOpIsUnimplemented) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(LoadTextGraph(kVariableGraph)));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({}, {}, {"save/restore_all"}, &out), kUnimplemented, "RestoreSlice");
}

TEST(SessionTest, WrongFeedTypeIsInvalidArgument) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({{"x", Tensor::FromVector<int32_t>({1, 2}, {2})}}, {"y"}, {}, &out),
                kInvalidArgument, "expects float");
}

TEST(SessionTest, UnknownFetchIsNotFound) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({}, {"nope:0"}, {}, &out), kNotFound, "nope");
  EXPECT_STATUS(session->Run({}, {"y:3"}, {}, &out), kInvalidArgument, "has 1 output");
}

TEST(SessionTest, MissingFeedNamesPlaceholder) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({}, {"y"}, {}, &out), kInvalidArgument, "placeholder 'x'");
}

TEST(SessionTest, FeedingAnIntermediateTensorSkipsItsProducer) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<Tensor> out;
  // y is fed directly: x is not needed and must not be asked for.
  ASSERT_OK(session->Run({{"y", Tensor::FromVector<float>({5, 6}, {2})}}, {"y"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {5, 6}, TensorShape({2}));
}

TEST(SessionTest, ExtendAddsNodes) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  GraphDef more;
  NodeDef z = MakeNode("z", "Add", {"y", "x"});
  SetAttr(&z, "T", DT_FLOAT);
  *more.add_node() = z;
  ASSERT_OK(session->Extend(more));
  std::vector<Tensor> out;
  ASSERT_OK(session->Run({{"x", Tensor::FromVector<float>({2, 3}, {2})}}, {"z"}, {}, &out));
  ExpectTensorEqual<float>(out[0], {6, 12}, TensorShape({2}));
  EXPECT_STATUS(session->Extend(more), kInvalidArgument, "duplicate node name 'z'");
}

TEST(SessionTest, CallableRunsRepeatedly) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  CallableOptions opts;
  opts.add_feed("x");
  opts.add_fetch("y");
  auto handle = session->MakeCallable(opts);
  ASSERT_OK(handle.status());
  for (int i = 0; i < 3; ++i) {
    std::vector<Tensor> out;
    ASSERT_OK(session->RunCallable(*handle, {Tensor::FromVector<float>({float(i), 2}, {2})}, &out,
                                   nullptr));
    ExpectTensorEqual<float>(out[0], {float(i * i), 4}, TensorShape({2}));
  }
  ASSERT_OK(session->ReleaseCallable(*handle));
  std::vector<Tensor> out;
  EXPECT_STATUS(session->RunCallable(*handle, {}, &out, nullptr), kInvalidArgument, "no callable");
}

TEST(SessionTest, ConcurrentRunsFromManyThreads) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        std::vector<Tensor> out;
        float v = static_cast<float>(t * 1000 + i);
        absl::Status s =
            session->Run({{"x", Tensor::FromVector<float>({v, -v}, {2})}}, {"y"}, {}, &out);
        if (!s.ok() || out[0].data<float>()[0] != v * v || out[0].data<float>()[1] != v * v) {
          failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(SessionTest, StepStatsAndPartitionGraphs) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  RunOptions options;
  options.set_trace_level(RunOptions::FULL_TRACE);
  options.set_output_partition_graphs(true);
  RunMetadata metadata;
  std::vector<Tensor> out;
  ASSERT_OK(session->Run(options, {{"x", Tensor::FromVector<float>({1, 2}, {2})}}, {"y"}, {}, &out,
                         &metadata));
  ASSERT_EQ(metadata.step_stats().dev_stats_size(), 1);
  const auto& dev = metadata.step_stats().dev_stats(0);
  EXPECT_EQ(dev.device(), "/job:localhost/replica:0/task:0/device:CPU:0");
  bool saw_y = false;
  for (const auto& ns : dev.node_stats()) {
    if (ns.node_name() != "y") continue;
    saw_y = true;
    ASSERT_EQ(ns.output_size(), 1);
    EXPECT_EQ(ns.output(0).tensor_description().allocation_description().requested_bytes(), 8);
  }
  EXPECT_TRUE(saw_y);
  ASSERT_EQ(metadata.partition_graphs_size(), 1);
  EXPECT_GE(metadata.partition_graphs(0).node_size(), 3);
}

TEST(SessionTest, ClosedSessionRefusesSteps) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(SquareGraph()));
  ASSERT_OK(session->Close());
  std::vector<Tensor> out;
  EXPECT_STATUS(session->Run({{"x", Tensor::FromVector<float>({1, 2}, {2})}}, {"y"}, {}, &out),
                kFailedPrecondition, "closed");
}

TEST(SessionTest, NullOutputsAreFineWithoutFetchesOnly) {
  auto session = NewLocalSession();
  ASSERT_OK(session->Create(LoadTextGraph(kVariableGraph)));
  ASSERT_OK(session->Run(RunOptions(), {}, {}, {"init"}, nullptr, nullptr));
  EXPECT_STATUS(session->Run(RunOptions(), {}, {"output_node"}, {}, nullptr, nullptr),
                kInvalidArgument, "no outputs vector");
}

TEST(SessionTest, UnknownTargetIsInvalidArgument) {
  SessionOptions options;
  options.target = "carrier-pigeon://x";
  EXPECT_STATUS(NewSession(options).status(), kInvalidArgument, "carrier-pigeon");
}

TEST(SessionTest, MalformedGraphIsInvalidArgument) {
  auto session = NewLocalSession();
  GraphDef g = SquareGraph();
  g.mutable_node(1)->set_input(1, "missing");
  EXPECT_STATUS(session->Create(g), kInvalidArgument, "unknown node 'missing'");
}

}  // namespace
}  // namespace tensorgrid
