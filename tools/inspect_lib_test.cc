#include "tools/inspect_lib.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "core/framework/attr_value_util.h"
#include "core/platform/status_testutil.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tools/inspect_format.h"
#include "tools/tg_run_lib.h"

namespace tensorgrid {
namespace tg_inspect {
namespace {

constexpr char kSeedGraph[] = "tests/testdata/seed_placement.pbtxt";
constexpr char kSeedCluster[] = "ps=localhost:2222;worker=localhost:2223,localhost:2224";
constexpr char kPs[] = "/job:ps/replica:0/task:0/device:CPU:0";
constexpr char kWorker0[] = "/job:worker/replica:0/task:0/device:CPU:0";
constexpr char kWorker1[] = "/job:worker/replica:0/task:1/device:CPU:0";

std::vector<std::string> Names(const std::vector<DeviceAttributes>& devices) {
  std::vector<std::string> out;
  for (const DeviceAttributes& d : devices) out.push_back(d.name);
  return out;
}

NodeDef* AddNode(GraphDef* g, const std::string& name, const std::string& op,
                 std::vector<std::string> inputs = {}, const std::string& device = "") {
  NodeDef* n = g->add_node();
  n->set_name(name);
  n->set_op(op);
  n->set_device(device);
  for (const std::string& in : inputs) n->add_input(in);
  if (op == "Placeholder") {
    SetAttr(n, "dtype", DT_FLOAT);
  } else if (op != "NoOp") {
    SetAttr(n, "T", DT_FLOAT);
  }
  return n;
}

struct Seed {
  GraphDef graph;
  std::vector<DeviceAttributes> devices;
  PlacerOptions options;
};

Seed LoadSeed() {
  Seed seed;
  absl::StatusOr<GraphDef> graph = tg_run::LoadGraphDef(kSeedGraph);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (graph.ok()) seed.graph = *graph;
  absl::StatusOr<std::vector<DeviceAttributes>> devices = ClusterDevices(kSeedCluster, "");
  EXPECT_TRUE(devices.ok()) << devices.status();
  if (devices.ok()) seed.devices = *devices;
  seed.options.default_device = DefaultDevice(seed.devices);
  return seed;
}

Inspection InspectSeed() {
  Seed seed = LoadSeed();
  absl::StatusOr<Inspection> inspection =
      Inspect(seed.graph, seed.devices, seed.options, TaskAddresses(*ParseCluster(kSeedCluster)));
  EXPECT_TRUE(inspection.ok()) << inspection.status();
  return inspection.ok() ? *std::move(inspection) : Inspection();
}

// ---------------------------------------------------------------------------
// Flags

TEST(ParseFlagsTest, ValuesBothWaysAndBareBooleans) {
  absl::StatusOr<Options> o = ParseFlags(
      {"--graph", "g.pbtxt", "--cluster=ps=a:1;worker=b:2", "--devices_per_task=CPU:2", "--json",
       "--allow_soft_placement=true", "--dot=out.dot", "--default_device", "/job:ps"});
  ASSERT_OK(o.status());
  EXPECT_EQ(o->graph_path, "g.pbtxt");
  EXPECT_EQ(o->cluster, "ps=a:1;worker=b:2");
  EXPECT_EQ(o->devices_per_task, "CPU:2");
  EXPECT_TRUE(o->json);
  EXPECT_TRUE(o->allow_soft_placement);
  EXPECT_EQ(o->dot_path, "out.dot");
  EXPECT_EQ(o->default_device, "/job:ps");

  o = ParseFlags(
      {"--graph=g",
       "--devices=/job:a/replica:0/task:0/device:CPU:0, /job:a/replica:0/task:0/device:CPU:1",
       "--json=false"});
  ASSERT_OK(o.status());
  EXPECT_EQ(o->devices, (std::vector<std::string>{"/job:a/replica:0/task:0/device:CPU:0",
                                                  "/job:a/replica:0/task:0/device:CPU:1"}));
  EXPECT_FALSE(o->json);

  o = ParseFlags({"--trace=md.pb", "--out=t.json"});
  ASSERT_OK(o.status());
  EXPECT_EQ(o->trace_path, "md.pb");
  EXPECT_EQ(o->out_path, "t.json");

  o = ParseFlags({"--help"});
  ASSERT_OK(o.status());
  EXPECT_TRUE(o->help);
}

TEST(ParseFlagsTest, BadFlagsAndCombinations) {
  EXPECT_STATUS(ParseFlags({"--graph=g", "--bogus=1"}).status(), kInvalidArgument,
                "unknown flag '--bogus'");
  EXPECT_STATUS(ParseFlags({"g.pbtxt"}).status(), kInvalidArgument,
                "unexpected argument 'g.pbtxt'");
  EXPECT_STATUS(ParseFlags({"--graph"}).status(), kInvalidArgument, "'--graph' needs a value");
  EXPECT_STATUS(ParseFlags({"--json=maybe", "--graph=g"}).status(), kInvalidArgument,
                "takes true or false, got 'maybe'");
  EXPECT_STATUS(ParseFlags({}).status(), kInvalidArgument, "give --graph=FILE");
  EXPECT_STATUS(
      ParseFlags({"--graph=g", "--cluster=ps=a:1", "--devices=/job:a/replica:0/task:0/cpu:0"})
          .status(),
      kInvalidArgument, "either --cluster or --devices");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--devices_per_task=CPU:2"}).status(), kInvalidArgument,
                "--devices_per_task applies to --cluster");
  EXPECT_STATUS(ParseFlags({"--trace=t", "--graph=g"}).status(), kInvalidArgument,
                "takes only --out");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--out=o"}).status(), kInvalidArgument, "--trace only");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--explain=x", "--json"}).status(), kInvalidArgument,
                "drop --json");
  EXPECT_STATUS(ParseFlags({"--graph=g", "--devices=a,,b"}).status(), kInvalidArgument,
                "empty name");
}

// ---------------------------------------------------------------------------
// Device sets

TEST(DeviceSetTest, ClusterGivesEveryTaskItsDevices) {
  absl::StatusOr<std::vector<DeviceAttributes>> d = ClusterDevices(kSeedCluster, "");
  ASSERT_OK(d.status());
  EXPECT_EQ(Names(*d), (std::vector<std::string>{kPs, kWorker0, kWorker1}));
  EXPECT_EQ((*d)[0].type, "CPU");

  d = ClusterDevices("worker=h:1", "cpu:2,GPU:1");
  ASSERT_OK(d.status());
  EXPECT_EQ(Names(*d), (std::vector<std::string>{"/job:worker/replica:0/task:0/device:CPU:0",
                                                 "/job:worker/replica:0/task:0/device:CPU:1",
                                                 "/job:worker/replica:0/task:0/device:GPU:0"}));
  EXPECT_EQ((*d)[2].type, "GPU");
}

TEST(DeviceSetTest, MalformedClustersAndDeviceCounts) {
  EXPECT_STATUS(ClusterDevices("ps", "").status(), kInvalidArgument, "expected JOB=host:port");
  EXPECT_STATUS(ClusterDevices("ps=a:1;", "").status(), kInvalidArgument, "got ''");
  EXPECT_STATUS(ClusterDevices("ps=a:1,", "").status(), kInvalidArgument,
                "job 'ps' has an empty task address");
  EXPECT_STATUS(ClusterDevices("ps=a:1;ps=b:2", "").status(), kInvalidArgument,
                "job 'ps' is given twice");
  EXPECT_STATUS(ClusterDevices("a/b=h:1", "").status(), kInvalidArgument,
                "'a/b' is not a valid job name");
  EXPECT_STATUS(ClusterDevices("ps=a:1", "CPU").status(), kInvalidArgument, "expected TYPE:COUNT");
  EXPECT_STATUS(ClusterDevices("ps=a:1", "CPU:0").status(), kInvalidArgument, "got 'CPU:0'");
  EXPECT_STATUS(ClusterDevices("ps=a:1", "CPU:x").status(), kInvalidArgument, "got 'CPU:x'");
  EXPECT_STATUS(ClusterDevices("ps=a:1", "CPU:1,cpu:2").status(), kInvalidArgument,
                "CPU is given twice");
}

TEST(DeviceSetTest, ListedDevicesAreFullAndCanonical) {
  absl::StatusOr<std::vector<DeviceAttributes>> d =
      ListedDevices({"/job:a/replica:0/task:0/cpu:1", "/job:a/replica:0/task:0/device:CPU:0"});
  ASSERT_OK(d.status());
  EXPECT_EQ(Names(*d), (std::vector<std::string>{"/job:a/replica:0/task:0/device:CPU:1",
                                                 "/job:a/replica:0/task:0/device:CPU:0"}));
  EXPECT_STATUS(ListedDevices({"/job:a/device:CPU:0"}).status(), kInvalidArgument,
                "'/job:a/device:CPU:0' is not a full device name");
  EXPECT_STATUS(
      ListedDevices({"/job:a/replica:0/task:0/cpu:0", "/job:a/replica:0/task:0/device:CPU:0"})
          .status(),
      kInvalidArgument, "is given twice");
  EXPECT_STATUS(ListedDevices({"/job:a/task:x"}).status(), kInvalidArgument, "task must be");
}

TEST(DeviceSetTest, DefaultsToOneLocalCpu) {
  absl::StatusOr<std::vector<DeviceAttributes>> d = DevicesFromOptions(Options());
  ASSERT_OK(d.status());
  EXPECT_EQ(Names(*d), (std::vector<std::string>{"/job:localhost/replica:0/task:0/device:CPU:0"}));
}

TEST(DeviceSetTest, DefaultDeviceIsFirstWorkerTaskElseFirstTask) {
  EXPECT_EQ(DefaultDevice(*ClusterDevices("ps=a:1;worker=b:1,c:1", "")),
            "/job:worker/replica:0/task:0");
  EXPECT_EQ(DefaultDevice(*ClusterDevices("worker=b:1,c:1;chief=a:1", "")),
            "/job:worker/replica:0/task:0");
  EXPECT_EQ(DefaultDevice(*ClusterDevices("ps=a:1,b:1;trainer=c:1", "")),
            "/job:ps/replica:0/task:0");
  EXPECT_EQ(DefaultDevice({}), "");
}

// ---------------------------------------------------------------------------
// Placement and partitions

TEST(InspectTest, SeedExamplePlacement) {
  Inspection inspection = InspectSeed();
  ASSERT_EQ(inspection.placement.size(), 10u);
  auto row = [&](const std::string& node) -> PlacementRow {
    for (const PlacementRow& r : inspection.placement) {
      if (r.node == node) return r;
    }
    ADD_FAILURE() << "no row for " << node;
    return {};
  };
  EXPECT_EQ(inspection.placement[0].node, "x");  // GraphDef order
  EXPECT_EQ(row("x").assigned, kPs);
  EXPECT_EQ(row("x").requested, "/job:ps/task:0");
  EXPECT_EQ(row("x").reason, "explicit request '/job:ps/task:0'");
  EXPECT_EQ(row("x/initial_value").assigned, kPs);
  EXPECT_EQ(row("x/initial_value").requested, "");
  EXPECT_EQ(row("x/initial_value").reason, "follows its only consumer 'x/Assign'");
  EXPECT_EQ(row("z1b").assigned, kWorker0);
  EXPECT_EQ(row("z2").assigned, kWorker1);
  EXPECT_EQ(row("z2").op, "MatMul");
}

TEST(InspectTest, SeedExamplePartitionsAndTransfers) {
  Inspection inspection = InspectSeed();
  ASSERT_EQ(inspection.partitions.size(), 3u);
  const PartitionSummary& ps = inspection.partitions[0];
  EXPECT_EQ(ps.task, "/job:ps/replica:0/task:0");
  EXPECT_EQ(ps.address, "localhost:2222");
  EXPECT_EQ(ps.device, kPs);
  EXPECT_EQ(ps.nodes, 6);
  EXPECT_EQ(ps.sends, 3);  // x to each worker, y to worker 0
  EXPECT_EQ(ps.recvs, 0);
  EXPECT_EQ(ps.bytes_sent, 48);
  EXPECT_EQ(ps.bytes_received, 0);
  const PartitionSummary& w0 = inspection.partitions[1];
  EXPECT_EQ(w0.device, kWorker0);
  EXPECT_EQ(w0.nodes, 2);
  EXPECT_EQ(w0.sends, 1);  // z1b to worker 1
  EXPECT_EQ(w0.recvs, 2);
  EXPECT_EQ(w0.bytes_sent, 16);
  EXPECT_EQ(w0.bytes_received, 32);
  const PartitionSummary& w1 = inspection.partitions[2];
  EXPECT_EQ(w1.address, "localhost:2224");
  EXPECT_EQ(w1.recvs, 2);
  EXPECT_EQ(w1.bytes_received, 32);

  ASSERT_EQ(inspection.transfers.size(), 4u);
  std::vector<std::string> tensors;
  for (const Transfer& t : inspection.transfers) {
    tensors.push_back(t.tensor);
    EXPECT_EQ(t.dtype, DT_FLOAT);
    EXPECT_EQ(t.shape, "[2,2]");
    EXPECT_EQ(t.bytes, 16);
    EXPECT_FALSE(t.recv_node.empty()) << t.send_node;
  }
  EXPECT_EQ(tensors, (std::vector<std::string>{"x:0", "x:0", "y:0", "z1b:0"}));
  EXPECT_EQ(inspection.transfers[3].send_device, kWorker0);
  EXPECT_EQ(inspection.transfers[3].recv_device, kWorker1);
  EXPECT_EQ(inspection.partition_graphs.size(), 3u);
}

TEST(InspectTest, UnknownShapesAndControlEdges) {
  GraphDef g;
  AddNode(&g, "p", "Placeholder", {}, "/device:CPU:0");  // no shape attr: unknown
  AddNode(&g, "neg", "Neg", {"p"}, "/device:CPU:1");
  AddNode(&g, "neg2", "Neg", {"p"}, "/device:CPU:1");
  AddNode(&g, "after", "NoOp", {"^neg", "^neg2"}, "/device:CPU:0");
  absl::StatusOr<std::vector<DeviceAttributes>> devices =
      ListedDevices({"/job:localhost/replica:0/task:0/device:CPU:0",
                     "/job:localhost/replica:0/task:0/device:CPU:1"});
  ASSERT_OK(devices.status());
  absl::StatusOr<Inspection> inspection = Inspect(g, *devices, PlacerOptions());
  ASSERT_OK(inspection.status());
  ASSERT_EQ(inspection->transfers.size(), 2u);
  const Transfer& data = inspection->transfers[0];
  EXPECT_EQ(data.tensor, "p:0");
  EXPECT_EQ(data.shape, "<unknown>");
  EXPECT_EQ(data.bytes, -1);
  // p:0 goes to CPU:1 once for both Negs; `after` waits for both through
  // one transfer.
  const Transfer& control = inspection->transfers[1];
  EXPECT_TRUE(control.tensor == "^neg +1" || control.tensor == "^neg2 +1") << control.tensor;
  EXPECT_EQ(control.bytes, 0);
  EXPECT_EQ(inspection->partitions[0].bytes_sent, -1);
  EXPECT_EQ(inspection->partitions[0].bytes_received, 0);
  EXPECT_EQ(inspection->partitions[0].nodes, 2);  // p, after: not the control Const
  const std::string summary = FormatPartitionSummary(*inspection);
  EXPECT_NE(summary.find("2 transfers, at least 0 bytes per step (1 transfer of unknown size: "
                         "--feed_shapes can give them)"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("CPU:0       2      1      1          ?         0"), std::string::npos)
      << summary;
}

TEST(InspectTest, FeedShapesGiveTheTransfersTheirSizes) {
  GraphDef g;
  NodeDef* p = AddNode(&g, "p", "Placeholder", {}, "/device:CPU:0");
  SetAttr(p, "shape", PartialTensorShape({-1, 3}));
  AddNode(&g, "neg", "Neg", {"p"}, "/device:CPU:1");
  absl::StatusOr<std::vector<DeviceAttributes>> devices =
      ListedDevices({"/job:localhost/replica:0/task:0/device:CPU:0",
                     "/job:localhost/replica:0/task:0/device:CPU:1"});
  ASSERT_OK(devices.status());
  absl::StatusOr<Options> o = ParseFlags({"--graph=g.pbtxt", "--feed_shapes=p=5,3"});
  ASSERT_OK(o.status());
  absl::StatusOr<Inspection> inspection = Inspect(g, *devices, PlacerOptions(), {}, o->feed_shapes);
  ASSERT_OK(inspection.status());
  ASSERT_EQ(inspection->transfers.size(), 1u);
  EXPECT_EQ(inspection->transfers[0].bytes, 60);  // 5 x 3 floats
  EXPECT_NE(FormatPartitionSummary(*inspection).find("1 transfer, 60 bytes per step"),
            std::string::npos);
  // What the fed shape must agree with, and what it must name.
  EXPECT_STATUS(
      Inspect(g, *devices, PlacerOptions(), {}, {{"p", PartialTensorShape({5, 4})}}).status(),
      kInvalidArgument, "--feed_shapes gives 'p' the shape [5,4], but its shape is [?,3]");
  EXPECT_STATUS(
      Inspect(g, *devices, PlacerOptions(), {}, {{"q", PartialTensorShape({1})}}).status(),
      kInvalidArgument, "--feed_shapes names 'q', which is not a node of the graph");
  EXPECT_STATUS(ParseFlags({"--graph=g.pbtxt", "--feed_shapes=p=5,x"}).status(), kInvalidArgument,
                "--feed_shapes: dimension 'x' of 'p' is not a size or -1");
  EXPECT_STATUS(ParseFlags({"--graph=g.pbtxt", "--feed_shapes=p"}).status(), kInvalidArgument,
                "--feed_shapes: 'p' is not NAME=DIMS");
}

TEST(InspectTest, ImpossiblePlacementIsThePlacersError) {
  Seed seed = LoadSeed();
  AddNode(&seed.graph, "bad", "NoOp", {}, "/job:nope");
  absl::StatusOr<Inspection> inspection = Inspect(seed.graph, seed.devices, seed.options);
  EXPECT_STATUS(inspection.status(), kInvalidArgument, "cannot place node 'bad' (NoOp)");
  EXPECT_STATUS(inspection.status(), kInvalidArgument, "requested: '/job:nope'");
}

TEST(InspectTest, ExplainFollowsTheReferenceEdge) {
  Seed seed = LoadSeed();
  absl::StatusOr<Explanation> e =
      ExplainPlacement(seed.graph, seed.devices, seed.options, "y/Assign");
  ASSERT_OK(e.status());
  ASSERT_OK(e->placement);
  EXPECT_NE(e->text.find("'y/Assign' (Assign) -> /job:ps/replica:0/task:0/device:CPU:0"),
            std::string::npos)
      << e->text;
  EXPECT_NE(e->text.find("chain to the request: 'y/Assign' -(reference edge)- 'y'"),
            std::string::npos)
      << e->text;

  EXPECT_STATUS(ExplainPlacement(seed.graph, seed.devices, seed.options, "nope").status(),
                kNotFound, "no node named 'nope'");

  AddNode(&seed.graph, "bad", "NoOp", {}, "/job:nope");
  e = ExplainPlacement(seed.graph, seed.devices, seed.options, "bad");
  ASSERT_OK(e.status());
  EXPECT_STATUS(e->placement, kInvalidArgument, "cannot place node 'bad'");
}

// ---------------------------------------------------------------------------
// Renderings

TEST(FormatTest, PlacementTableIsAligned) {
  const std::string table = FormatPlacementTable(InspectSeed());
  std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 12u) << table;
  EXPECT_EQ(lines[0], "Placement of 10 nodes on 3 devices:");
  const size_t reason = lines[1].find("REASON");
  ASSERT_NE(reason, std::string::npos);
  for (size_t i = 2; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].find_first_not_of(' ', reason - 2), reason) << lines[i];
  }
  EXPECT_NE(
      table.find(
          "x/initial_value  Const       -                   "
          "/job:ps/replica:0/task:0/device:CPU:0      follows its only consumer 'x/Assign'\n"),
      std::string::npos)
      << table;
}

TEST(FormatTest, PartitionSummaryRowsPerDeviceAndTaskTotals) {
  Seed seed = LoadSeed();
  absl::StatusOr<std::vector<DeviceAttributes>> devices = ClusterDevices(kSeedCluster, "CPU:2");
  ASSERT_OK(devices.status());
  absl::StatusOr<Inspection> inspection = Inspect(seed.graph, *devices, seed.options);
  ASSERT_OK(inspection.status());
  const std::string summary = FormatPartitionSummary(*inspection);
  EXPECT_NE(summary.find(
                "Partitions: 3 of 6 devices in 3 tasks used; 4 transfers, 64 bytes per step:\n"
                "TASK                          DEVICE  NODES  SENDS  RECVS  BYTES_OUT  BYTES_IN\n"
                "/job:ps/replica:0/task:0      CPU:0       6      3      0         48         0\n"
                "/job:ps/replica:0/task:0      CPU:1       0      0      0          0         0\n"
                "/job:ps/replica:0/task:0      total       6      3      0         48         0\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(
      FormatTransfers(*inspection)
          .find("z1b:0   " + std::string(kWorker0) + "  " + kWorker1 + "  float  [2,2]     16\n"),
      std::string::npos)
      << FormatTransfers(*inspection);
}

TEST(FormatTest, JsonHasTheDocumentedShape) {
  Inspection inspection = InspectSeed();
  inspection.partitions[2].bytes_received = -1;  // shows as null
  google::protobuf::Value root;
  const std::string json = InspectionToJson(inspection);
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &root).ok()) << json;
  const auto& fields = root.struct_value().fields();
  const auto& placement = fields.at("placement").list_value();
  ASSERT_EQ(placement.values_size(), 10);
  const auto& first = placement.values(0).struct_value().fields();
  EXPECT_EQ(first.at("node").string_value(), "x");
  EXPECT_EQ(first.at("op").string_value(), "VariableV2");
  EXPECT_EQ(first.at("requested").string_value(), "/job:ps/task:0");
  EXPECT_EQ(first.at("assigned").string_value(), kPs);
  EXPECT_EQ(first.at("reason").string_value(), "explicit request '/job:ps/task:0'");
  const auto& partitions = fields.at("partitions").list_value();
  ASSERT_EQ(partitions.values_size(), 3);
  const auto& ps = partitions.values(0).struct_value().fields();
  EXPECT_EQ(ps.at("task").string_value(), "/job:ps/replica:0/task:0");
  EXPECT_EQ(ps.at("device").string_value(), kPs);
  EXPECT_EQ(ps.at("nodes").number_value(), 6);
  EXPECT_EQ(ps.at("sends").number_value(), 3);
  EXPECT_EQ(ps.at("recvs").number_value(), 0);
  EXPECT_EQ(ps.at("bytes").number_value(), 48);
  const auto& w1 = partitions.values(2).struct_value().fields();
  EXPECT_EQ(w1.at("bytes").kind_case(), google::protobuf::Value::kNullValue);
  EXPECT_EQ(fields.at("transfers").list_value().values_size(), 4);
}

TEST(FormatTest, DotHasAClusterPerDeviceAndDashedTransfers) {
  const std::string dot = InspectionToDot(InspectSeed());
  auto count = [&](const std::string& s) {
    size_t n = 0;
    for (size_t pos = dot.find(s); pos != std::string::npos; pos = dot.find(s, pos + 1)) ++n;
    return n;
  };
  EXPECT_EQ(dot.rfind("digraph tensorgrid {\n", 0), 0u);
  EXPECT_EQ(count("subgraph cluster_"), 3u);
  EXPECT_EQ(count("subgraph cluster_job_ps_replica_0_task_0_device_CPU_0 {"), 1u);
  EXPECT_EQ(count("style=dashed"), 4u);
  EXPECT_EQ(count("{"), count("}"));
  EXPECT_NE(dot.find("\"_send_z1b_0_to_CPU_0\" -> \"_recv_z1b_0_on_CPU_0\" [style=dashed"),
            std::string::npos)
      << dot;
  EXPECT_NE(dot.find("\"z1\" -> \"z1b\";"), std::string::npos) << dot;
  // One fill per task.
  EXPECT_EQ(count("fillcolor=\"#"), 3u);
}

// ---------------------------------------------------------------------------
// RunMetadata files

std::string WriteTemp(const std::string& name, const std::string& content) {
  const std::string path =
      std::string(getenv("TEST_TMPDIR") ? getenv("TEST_TMPDIR") : "/tmp") + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(content.data(), 1, content.size(), f);
  std::fclose(f);
  return path;
}

TEST(LoadRunMetadataTest, BinaryAndText) {
  RunMetadata md;
  auto* dev = md.mutable_step_stats()->add_dev_stats();
  dev->set_device(kPs);
  dev->add_node_stats()->set_node_name("x");
  absl::StatusOr<RunMetadata> loaded = LoadRunMetadata(WriteTemp("md.pb", md.SerializeAsString()));
  ASSERT_OK(loaded.status());
  EXPECT_EQ(loaded->step_stats().dev_stats(0).node_stats(0).node_name(), "x");

  loaded = LoadRunMetadata(WriteTemp(
      "md.pbtxt", "step_stats { dev_stats { device: \"/job:a/replica:0/task:0/device:CPU:0\" } }"));
  ASSERT_OK(loaded.status());
  EXPECT_EQ(loaded->step_stats().dev_stats(0).device(), "/job:a/replica:0/task:0/device:CPU:0");
  // Text without the extension falls back from binary.
  loaded = LoadRunMetadata(WriteTemp("md_text.bin", "step_stats { dev_stats { device: \"d\" } }"));
  ASSERT_OK(loaded.status());
}

TEST(LoadRunMetadataTest, Errors) {
  EXPECT_STATUS(LoadRunMetadata("/no/such/file").status(), kNotFound,
                "cannot read RunMetadata file '/no/such/file'");
  EXPECT_STATUS(LoadRunMetadata(WriteTemp("bad.pbtxt", "step_stats {")).status(), kInvalidArgument,
                "as a text RunMetadata");
  EXPECT_STATUS(LoadRunMetadata(WriteTemp("empty.pbtxt", "")).status(), kInvalidArgument,
                "FULL_TRACE");
}

}  // namespace
}  // namespace tg_inspect
}  // namespace tensorgrid
