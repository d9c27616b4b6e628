// Writes the seed corpora of the fuzz targets (tests/fuzz/corpus/<target>/),
// each seed a small valid input made by tensorgrid's own encoders, so that
// the fuzzers start from what the parsers really see. Run after changing a
// format or adding a target, and commit what it writes:
//
//   bazel run //tests/fuzz:make_seeds
//
// Seeds are overwritten; other files in the corpora (inputs a fuzzer found
// worth keeping) are left alone.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/data/idx.h"
#include "core/framework/tensor_codec.h"
#include "core/platform/file.h"
#include "core/util/tensor_bundle.h"
#include "core/util/tfrecord.h"
#include "distributed/rpc/tensor_coding.h"
#include "distributed/transport/frames.h"
#include "google/protobuf/text_format.h"
#include "proto/event.pb.h"
#include "proto/example.pb.h"
#include "proto/master.pb.h"
#include "proto/worker.pb.h"

namespace tensorgrid {
namespace {

std::string corpus_root;

void Seed(const std::string& target, const std::string& label, const std::string& bytes) {
  const std::string dir = corpus_root + "/" + target;
  mkdir(dir.c_str(), 0755);
  absl::Status s = WriteWholeFile(dir + "/" + label, bytes);
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    std::exit(1);
  }
}

GraphDef ParseGraph(const std::string& text) {
  GraphDef def;
  if (!google::protobuf::TextFormat::ParseFromString(text, &def)) {
    std::fprintf(stderr, "bad seed graph:\n%s\n", text.c_str());
    std::exit(1);
  }
  return def;
}

template <typename T>
Tensor Vector(DataType dtype, std::vector<T> values) {
  Tensor t(dtype, TensorShape({static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) t.data<T>()[i] = values[i];
  return t;
}

Tensor Strings() {
  Tensor t(DT_STRING, TensorShape({2}));
  t.data<std::string>()[0] = "ab";
  t.data<std::string>()[1] = "";
  return t;
}

std::string Flatten(const grpc::ByteBuffer& wire) {
  std::vector<grpc::Slice> slices;
  (void)wire.Dump(&slices);
  std::string out;
  for (const grpc::Slice& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

// ---- graphs

const char* const kGraphs[][2] = {
    {"addn_control", R"pb(
      node { name: "a" op: "Const"
             attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                                  float_val: 1 float_val: 2 } } } }
      node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } } } } }
      node { name: "sum" op: "AddN" input: "a" input: "b" input: "^c"
             attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "c" op: "NoOp" }
      node { name: "out" op: "Identity" input: "sum:0" device: "/job:worker/task:0/device:CPU:0"
             attr { key: "T" value { type: DT_FLOAT } } })pb"},
    {"unregistered", R"pb(
      node { name: "x" op: "SomethingNew" attr { key: "k" value { s: "v" } } }
      node { name: "y" op: "AnotherOne" input: "x:2" input: "x" input: "^x" })pb"},
    {"variables", R"pb(
      node { name: "v" op: "VariableV2" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 1 } } } } }
      node { name: "one" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 1 } }
                                                  float_val: 1 } } } }
      node { name: "assign" op: "Assign" input: "v" input: "one"
             attr { key: "T" value { type: DT_FLOAT } } }
      node { name: "read" op: "Identity" input: "v" attr { key: "T" value { type: DT_FLOAT } } }
      versions { producer: 27 })pb"},
    {"partition", R"pb(
      node { name: "arg" op: "_Arg" attr { key: "T" value { type: DT_INT32 } }
             attr { key: "index" value { i: 0 } } }
      node { name: "send" op: "_Send" input: "arg" attr { key: "T" value { type: DT_INT32 } }
             attr { key: "tensor_name" value { s: "edge_1_arg" } }
             attr { key: "send_device" value { s: "/job:a/replica:0/task:0/device:CPU:0" } }
             attr { key: "send_device_incarnation" value { i: 7 } }
             attr { key: "recv_device" value { s: "/job:b/replica:0/task:0/device:CPU:0" } } }
      node { name: "concat" op: "ConcatV2" input: "arg" input: "arg" input: "axis"
             attr { key: "N" value { i: 2 } } attr { key: "T" value { type: DT_INT32 } }
             attr { key: "Tidx" value { type: DT_INT32 } } }
      node { name: "axis" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
      node { name: "ret" op: "_Retval" input: "concat" attr { key: "T" value { type: DT_INT32 } }
             attr { key: "index" value { i: 0 } } })pb"},
};

void GraphSeeds(const std::string& workspace) {
  for (const auto& [label, text] : kGraphs) {
    Seed("graphdef", label, ParseGraph(text).SerializeAsString());
  }
  for (const char* file :
       {"tests/testdata/tf_graphs/variable_mul_add.pbtxt", "tests/testdata/seed_placement.pbtxt"}) {
    absl::StatusOr<std::string> text = ReadFileToString(workspace + "/" + file);
    if (!text.ok()) continue;
    std::string label = file;
    label = label.substr(label.rfind('/') + 1);
    label = label.substr(0, label.find('.'));
    Seed("graphdef", label, ParseGraph(*text).SerializeAsString());
  }
}

// ---- tensors

void TensorSeeds() {
  auto seed = [](const std::string& label, const Tensor& t, bool content) {
    TensorProto proto;
    TensorToProto(t, &proto, content);
    Seed("tensor_proto", label, proto.SerializeAsString());
  };
  seed("float_content", Vector<float>(DT_FLOAT, {1.5f, -2}), true);
  seed("float_val", Vector<float>(DT_FLOAT, {1.5f, -2}), false);
  seed("int32_val", Vector<int32_t>(DT_INT32, {7, -1, 3}), false);
  seed("int64_content", Vector<int64_t>(DT_INT64, {1, 2}), true);
  seed("uint8_val", Vector<uint8_t>(DT_UINT8, {0, 255}), false);
  seed("bool_val", Vector<bool>(DT_BOOL, {true, false}), false);
  seed("double_val", Vector<double>(DT_DOUBLE, {0.25}), false);
  seed("strings", Strings(), true);
  Tensor half(DT_HALF, TensorShape({2}));
  std::memset(half.raw_data(), 0x3c, half.TotalBytes());
  seed("half_val", half, false);
  Tensor handle(DT_RESOURCE, TensorShape({}));
  handle.data<ResourceHandle>()[0] = ResourceHandle{"/job:ps/device:CPU:0", "c", "v", "Var"};
  seed("resource", handle, true);
  // TensorFlow's broadcast: one value fills the shape.
  TensorProto broadcast;
  broadcast.set_dtype(DT_FLOAT);
  broadcast.mutable_tensor_shape()->add_dim()->set_size(3);
  broadcast.mutable_tensor_shape()->add_dim()->set_size(2);
  broadcast.add_float_val(1);
  Seed("tensor_proto", "float_broadcast", broadcast.SerializeAsString());
}

// ---- the bulk port

void BulkSeeds() {
  // Requests, as a client sends them (byte 0: 0 no token, 1 "fuzz-token").
  auto request = [](const std::string& label, bool token, const std::string& bytes) {
    Seed("bulk_server", label, std::string(1, token ? 1 : 0) + bytes);
  };
  const std::string task = "/job:worker/replica:0/task:0";
  request("call_echo", false, bulk::EncodeCallRequest("", task, "Echo", 1000, "hello"));
  request("call_token", true, bulk::EncodeCallRequest("fuzz-token", "", "Echo", 1000, "x"));
  request("call_wrong_token", true, bulk::EncodeCallRequest("guess", "", "Echo", 1000, "x"));
  request("call_fail", false, bulk::EncodeCallRequest("", "", "Fail", 1000, ""));
  request("call_unencodable", false, bulk::EncodeCallRequest("", "", "Unencodable", 0, "y"));
  request("call_unknown", false, bulk::EncodeCallRequest("", "", "Nope", 1000, "z"));
  request("call_other_task", false,
          bulk::EncodeCallRequest("", "/job:ps/replica:0/task:0", "Echo", 1000, "z"));
  request("two_calls", false,
          bulk::EncodeCallRequest("", "", "Echo", 1000, "a") +
              bulk::EncodeCallRequest("", "", "Echo", 1000, "b"));
  bulk::TensorRequest tensor;
  tensor.key = "chunk0";
  tensor.wait_ms = 1000;
  request("recv_buf", false, tensor.Encode());
  tensor.key = "big";
  tensor.may_read_in_place = true;
  request("recv_buf_in_place_copied", false,
          tensor.Encode() + std::string(1, bulk::kCopiedVerdict));
  request("recv_buf_in_place_send", false, tensor.Encode() + std::string(1, bulk::kSendVerdict));
  tensor.rendezvous = true;
  tensor.step_id = 12;
  tensor.key = "strings";
  tensor.may_read_in_place = false;
  tensor.addressee = task;
  request("recv_tensor_strings", false, tensor.Encode());
  tensor.key = "none";
  request("recv_tensor_none", false, tensor.Encode());
  tensor.key = "fail";
  tensor.token = "fuzz-token";
  request("recv_tensor_fail", true, tensor.Encode());
  bulk::TensorRequest batch;
  batch.rendezvous = batch.batch = true;
  batch.step_id = 12;
  batch.wait_ms = 1000;
  batch.may_read_in_place = true;
  batch.key = bulk::EncodeKeys({"chunk0", "strings", "big", "none"});
  request("recv_tensors", false,
          batch.Encode() + std::string(1, bulk::kCopiedVerdict));  // for "big"
  request("ticket", false, bulk::EncodeTicketRequest(std::string(kBulkTicketBytes, 'T')));

  // Answers, as a server sends them (byte 0: the request; see the fuzzer).
  auto answer = [](const std::string& label, uint8_t request, const std::string& bytes) {
    Seed("bulk_answers", label, std::string(1, static_cast<char>(request)) + bytes);
  };
  constexpr uint8_t kCall = 0, kRecvTensor = 1, kRecvBuf = 2, kInPlace = 4, kInto = 8;
  answer("bytes", kCall, bulk::EncodeLengthAnswer(bulk::AnswerKind::kBytes, 3) + "abc");
  answer("beats_then_bytes", kCall,
         std::string(2, static_cast<char>(bulk::AnswerKind::kStillWorking)) +
             bulk::EncodeLengthAnswer(bulk::AnswerKind::kBytes, 1) + "z");
  absl::Status error = absl::NotFoundError("no such thing");
  error.SetPayload("tensorgrid.derived", absl::Cord("1"));
  answer("error", kCall, bulk::EncodeError(error));
  answer("not_served", kRecvBuf,
         bulk::EncodeError(absl::UnimplementedError("no"), bulk::AnswerKind::kNotServed));
  bulk::TensorHeader header;
  header.dtype = DT_FLOAT;
  header.dims = {2, 2};
  header.length = 16;
  std::string tensor_answer(1, static_cast<char>(bulk::AnswerKind::kTensor));
  header.AppendTo(&tensor_answer);
  tensor_answer += std::string(16, '\x01');
  answer("tensor", kRecvTensor, tensor_answer);
  answer("tensor_into", kRecvBuf | kInto, tensor_answer);
  std::string in_place(1, static_cast<char>(bulk::AnswerKind::kInPlace));
  header.AppendTo(&in_place);
  bulk::InPlaceLocation where;
  where.pid = 1;
  where.address = 4096;
  where.nonce_address = 8192;
  where.nonce = std::string(bulk::kNonceBytes, 'n');
  where.AppendTo(&in_place);
  answer("in_place", kRecvBuf | kInPlace, in_place + std::string(16, '\x02'));
  TensorProto proto;
  TensorToProto(Strings(), &proto);
  answer("proto", kRecvTensor,
         bulk::EncodeLengthAnswer(bulk::AnswerKind::kProto, proto.ByteSizeLong()) +
             proto.SerializeAsString());
  // RecvTensors' items (a request of 4 keys).
  constexpr uint8_t kRecvTensors = 3;
  answer("item_tensor", kRecvTensors, bulk::EncodeItemHead(2) + tensor_answer);
  answer("item_error", kRecvTensors, bulk::EncodeItemHead(0) + bulk::EncodeError(error));
  answer("item_in_place", kRecvTensors | kInPlace,
         bulk::EncodeItemHead(3) + in_place + std::string(16, '\x02'));
}

// ---- gRPC requests and answers

void GrpcSeeds(const std::string& workspace) {
  // Byte 0: the method's index in the fuzzer's table (bit 7: the bulk
  // port's string); bytes 1-2: where to cut slices.
  auto request = [](const std::string& label, uint8_t method, const std::string& bytes) {
    Seed("grpc_requests", label, std::string({static_cast<char>(method), 3, 5}) + bytes);
  };
  NamedTensorProto feed;
  feed.set_name("0");
  TensorToProto(Vector<float>(DT_FLOAT, {1, 2}), feed.mutable_tensor());
  RunGraphRequest run_graph;
  run_graph.set_graph_handle("g1");
  run_graph.set_step_id(42);
  *run_graph.add_send() = feed;
  request("run_graph", 5, run_graph.SerializeAsString());
  request("run_graph_bulk_port", 5 | 0x80, run_graph.SerializeAsString());
  RegisterGraphRequest register_graph;
  *register_graph.mutable_graph_def() = ParseGraph(kGraphs[0][1]);
  request("register_graph", 3, register_graph.SerializeAsString());
  RecvTensorRequest recv;
  recv.set_step_id(3);
  recv.set_rendezvous_key("/job:a/replica:0/task:0/device:CPU:0;1;/job:b/replica:0/task:0/"
                          "device:CPU:0;edge;0:0");
  recv.set_accept_bulk(true);
  request("recv_tensor", 8, recv.SerializeAsString());
  // Joins that pass the leader's checks, so that mutations start past them.
  CompleteGroupRequest group;
  group.set_group_key(1);
  group.set_group_size(2);
  group.set_device_type("CPU");
  group.set_device_name("/job:worker/replica:0/task:1/device:CPU:0");
  group.set_incarnation(77);
  group.set_timeout_ms(30000);
  request("complete_group", 9, group.SerializeAsString());
  CompleteInstanceRequest instance;
  instance.set_group_key(1);
  instance.set_group_size(2);
  instance.set_instance_key(5);
  instance.set_device_name("/job:worker/replica:0/task:1/device:CPU:0");
  instance.set_op("CollectiveReduce");
  instance.set_dtype(DT_FLOAT);
  instance.add_shape(4);
  instance.set_timeout_ms(30000);
  request("complete_instance", 10, instance.SerializeAsString());
  CreateSessionRequest create;
  *create.mutable_graph_def() = ParseGraph(kGraphs[2][1]);
  request("create_session", 12, create.SerializeAsString());
  RunStepRequest run_step;
  run_step.set_session_handle("s");
  NamedTensorProto step_feed = feed;
  step_feed.set_name("x:0");
  *run_step.add_feed() = step_feed;
  run_step.add_fetch("y:0");
  request("run_step", 14, run_step.SerializeAsString());
  RunCallableRequest callable;
  callable.set_handle(1);
  *callable.add_feed() = feed.tensor();
  request("run_callable", 16 | 0x80, callable.SerializeAsString());
  ResetRequest reset;
  reset.add_container("c");
  request("reset", 20, reset.SerializeAsString());

  // RecvTensor answers (byte 0: 1 into, 2 tickets accepted).
  auto response = [](const std::string& label, uint8_t flags, const std::string& bytes) {
    Seed("recv_tensor_response", label, std::string({static_cast<char>(flags), 7, 9}) + bytes);
  };
  grpc::ByteBuffer wire;
  (void)EncodeRecvTensorResponse(Vector<float>(DT_FLOAT, {1, 2, 3, 4}), "k", &wire);
  response("content", 0, Flatten(wire));
  response("content_into", 1, Flatten(wire));
  (void)EncodeRecvTensorResponse(Strings(), "k", &wire);
  response("strings", 0, Flatten(wire));
  grpc::ByteBuffer ticket;  // (a fresh buffer: gRPC's serializer wants one)
  (void)EncodeBulkResponse(Vector<float>(DT_FLOAT, {1, 2, 3, 4}), std::string(16, 'i'), 4444,
                           &ticket);
  response("ticket", 2, Flatten(ticket));
  response("ticket_into", 3, Flatten(ticket));
  RecvTensorResponse typed;
  TensorToProto(Vector<int32_t>(DT_INT32, {5, 6}), typed.mutable_tensor(), false);
  response("typed_fields", 0, typed.SerializeAsString());
}

// ---- launchers' descriptions (byte 0: 0 hostlist, 1 tasks per node, 2 hostfile,
// 3 a Slurm environment; +4 --slurm_jobs=ps:1,worker:2)

void ResolverSeeds() {
  auto seed = [](const std::string& label, uint8_t pick, const std::string& text) {
    Seed("cluster_resolver", label, std::string(1, static_cast<char>(pick)) + text);
  };
  seed("hostlist", 0, "a1,b[01-10],r[1-2]-n[3,5-6].ib");
  seed("tasks_per_node", 1, "2(x3),1");
  seed("hostfile", 2, "# hosts\nn1 slots=2\nn2 max_slots=4\n");
  seed("slurm", 4 + 3,
       "SLURM_PROCID=2\nSLURM_LOCALID=0\nSLURMD_NODENAME=n2\nSLURM_STEP_NODELIST=n[1-2]\n"
       "SLURM_STEP_TASKS_PER_NODE=2,1\nSLURM_STEP_NUM_TASKS=3");
  seed("slurm_cyclic", 3,
       "SLURM_PROCID=1\nSLURM_LOCALID=0\nSLURMD_NODENAME=n2\nSLURM_STEP_NODELIST=n[1-2]\n"
       "SLURM_STEP_TASKS_PER_NODE=2,1");
}

// ---- cluster descriptions (byte 0: 0 --cluster, 1 hosts flags, 2 TF_CONFIG; +4 port 0)

void ClusterSeeds() {
  auto seed = [](const std::string& label, uint8_t pick, const std::string& text) {
    Seed("cluster_spec", label, std::string(1, static_cast<char>(pick)) + text);
  };
  seed("flag", 0, "ps=localhost:2222;worker=localhost:2223, localhost:2224");
  seed("flag_port_zero", 4, "chief=localhost:0;worker=127.0.0.1:0");
  seed("hosts", 1, "ps0:2222,ps1:2222\nworker0:2222,worker1:2222");
  seed("tf_config", 2,
       R"({"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],)"
       R"( "ps": ["host3:2222"]}, "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc"})");
  seed("tf_config_tfjob", 2,
       R"({"cluster": {"master": ["mnist-master-0.kubeflow.svc:2222"],)"
       R"( "worker": ["mnist-worker-0.kubeflow.svc:2222"]}, "task": {"type": "master"},)"
       R"( "environment": "cloud"})");
  seed("tf_config_evaluator", 2,
       R"({"cluster": {"worker": ["[::1]:2222"]}, "task": {"type": "evaluator", "index": 0},)"
       R"( "environment": "cloud"})");
}

// ---- files

void FileSeeds() {
  char dir_template[] = "/tmp/tg_make_seeds.XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  // Checkpoints: flags (1: recompute the index checksum), the index's
  // length, the index, the data file.
  auto checkpoint = [&](const std::string& label, const std::vector<std::pair<std::string, Tensor>>&
                                                      tensors) {
    const std::string prefix = dir + "/" + label;
    auto writer = checkpoint::CheckpointWriter::Create(prefix);
    for (const auto& [name, t] : tensors) (void)(*writer)->Add(name, t);
    (void)(*writer)->Finish();
    const std::string index = *ReadFileToString(checkpoint::IndexPath(prefix));
    const std::string data = *ReadFileToString(checkpoint::DataPath(prefix, 0, 1));
    std::string seed(1, '\0');
    for (int i = 0; i < 4; ++i) seed.push_back(static_cast<char>((index.size() >> (8 * i)) & 0xff));
    Seed("checkpoint", label, seed + index + data);
  };
  checkpoint("empty", {});
  checkpoint("two_tensors", {{"bias", Vector<float>(DT_FLOAT, {0.5f, -1})},
                             {"step", Vector<int64_t>(DT_INT64, {7})}});
  checkpoint("strings", {{"names", Strings()}});
  {
    // A tensor in two slices (TensorFlow's partitioned variables).
    const std::string prefix = dir + "/sliced";
    auto writer = checkpoint::CheckpointWriter::Create(prefix);
    (void)(*writer)->AddSlice("p", TensorShape({4}), *checkpoint::TensorSlice::Parse("0,2"),
                              Vector<float>(DT_FLOAT, {1, 2}));
    (void)(*writer)->AddSlice("p", TensorShape({4}), *checkpoint::TensorSlice::Parse("2,2"),
                              Vector<float>(DT_FLOAT, {3, 4}));
    (void)(*writer)->Finish();
    const std::string index = *ReadFileToString(checkpoint::IndexPath(prefix));
    const std::string data = *ReadFileToString(checkpoint::DataPath(prefix, 0, 1));
    std::string seed(1, '\0');
    for (int i = 0; i < 4; ++i) seed.push_back(static_cast<char>((index.size() >> (8 * i)) & 0xff));
    Seed("checkpoint", "sliced", seed + index + data);
  }
  // IDX: byte 0 (1: gzip the rest), the file.
  auto idx = [](const std::string& label, const Tensor& t, bool gzip) {
    Seed("idx", label, std::string(1, gzip ? 1 : 0) + *EncodeIdx(t));
  };
  idx("uint8", Vector<uint8_t>(DT_UINT8, {1, 2, 3}), false);
  idx("int16_gzip", Vector<int16_t>(DT_INT16, {-1, 300}), true);
  idx("float", Vector<float>(DT_FLOAT, {1.5f}), false);
  Tensor images(DT_UINT8, TensorShape({2, 2, 2}));
  std::memset(images.raw_data(), 9, images.TotalBytes());
  idx("images", images, false);
  std::string gzip_file = dir + "/double.idx.gz";
  (void)WriteIdx(gzip_file, Vector<double>(DT_DOUBLE, {2.5}), /*gzip=*/true);
  Seed("idx", "double_gzip_file", std::string(1, '\0') + *ReadFileToString(gzip_file));
  std::filesystem::remove_all(dir);
  // Event files: byte 0 (1: the rest is one record's data, framed by the
  // fuzzer), then what SummaryWriter writes, at fixed times.
  auto events = [](const std::string& label, const std::vector<Event>& list) {
    std::string file;
    for (const Event& e : list) AppendRecord(e.SerializeAsString(), &file);
    Seed("event_file", label, std::string(1, '\0') + file);
    Seed("event_file", label + "_unframed", std::string(1, 1) + list.back().SerializeAsString());
  };
  Event version;
  version.set_wall_time(1.7e9);
  version.set_file_version("brain.Event:2");
  Event graph;
  graph.set_wall_time(1.7e9 + 1);
  graph.set_graph_def(ParseGraph("node { name: 'x' op: 'Const' }").SerializeAsString());
  Event scalars;
  scalars.set_wall_time(1.7e9 + 2);
  scalars.set_step(100);
  for (const auto& [tag, value] : {std::make_pair("loss", 0.25f), std::make_pair("accuracy", 0.875f)}) {
    Summary::Value* v = scalars.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(value);
  }
  events("version_only", {version});
  events("graph_and_scalars", {version, graph, scalars});
}

// parse_example: a spec byte, then examples separated by "\n--\n".
void ExampleSeeds() {
  auto example = [](float x0, float x1, std::vector<int64_t> ids, std::string tag) {
    Example e;
    auto& features = *e.mutable_features()->mutable_feature();
    features["x"].mutable_float_list()->add_value(x0);
    features["x"].mutable_float_list()->add_value(x1);
    for (int64_t id : ids) features["ids"].mutable_int64_list()->add_value(id);
    if (!tag.empty()) features["tags"].mutable_bytes_list()->add_value(tag);
    return e.SerializeAsString();
  };
  const std::string a = example(1, 2, {3, 4}, "cat");
  const std::string b = example(-1, 0.5f, {1, 2, 3, 4}, "");
  Seed("parse_example", "dense_only", std::string(1, '\0') + a + "\n--\n" + b);
  Seed("parse_example", "every_kind", std::string(1, '\x1f') + a + "\n--\n" + b);
  Seed("parse_example", "scalar_ragged", std::string(1, '\x74') + b);
  Example empty;
  Seed("parse_example", "missing_with_default", std::string(1, '\x01') + a + "\n--\n" +
                                                    empty.SerializeAsString());
}

}  // namespace
}  // namespace tensorgrid

int main() {
  using namespace tensorgrid;
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (workspace == nullptr) {
    std::fprintf(stderr, "run me with: bazel run //tests/fuzz:make_seeds\n");
    return 1;
  }
  corpus_root = std::string(workspace) + "/tests/fuzz/corpus";
  mkdir(corpus_root.c_str(), 0755);
  GraphSeeds(workspace);
  TensorSeeds();
  BulkSeeds();
  GrpcSeeds(workspace);
  ClusterSeeds();
  ResolverSeeds();
  FileSeeds();
  ExampleSeeds();
  std::printf("seeds written under %s\n", corpus_root.c_str());
  return 0;
}
