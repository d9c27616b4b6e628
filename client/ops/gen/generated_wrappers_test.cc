// The generated ops:: wrappers against the op registry (//ops:all_ops): every
// public op has one, and the nodes they build are what the OpDefs describe.
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>

#include "absl/strings/match.h"
#include "client/node_builder.h"
#include "client/ops/collective_ops.h"
#include "client/ops/data_flow_ops.h"
#include "client/ops/gen/api_defs.h"
#include "client/ops/io_ops.h"
#include "client/ops/standard_ops.h"
#include "client/ops/training_ops.h"
#include "core/framework/attr_value_util.h"
#include "gtest/gtest.h"
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

// The generated headers, in the test's runfiles (the BUILD rule's data).
constexpr const char* kGeneratedHeaders[] = {
    "client/ops/array_ops.h", "client/ops/conv_ops.h",   "client/ops/data_flow_ops.h",
    "client/ops/io_ops.h",
    "client/ops/math_ops.h",  "client/ops/nn_ops.h",        "client/ops/parsing_ops.h",
    "client/ops/random_ops.h",
    "client/ops/state_ops.h", "client/ops/string_ops.h",   "client/ops/training_ops.h",
};

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  EXPECT_TRUE(file.good()) << "cannot read " << path;
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Required attrs are constructor parameters: a wrapper cannot be built without them.
static_assert(!std::is_constructible<ops::Cast, const Scope&, Input>::value);
static_assert(std::is_constructible<ops::Cast, const Scope&, Input, DataType>::value);
static_assert(!std::is_constructible<ops::Placeholder, const Scope&>::value);

TEST(GeneratedWrappersTest, EveryPublicRegisteredOpHasAWrapper) {
  std::set<std::string> generated, expected;
  for (const char* header : kGeneratedHeaders) {
    const std::string text = ReadFile(header);
    const std::regex class_line("\nclass (\\w+) \\{\n");
    for (std::sregex_iterator it(text.begin(), text.end(), class_line), end; it != end; ++it) {
      generated.insert((*it)[1]);
    }
  }
  int hand_written = 0;
  for (const std::string& name : OpRegistry::Global()->ListOps()) {
    const op_gen::ApiDef api = op_gen::GetApiDef(name);
    if (api.visibility == op_gen::Visibility::kVisible) expected.insert(api.endpoint);
    if (api.visibility == op_gen::Visibility::kHandWritten) {
      EXPECT_TRUE(absl::StrContains(ReadFile(api.header), " " + api.endpoint + "("))
          << name << " is not in " << api.header;
      ++hand_written;
    }
  }
  EXPECT_EQ(generated, expected);
  EXPECT_GT(generated.size(), 100u);
  EXPECT_EQ(hand_written, 5);  // Const and the four collectives
}

class WrapperNodeTest : public ::testing::Test {
 protected:
  // Every node has exactly its OpDef's attrs (defaults filled in) and inputs.
  void ExpectNodesMatchOpDefs() {
    GraphDef graph;
    ASSERT_OK(root_.ToGraphDef(&graph));
    for (const NodeDef& node : graph.node()) {
      const OpDef* op = OpRegistry::Global()->Find(node.op());
      ASSERT_NE(op, nullptr) << node.op();
      std::set<std::string> attrs, want;
      for (const auto& [name, value] : node.attr()) attrs.insert(name);
      for (const AttrDef& attr : op->attrs) want.insert(attr.name);
      EXPECT_EQ(attrs, want) << node.name();
      NodeDef copy = node;
      EXPECT_OK(ValidateNodeDef(*op, &copy));  // checks the inputs' count too
    }
  }
  NodeDef Node(const std::string& name) {
    GraphDef graph;
    EXPECT_OK(root_.ToGraphDef(&graph));
    for (const NodeDef& node : graph.node()) {
      if (node.name() == name) return node;
    }
    ADD_FAILURE() << "no node " << name;
    return NodeDef();
  }
  template <typename T>
  T Attr(const std::string& node, const std::string& attr) {
    T value{};
    EXPECT_OK(GetNodeAttr(Node(node), attr, &value));
    return value;
  }

  Scope root_ = Scope::NewRootScope();
};

TEST_F(WrapperNodeTest, AttrsAndInputsMatchTheOpDefWithDefaultsFilled) {
  auto x = ops::Placeholder(root_.WithOpName("x"), DT_FLOAT, ops::Placeholder::Shape({-1, 2}));
  auto product = ops::MatMul(root_.WithOpName("product"), x, x, ops::MatMul::TransposeB(true));
  ops::Sum(root_.WithOpName("sum"), product, {0, 1});
  ops::Cast(root_.WithOpName("cast"), x, DT_INT32);
  ops::Concat(root_, {x, x}, 0);
  auto w = ops::Variable(root_.WithOpName("w"), {2}, DT_FLOAT);
  ops::ApplyGradientDescent(root_, w, 0.1f, {1.f, 2.f});
  ops::SyncReplicasGate(root_.WithOpName("gate"), 2);
  ExpectNodesMatchOpDefs();
  ASSERT_TRUE(root_.ok()) << root_.status();

  EXPECT_EQ(Attr<PartialTensorShape>("x", "shape").DebugString(), "[?,2]");
  EXPECT_FALSE(Attr<bool>("product", "transpose_a"));
  EXPECT_TRUE(Attr<bool>("product", "transpose_b"));
  EXPECT_FALSE(Attr<bool>("sum", "keep_dims"));
  EXPECT_EQ(Attr<DataType>("sum", "Tidx"), DT_INT32);
  EXPECT_EQ(Attr<DataType>("cast", "DstT"), DT_INT32);
  EXPECT_EQ(Attr<DataType>("cast", "SrcT"), DT_FLOAT);
  EXPECT_FALSE(Attr<bool>("cast", "Truncate"));
  EXPECT_EQ(Node("Concat").op(), "ConcatV2");
  EXPECT_EQ(Attr<int64_t>("Concat", "N"), 2);
  EXPECT_EQ(Node("w").op(), "VariableV2");
  EXPECT_EQ(Attr<std::string>("w", "container"), "");
  EXPECT_EQ(Attr<int64_t>("gate", "replicas_to_aggregate"), 2);
  EXPECT_FALSE(Attr<bool>("gate", "one_per_replica"));
}

TEST_F(WrapperNodeTest, ListAttrsAndListOutputs) {
  auto q = ops::FIFOQueue(
      root_, {DT_FLOAT, DT_INT32},
      ops::FIFOQueue::Shapes({PartialTensorShape({2}), PartialTensorShape({})}).Capacity(10));
  auto got = ops::QueueDequeue(root_, q, {DT_FLOAT, DT_INT32});
  auto offsets = ops::ConcatOffset(root_, 1, {{2, 3}, {2, 7}, {2, 1}});
  auto restored = ops::RestoreV2(root_, "/tmp/ckpt", {"a", "b"}, {"", ""}, {DT_FLOAT, DT_INT64});
  ExpectNodesMatchOpDefs();
  ASSERT_TRUE(root_.ok()) << root_.status();

  EXPECT_EQ(q.operation.name(), "fifo_queue");  // the node name TensorFlow's Python gives it
  EXPECT_EQ(Attr<int64_t>("fifo_queue", "capacity"), 10);
  EXPECT_EQ(Node("fifo_queue").attr().at("shapes").list().shape_size(), 2);
  ASSERT_EQ(got.components.size(), 2u);
  EXPECT_EQ(got[1].type(), DT_INT32);
  EXPECT_EQ(got[1].index(), 1);
  EXPECT_EQ(offsets.offset.size(), 3u);
  ASSERT_EQ(restored.tensors.size(), 2u);
  EXPECT_EQ(restored[1].type(), DT_INT64);
}

TEST_F(WrapperNodeTest, RequiredAttrMissingIsAnErrorNamingIt) {
  auto x = ops::Placeholder(root_, DT_FLOAT);
  Operation cast = NodeBuilder(root_.WithOpName("cast"), "Cast").Input(x).Finalize();
  EXPECT_FALSE(cast.valid());
  EXPECT_STATUS(root_.status(), kInvalidArgument, "node 'cast' (Cast) is missing attr 'DstT'");
}

TEST_F(WrapperNodeTest, FailedListOutputsAreEmptyAndIndexSafely) {
  root_.UpdateStatus(absl::InvalidArgumentError("an earlier error"));
  auto got = ops::QueueDequeue(root_, ops::Placeholder(root_, DT_RESOURCE), {DT_FLOAT});
  EXPECT_TRUE(got.components.empty());
  EXPECT_FALSE(got[0].valid());
}

}  // namespace
}  // namespace tensorgrid
