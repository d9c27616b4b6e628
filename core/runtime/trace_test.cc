#include "core/runtime/trace.h"

#include <string>
#include <vector>

#include "core/framework/attr_value_util.h"
#include "core/platform/status_testutil.h"
#include "core/public/session.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kWorker0[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1/device:CPU:0";

// The trace's events, after checking that the whole text is valid JSON.
std::vector<Struct> ParseEvents(const std::string& json) {
  Value root;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &root);
  EXPECT_TRUE(status.ok()) << status << "\n" << json;
  std::vector<Struct> events;
  const auto& fields = root.struct_value().fields();
  auto it = fields.find("traceEvents");
  if (it == fields.end()) {
    ADD_FAILURE() << "no traceEvents in " << json;
    return events;
  }
  for (const Value& v : it->second.list_value().values()) events.push_back(v.struct_value());
  return events;
}

std::string Str(const Struct& e, const std::string& key) {
  auto it = e.fields().find(key);
  return it == e.fields().end() ? "" : it->second.string_value();
}
double Num(const Struct& e, const std::string& key) {
  auto it = e.fields().find(key);
  return it == e.fields().end() ? -1 : it->second.number_value();
}
const Struct& Args(const Struct& e) { return e.fields().at("args").struct_value(); }

std::vector<Struct> WithPhase(const std::vector<Struct>& events, const std::string& ph) {
  std::vector<Struct> out;
  for (const Struct& e : events) {
    if (Str(e, "ph") == ph) out.push_back(e);
  }
  return out;
}

const Struct* Named(const std::vector<Struct>& events, const std::string& name) {
  for (const Struct& e : events) {
    if (Str(e, "ph") == "X" && Str(e, "name") == name) return &e;
  }
  return nullptr;
}

// A node's stats as the executor records them (nanosecond fields and micros).
NodeExecStats* AddStats(DeviceStepStats* dev, const std::string& node, const std::string& label,
                        int64_t start_ns, int64_t dur_ns, uint32_t tid = 7) {
  NodeExecStats* ns = dev->add_node_stats();
  ns->set_node_name(node);
  ns->set_timeline_label(label);
  ns->set_all_start_nanos(start_ns);
  ns->set_all_start_micros(start_ns / 1000);
  ns->set_all_end_rel_nanos(dur_ns);
  ns->set_all_end_rel_micros(dur_ns / 1000);
  ns->set_op_end_rel_nanos(dur_ns);
  ns->set_thread_id(tid);
  return ns;
}

void AddOutput(NodeExecStats* ns, int64_t d0, int64_t d1) {
  NodeOutput* out = ns->add_output();
  out->set_slot(0);
  TensorDescription* d = out->mutable_tensor_description();
  d->set_dtype(DT_FLOAT);
  d->mutable_shape()->add_dim()->set_size(d0);
  d->mutable_shape()->add_dim()->set_size(d1);
  d->mutable_allocation_description()->set_requested_bytes(d0 * d1 * 4);
}

// ps sends x to both workers (Partition names the two sends alike but for a
// suffix); worker 0 computes with it.
RunMetadata SeedLikeMetadata() {
  RunMetadata md;
  DeviceStepStats* w0 = md.mutable_step_stats()->add_dev_stats();
  w0->set_device(kWorker0);
  DeviceStepStats* ps = md.mutable_step_stats()->add_dev_stats();
  ps->set_device(kPs);
  DeviceStepStats* w1 = md.mutable_step_stats()->add_dev_stats();
  w1->set_device(kWorker1);
  const int64_t t0 = 1'700'000'000'000'000'000;
  AddOutput(AddStats(ps, "x", "x = VariableV2", t0, 2'000), 2, 2);
  AddStats(ps, "_send_x_0_to_CPU_0",
           absl::StrCat("_send_x_0_to_CPU_0 = _Send 16 bytes to ", kWorker0), t0 + 3'000, 1'000);
  AddStats(ps, "_send_x_0_to_CPU_0_1",
           absl::StrCat("_send_x_0_to_CPU_0_1 = _Send 16 bytes to ", kWorker1), t0 + 4'500, 500);
  AddOutput(AddStats(w0, "_recv_x_0_on_CPU_0",
                     absl::StrCat("_recv_x_0_on_CPU_0 = _Recv 16 bytes from ", kPs), t0 + 1'000,
                     5'000, 9),
            2, 2);
  AddOutput(AddStats(w0, "z1", "z1 = MatMul", t0 + 6'500, 1'500, 9), 2, 2);
  AddOutput(AddStats(w1, "_recv_x_0_on_CPU_0_1",
                     absl::StrCat("_recv_x_0_on_CPU_0_1 = _Recv 16 bytes from ", kPs), t0 + 5'500,
                     250, 11),
            2, 2);
  return md;
}

TEST(ChromeTraceTest, EmptyMetadataIsAnEmptyTrace) {
  std::vector<Struct> events = ParseEvents(ToChromeTrace(RunMetadata()));
  EXPECT_TRUE(events.empty());
}

TEST(ChromeTraceTest, OneNamedProcessPerDeviceInDeviceOrder) {
  std::vector<Struct> events = ParseEvents(ToChromeTrace(SeedLikeMetadata()));
  std::vector<std::string> names;
  std::vector<double> pids;
  for (const Struct& e : WithPhase(events, "M")) {
    if (Str(e, "name") != "process_name") continue;
    names.push_back(Str(Args(e), "name"));
    pids.push_back(Num(e, "pid"));
  }
  EXPECT_EQ(names, (std::vector<std::string>{kPs, kWorker0, kWorker1}));
  EXPECT_EQ(pids, (std::vector<double>{1, 2, 3}));
}

TEST(ChromeTraceTest, CompleteEventPerNodeWithOpTimesAndArgs) {
  std::vector<Struct> events = ParseEvents(ToChromeTrace(SeedLikeMetadata()));
  EXPECT_EQ(WithPhase(events, "X").size(), 6u);
  const Struct* z1 = Named(events, "z1");
  ASSERT_NE(z1, nullptr);
  EXPECT_EQ(Str(*z1, "cat"), "MatMul");
  EXPECT_EQ(Num(*z1, "pid"), 2);  // worker 0
  EXPECT_EQ(Num(*z1, "tid"), 9);
  EXPECT_DOUBLE_EQ(Num(*z1, "ts"), 6.5);  // microseconds after the step's first event
  EXPECT_DOUBLE_EQ(Num(*z1, "dur"), 1.5);
  EXPECT_EQ(Str(Args(*z1), "label"), "z1 = MatMul");
  EXPECT_EQ(Num(Args(*z1), "output_bytes"), 16);
  EXPECT_EQ(Args(*z1).fields().at("outputs").list_value().values(0).string_value(),
            "0: float [2,2], 16 bytes");

  const Struct* send = Named(events, "_send_x_0_to_CPU_0");
  ASSERT_NE(send, nullptr);
  EXPECT_EQ(Str(*send, "cat"), "_Send");
  EXPECT_EQ(Num(Args(*send), "bytes"), 16);
  EXPECT_EQ(Str(Args(*send), "peer"), kWorker0);
}

TEST(ChromeTraceTest, MicrosFieldsWhenNanosAreUnset) {
  RunMetadata md;
  DeviceStepStats* dev = md.mutable_step_stats()->add_dev_stats();
  dev->set_device(kPs);
  for (auto [name, start, dur] : {std::make_tuple("a", 100, 5), std::make_tuple("b", 110, 20)}) {
    NodeExecStats* ns = dev->add_node_stats();
    ns->set_node_name(name);
    ns->set_all_start_micros(start);
    ns->set_all_end_rel_micros(dur);
  }
  std::vector<Struct> events = ParseEvents(ToChromeTrace(md));
  const Struct* b = Named(events, "b");
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(Num(*b, "ts"), 10);
  EXPECT_DOUBLE_EQ(Num(*b, "dur"), 20);
  EXPECT_EQ(Str(*b, "cat"), "unknown");  // no label, no partition graph
}

// Flow start and end pairs by id, checking both ends of each.
struct Flow {
  Struct start, finish;
};
std::vector<Flow> Flows(const std::vector<Struct>& events) {
  std::vector<Flow> flows;
  for (const Struct& s : WithPhase(events, "s")) {
    Flow flow{s, {}};
    int finishes = 0;
    for (const Struct& f : WithPhase(events, "f")) {
      if (Num(f, "id") != Num(s, "id")) continue;
      flow.finish = f;
      ++finishes;
    }
    EXPECT_EQ(finishes, 1) << "flow " << Num(s, "id");
    EXPECT_EQ(Num(s, "bind_id"), Num(s, "id"));
    EXPECT_EQ(Num(flow.finish, "bind_id"), Num(s, "id"));
    EXPECT_EQ(Str(flow.finish, "bp"), "e");
    EXPECT_EQ(Str(flow.finish, "name"), Str(s, "name"));
    EXPECT_EQ(Str(flow.finish, "cat"), Str(s, "cat"));
    flows.push_back(flow);
  }
  EXPECT_EQ(WithPhase(events, "f").size(), flows.size());
  return flows;
}

TEST(ChromeTraceTest, TransfersBecomeFlowsMatchedByNameAndPeerDevice) {
  std::vector<Struct> events = ParseEvents(ToChromeTrace(SeedLikeMetadata()));
  std::vector<Flow> flows = Flows(events);
  ASSERT_EQ(flows.size(), 2u);
  // To worker 0: from just inside the send's start (3..4us) to the same
  // moment in the recv that waits 1..6us.
  EXPECT_EQ(Str(flows[0].start, "name"), "x:0");
  EXPECT_EQ(Num(flows[0].start, "pid"), 1);
  EXPECT_DOUBLE_EQ(Num(flows[0].start, "ts"), 3.125);
  EXPECT_EQ(Num(flows[0].finish, "pid"), 2);
  EXPECT_EQ(Num(flows[0].finish, "tid"), 9);
  EXPECT_DOUBLE_EQ(Num(flows[0].finish, "ts"), 3.125);
  // To worker 1 (the "_1" names): the recv (5.5..5.75us) starts after the
  // send (4.5..5us), so the arrow ends just inside the recv's start.
  EXPECT_DOUBLE_EQ(Num(flows[1].start, "ts"), 4.562);
  EXPECT_EQ(Num(flows[1].finish, "pid"), 3);
  EXPECT_DOUBLE_EQ(Num(flows[1].finish, "ts"), 5.531);
}

TEST(ChromeTraceTest, PartitionGraphsMatchTransfersByTensorName) {
  RunMetadata md = SeedLikeMetadata();
  // Receivers whose names follow no pattern: only the tensor_name attrs in the
  // partition graphs join them to their senders.
  for (DeviceStepStats& dev : *md.mutable_step_stats()->mutable_dev_stats()) {
    for (NodeExecStats& ns : *dev.mutable_node_stats()) {
      if (ns.node_name() == "_recv_x_0_on_CPU_0") ns.set_node_name("r_w0");
      if (ns.node_name() == "_recv_x_0_on_CPU_0_1") ns.set_node_name("r_w1");
      ns.clear_timeline_label();
    }
  }
  auto add_node = [&](const std::string& name, const std::string& op, const std::string& tensor,
                      const std::string& recv_device) {
    NodeDef* n = md.add_partition_graphs()->add_node();
    n->set_name(name);
    n->set_op(op);
    SetAttr(n, "tensor_name", tensor);
    SetAttr(n, "send_device", std::string(kPs));
    SetAttr(n, "recv_device", recv_device);
  };
  add_node("_send_x_0_to_CPU_0", "_Send", "edge_x_0", kWorker0);
  add_node("_send_x_0_to_CPU_0_1", "_Send", "edge_x_0_1", kWorker1);
  add_node("r_w1", "_Recv", "edge_x_0_1", kWorker1);
  add_node("r_w0", "_Recv", "edge_x_0", kWorker0);
  std::vector<Struct> events = ParseEvents(ToChromeTrace(md));
  EXPECT_EQ(Str(*Named(events, "r_w0"), "cat"), "_Recv");  // the op from the graph
  std::vector<Flow> flows = Flows(events);
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(Num(flows[0].finish, "pid"), 2);
  EXPECT_EQ(Num(flows[1].finish, "pid"), 3);
}

TEST(ChromeTraceTest, FlowsAreNamedByWhatTheyCarry) {
  RunMetadata md;
  DeviceStepStats* ps = md.mutable_step_stats()->add_dev_stats();
  ps->set_device(kPs);
  DeviceStepStats* w0 = md.mutable_step_stats()->add_dev_stats();
  w0->set_device(kWorker0);
  // A control edge (Partition's "control" tag) and a pair named otherwise,
  // known only from the partition graphs.
  AddStats(ps, "_send_z_control_to_CPU_0",
           absl::StrCat("_send_z_control_to_CPU_0 = _Send 0 bytes to ", kWorker0), 10, 10);
  AddStats(w0, "_recv_z_control_on_CPU_0",
           absl::StrCat("_recv_z_control_on_CPU_0 = _Recv 0 bytes from ", kPs), 5, 30);
  AddStats(ps, "s", "s = _Send", 40, 10);
  AddStats(w0, "r", "r = _Recv", 40, 10);
  for (const char* name : {"s", "r"}) {
    NodeDef* n = md.add_partition_graphs()->add_node();
    n->set_name(name);
    n->set_op(name[0] == 's' ? "_Send" : "_Recv");
    SetAttr(n, "tensor_name", "edge_q_0");
  }
  std::vector<Flow> flows = Flows(ParseEvents(ToChromeTrace(md)));
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(Str(flows[0].start, "name"), "^z");
  EXPECT_EQ(Str(flows[1].start, "name"), "edge_q_0");
}

TEST(ChromeTraceTest, TransferWithoutItsPeerHasNoFlow) {
  RunMetadata md;
  DeviceStepStats* w0 = md.mutable_step_stats()->add_dev_stats();
  w0->set_device(kWorker0);
  AddStats(w0, "_recv_x_0_on_CPU_0", absl::StrCat("_recv_x_0_on_CPU_0 = _Recv 16 bytes from ", kPs),
           1000, 10);
  std::vector<Struct> events = ParseEvents(ToChromeTrace(md));
  EXPECT_EQ(WithPhase(events, "X").size(), 1u);
  EXPECT_TRUE(WithPhase(events, "s").empty());
  EXPECT_TRUE(WithPhase(events, "f").empty());
}

TEST(ChromeTraceTest, NamesAndLabelsAreEscaped) {
  RunMetadata md;
  DeviceStepStats* dev = md.mutable_step_stats()->add_dev_stats();
  dev->set_device("weird \"device\"\n");
  (*dev->mutable_thread_names())[7] = "pool\\thread";
  AddStats(dev, "a\"b", "a\"b = Op\twith \x01 control", 5, 5);
  std::vector<Struct> events = ParseEvents(ToChromeTrace(md));
  const Struct* e = Named(events, "a\"b");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(Str(*e, "cat"), "Op\twith");
  EXPECT_EQ(Str(Args(*e), "label"), "a\"b = Op\twith \x01 control");
  bool saw_thread = false;
  for (const Struct& m : WithPhase(events, "M")) {
    if (Str(m, "name") == "thread_name") saw_thread = Str(Args(m), "name") == "pool\\thread";
  }
  EXPECT_TRUE(saw_thread);
}

// A real step on three local CPUs: every transfer the executor records is
// joined, with or without partition graphs in the metadata.
TEST(ChromeTraceTest, RealMultiDeviceStepHasOneFlowPerTransfer) {
  GraphDef g;
  auto add = [&](const std::string& name, const std::string& op, std::vector<std::string> inputs,
                 const std::string& device) {
    NodeDef* n = g.add_node();
    n->set_name(name);
    n->set_op(op);
    n->set_device(device);
    for (const std::string& i : inputs) n->add_input(i);
    SetAttr(n, op == "Placeholder" ? "dtype" : "T", DT_FLOAT);
    return n;
  };
  add("x", "Placeholder", {}, "/device:CPU:2");
  add("sq", "Square", {"x"}, "/device:CPU:2");
  add("neg", "Neg", {"sq"}, "/device:CPU:1");
  add("sum", "AddV2", {"neg", "x"}, "/device:CPU:0");
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 3;
  auto session = NewSession(options);
  ASSERT_OK(session.status());
  ASSERT_OK((*session)->Create(g));
  for (bool with_graphs : {false, true}) {
    RunOptions run;
    run.set_trace_level(RunOptions::FULL_TRACE);
    run.set_output_partition_graphs(with_graphs);
    RunMetadata md;
    std::vector<Tensor> out;
    ASSERT_OK((*session)->Run(run, {{"x", Tensor::FromVector<float>({1, 2}, {2})}}, {"sum"}, {},
                              &out, &md));
    int sends = 0;
    for (const DeviceStepStats& dev : md.step_stats().dev_stats()) {
      for (const NodeExecStats& ns : dev.node_stats()) {
        sends += ns.timeline_label().find(" = _Send ") != std::string::npos;
      }
    }
    EXPECT_GE(sends, 3);  // x -> CPU:0, sq -> CPU:1, neg -> CPU:0
    std::vector<Struct> events = ParseEvents(ToChromeTrace(md));
    EXPECT_EQ(Flows(events).size(), static_cast<size_t>(sends)) << "with_graphs=" << with_graphs;
  }
}

}  // namespace
}  // namespace tensorgrid
