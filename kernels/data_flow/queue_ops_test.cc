// The Queue*V2 kernels, run one at a time on a device (blocking cases are in
// fifo_queue_test.cc and queue_session_test.cc).
#include "kernels/ops_testutil.h"

namespace tensorgrid {
namespace {

AttrValue Shapes(const std::vector<PartialTensorShape>& shapes) {
  AttrValue v;
  v.mutable_list();  // an empty list is still a list
  for (const PartialTensorShape& s : shapes) {
    NodeDef scratch;
    SetAttr(&scratch, "s", s);
    *v.mutable_list()->add_shape() = scratch.attr().at("s").shape();
  }
  return v;
}

class QueueOpsTest : public OpsTestBase {
 protected:
  // Runs a FIFOQueueV2 node and returns its handle.
  absl::StatusOr<Tensor> MakeQueue(const std::string& node, std::vector<DataType> types,
                                   std::vector<PartialTensorShape> shapes, int64_t capacity = -1,
                                   const std::string& shared_name = "") {
    NodeDef def = NodeDefBuilder(node, "FIFOQueueV2")
                      .Attr("component_types", types)
                      .Attr("capacity", capacity)
                      .Attr("shared_name", shared_name)
                      .def();
    (*def.mutable_attr())["shapes"] = Shapes(shapes);  // NodeDefBuilder has no list(shape) setter
    node_def_ = def;
    const OpDef* op = OpRegistry::Global()->Find("FIFOQueueV2");
    TG_RETURN_IF_ERROR(ValidateNodeDef(*op, &node_def_));
    TG_ASSIGN_OR_RETURN(kernel_, KernelRegistry::Global()->CreateKernel(device(), node_def_, *op));
    inputs_.clear();
    TG_RETURN_IF_ERROR(RunOp());
    return GetOutput(0);
  }
  absl::Status Enqueue(const Tensor& handle, std::vector<Tensor> components, bool many = false) {
    std::vector<DataType> types;
    for (const Tensor& t : components) types.push_back(t.dtype());
    TG_RETURN_IF_ERROR(
        MakeOp(NodeDefBuilder("enqueue", many ? "QueueEnqueueManyV2" : "QueueEnqueueV2")
                   .Attr("Tcomponents", types)));
    inputs_.clear();
    AddInput(handle);
    for (Tensor& t : components) AddInput(std::move(t));
    return RunOp();
  }
  absl::Status Dequeue(const Tensor& handle, std::vector<DataType> types, int n = -1) {
    TG_RETURN_IF_ERROR(
        MakeOp(NodeDefBuilder("dequeue", n < 0 ? "QueueDequeueV2" : "QueueDequeueManyV2")
                   .Attr("component_types", types)));
    inputs_.clear();
    AddInput(handle);
    if (n >= 0) AddInput(Tensor::Scalar<int32_t>(n));
    return RunOp();
  }
  absl::StatusOr<int32_t> Size(const Tensor& handle) {
    TG_RETURN_IF_ERROR(MakeOp(NodeDefBuilder("size", "QueueSizeV2")));
    inputs_.clear();
    AddInput(handle);
    TG_RETURN_IF_ERROR(RunOp());
    return GetOutput(0).scalar<int32_t>();
  }
};

TEST_F(QueueOpsTest, HandleNamesTheQueueOnItsDevice) {
  auto h = MakeQueue("fifo", {DT_FLOAT}, {});
  ASSERT_OK(h.status());
  const ResourceHandle& rh = h->scalar<ResourceHandle>();
  EXPECT_EQ(rh.name, "fifo");  // no shared_name: the node's name
  EXPECT_EQ(rh.type_name, "FIFOQueue");
  EXPECT_EQ(rh.device, device()->name());
  auto shared = MakeQueue("other_node", {DT_FLOAT}, {}, -1, "shared");
  ASSERT_OK(shared.status());
  EXPECT_EQ(shared->scalar<ResourceHandle>().name, "shared");
}

TEST_F(QueueOpsTest, EnqueueDequeueInOrderWithTwoComponents) {
  auto h = MakeQueue("q", {DT_FLOAT, DT_STRING}, {});
  ASSERT_OK(h.status());
  ASSERT_OK(Enqueue(*h, {Tensor::Scalar<float>(1), Tensor::Scalar<std::string>("a")}));
  ASSERT_OK(Enqueue(
      *h, {Tensor::FromVector<float>({2, 3}, TensorShape({2})), Tensor::Scalar<std::string>("b")}));
  EXPECT_EQ(*Size(*h), 2);
  ASSERT_OK(Dequeue(*h, {DT_FLOAT, DT_STRING}));
  ExpectTensorEqual<float>(GetOutput(0), {1}, TensorShape({}));
  EXPECT_EQ(GetOutput(1).scalar<std::string>(), "a");
  ASSERT_OK(Dequeue(*h, {DT_FLOAT, DT_STRING}));
  ExpectTensorEqual<float>(GetOutput(0), {2, 3}, TensorShape({2}));  // no shapes: any shape
  EXPECT_EQ(GetOutput(1).scalar<std::string>(), "b");
  EXPECT_EQ(*Size(*h), 0);
}

TEST_F(QueueOpsTest, EnqueueManyThenDequeueManyStacksRows) {
  auto h = MakeQueue("q", {DT_INT32, DT_STRING}, {PartialTensorShape({2}), PartialTensorShape({})});
  ASSERT_OK(h.status());
  ASSERT_OK(Enqueue(*h,
                    {Tensor::FromVector<int32_t>({1, 2, 3, 4, 5, 6}, TensorShape({3, 2})),
                     Tensor::FromVector<std::string>({"a", "b", "c"}, TensorShape({3}))},
                    /*many=*/true));
  EXPECT_EQ(*Size(*h), 3);
  ASSERT_OK(Dequeue(*h, {DT_INT32, DT_STRING}, 2));
  ExpectTensorEqual<int32_t>(GetOutput(0), {1, 2, 3, 4}, TensorShape({2, 2}));
  ExpectTensorEqual<std::string>(GetOutput(1), {"a", "b"}, TensorShape({2}));
  ASSERT_OK(Dequeue(*h, {DT_INT32, DT_STRING}, 0));
  ExpectTensorEqual<int32_t>(GetOutput(0), {}, TensorShape({0, 2}));
  ASSERT_OK(Dequeue(*h, {DT_INT32, DT_STRING}));
  ExpectTensorEqual<int32_t>(GetOutput(0), {5, 6}, TensorShape({2}));
  ExpectTensorEqual<std::string>(GetOutput(1), {"c"}, TensorShape({}));
}

TEST_F(QueueOpsTest, CloseThenDequeueIsOutOfRange) {
  auto h = MakeQueue("q", {DT_FLOAT}, {});
  ASSERT_OK(h.status());
  ASSERT_OK(Enqueue(*h, {Tensor::Scalar<float>(1)}));
  ASSERT_OK(MakeOp(NodeDefBuilder("close", "QueueCloseV2")));
  inputs_.clear();
  AddInput(*h);
  ASSERT_OK(RunOp());
  EXPECT_STATUS(Enqueue(*h, {Tensor::Scalar<float>(2)}), kCancelled, "FIFOQueue 'q' is closed");
  ASSERT_OK(Dequeue(*h, {DT_FLOAT}));
  EXPECT_STATUS(
      Dequeue(*h, {DT_FLOAT}), kOutOfRange,
      "FIFOQueue 'q' is closed and has insufficient elements (requested 1, current size 0)");
}

TEST_F(QueueOpsTest, MismatchesAreInvalidArgumentNamingQueueAndComponent) {
  auto h = MakeQueue("q", {DT_FLOAT, DT_INT32}, {PartialTensorShape({2}), PartialTensorShape({})});
  ASSERT_OK(h.status());
  EXPECT_STATUS(
      Enqueue(*h, {Tensor::FromVector<float>({1, 2}, TensorShape({2})), Tensor::Scalar<float>(1)}),
      kInvalidArgument,
      "type mismatch in tuple component 1 of FIFOQueue 'q': expected int32, got float");
  EXPECT_STATUS(Enqueue(*h, {Tensor::FromVector<float>({1, 2, 3}, TensorShape({3})),
                             Tensor::Scalar<int32_t>(1)}),
                kInvalidArgument,
                "shape mismatch in tuple component 0 of FIFOQueue 'q': expected [2], got [3]");
  EXPECT_STATUS(Enqueue(*h, {Tensor::Scalar<float>(1)}), kInvalidArgument,
                "FIFOQueue 'q' has 2 components, got 1");
  EXPECT_STATUS(Dequeue(*h, {DT_FLOAT, DT_FLOAT}), kInvalidArgument,
                "FIFOQueue 'q' holds components of types (float, int32), not (float, float)");
  EXPECT_EQ(*Size(*h), 0);
}

TEST_F(QueueOpsTest, DequeueManyNeedsShapesAndACount) {
  auto h = MakeQueue("loose", {DT_FLOAT}, {});
  ASSERT_OK(h.status());
  EXPECT_STATUS(Dequeue(*h, {DT_FLOAT}, 1), kInvalidArgument,
                "FIFOQueue 'loose' was created without shapes; a dequeue of many needs the "
                "components' shapes");
  auto s = MakeQueue("shaped", {DT_FLOAT}, {PartialTensorShape({})});
  ASSERT_OK(s.status());
  ASSERT_OK(MakeOp(NodeDefBuilder("dequeue", "QueueDequeueManyV2")
                       .Attr("component_types", std::vector<DataType>{DT_FLOAT})));
  inputs_.clear();
  AddInput(*s);
  AddInput(Tensor::Scalar<int32_t>(-1));
  EXPECT_STATUS(RunOp(), kInvalidArgument, "cannot dequeue -1 elements from FIFOQueue 'shaped'");
}

TEST_F(QueueOpsTest, SharedQueueMustMatchAndBadAttrsFailAtConstruction) {
  ASSERT_OK(MakeQueue("a", {DT_FLOAT}, {}, 4, "shared").status());
  EXPECT_STATUS(MakeQueue("b", {DT_INT32}, {}, 4, "shared").status(), kInvalidArgument,
                "shared FIFOQueue 'shared' has component types (float) but requested component "
                "types (int32)");
  EXPECT_STATUS(MakeQueue("c", {DT_FLOAT}, {}, 0).status(), kInvalidArgument,
                "it must be positive, or -1 for unbounded");
  EXPECT_STATUS(MakeQueue("d", {DT_FLOAT}, {PartialTensorShape({-1, 2})}).status(),
                kInvalidArgument, "shapes must be fully defined");
  EXPECT_STATUS(MakeQueue("e", {DT_FLOAT, DT_FLOAT}, {PartialTensorShape({})}).status(),
                kInvalidArgument, "has 2 component types but 1 shapes");
}

TEST_F(QueueOpsTest, UnknownQueueIsNotFound) {
  ResourceHandle h;
  h.name = "nowhere";
  EXPECT_STATUS(Size(Tensor::Scalar<ResourceHandle>(h)).status(), kNotFound,
                "FIFOQueue 'nowhere' (container '') does not exist on");
}

}  // namespace
}  // namespace tensorgrid
