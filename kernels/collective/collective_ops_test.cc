// Collective ops between the CPU devices of one in-process worker: a local
// session with ConfigProto.device_count {"CPU": 4}, one op per device.
#include "client/ops/collective_ops.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"

#include "client/client_session.h"
#include "client/ops/array_ops.h"
#include "core/platform/status_testutil.h"

namespace tensorgrid {
namespace {

std::string Cpu(int i) { return "/device:CPU:" + std::to_string(i); }

SessionOptions FourCpus() {
  SessionOptions options;
  (*options.config.mutable_device_count())["CPU"] = 4;
  return options;
}

template <typename T>
Tensor Vec(const std::vector<T>& values) {
  Tensor t(DataTypeToEnum<T>::value, TensorShape({static_cast<int64_t>(values.size())}));
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.NumElements());
}

bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.TotalBytes()) == 0;
}

// Runs one CollectiveReduce per input, member i on CPU:i.
absl::Status RunReduce(const std::vector<Tensor>& inputs, const std::string& merge,
                       const std::string& final_op, std::vector<Tensor>* out, int steps = 1) {
  Scope root = Scope::NewRootScope();
  const int n = static_cast<int>(inputs.size());
  std::vector<Output> reduced;
  for (int i = 0; i < n; ++i) {
    Scope s = root.WithDevice(Cpu(i));
    reduced.push_back(ops::CollectiveReduce(s, ops::Const(s, inputs[i]), n, /*group_key=*/1,
                                            /*instance_key=*/1, merge, final_op, 20));
  }
  ClientSession session(root, FourCpus());
  for (int step = 0; step < steps; ++step) {
    absl::Status s = session.Run(reduced, out);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

void ExpectAllIdentical(const std::vector<Tensor>& out) {
  for (size_t i = 1; i < out.size(); ++i) EXPECT_TRUE(SameBytes(out[0], out[i])) << i;
}

// Small all-reduces take one round by default; "0" makes every one run the
// ring. Workers read the variable when they start (a new session).
constexpr const char* kOneRoundBytes = "TG_COLLECTIVE_ONE_ROUND_BYTES";
const std::vector<std::string> kBothAlgorithms = {"default", "0"};
void UseAlgorithm(const std::string& one_round_bytes) {
  if (one_round_bytes == "default") {
    unsetenv(kOneRoundBytes);
  } else {
    setenv(kOneRoundBytes, one_round_bytes.c_str(), 1);
  }
}

TEST(CollectiveReduceTest, AddFloatTwoThreeFourMembersAnySize) {
  for (const std::string& algorithm : kBothAlgorithms)
    for (int n : {2, 3, 4}) {
      for (int64_t size : {1, 7, 64}) {
        std::vector<Tensor> inputs;
        std::vector<float> expected(size, 0.f);
        for (int m = 0; m < n; ++m) {
          std::vector<float> v(size);
          for (int64_t j = 0; j < size; ++j) v[j] = static_cast<float>(m * 100 + j);
          for (int64_t j = 0; j < size; ++j) expected[j] += v[j];
          inputs.push_back(Vec(v));
        }
        std::vector<Tensor> out;
        UseAlgorithm(algorithm);
        absl::Status s = RunReduce(inputs, "Add", "Id", &out);
        unsetenv(kOneRoundBytes);
        ASSERT_OK(s);
        ASSERT_EQ(out.size(), static_cast<size_t>(n));
        for (const Tensor& t : out) {
          EXPECT_EQ(Values<float>(t), expected) << algorithm << " " << n << " " << size;
        }
        ExpectAllIdentical(out);
      }
    }
}

TEST(CollectiveReduceTest, MulMinMaxInt32) {
  const std::vector<Tensor> inputs = {Vec<int32_t>({1, -5, 7, 2, 3}),
                                      Vec<int32_t>({2, 4, -1, 2, 0}),
                                      Vec<int32_t>({3, 0, 9, -2, 8})};
  std::vector<Tensor> out;
  ASSERT_OK(RunReduce(inputs, "Mul", "Id", &out));
  for (const Tensor& t : out)
    EXPECT_EQ(Values<int32_t>(t), std::vector<int32_t>({6, 0, -63, -8, 0}));
  ASSERT_OK(RunReduce(inputs, "Min", "Id", &out));
  for (const Tensor& t : out)
    EXPECT_EQ(Values<int32_t>(t), std::vector<int32_t>({1, -5, -1, -2, 0}));
  ASSERT_OK(RunReduce(inputs, "Max", "Id", &out));
  for (const Tensor& t : out) EXPECT_EQ(Values<int32_t>(t), std::vector<int32_t>({3, 4, 9, 2, 8}));
}

TEST(CollectiveReduceTest, MeanIsAddThenDivAndBitIdentical) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<Tensor> inputs;
  for (int m = 0; m < 4; ++m) {
    std::vector<float> v(1001);
    for (float& x : v) x = dist(rng);
    inputs.push_back(Vec(v));
  }
  for (const std::string& algorithm : kBothAlgorithms) {
    std::vector<Tensor> out;
    UseAlgorithm(algorithm);
    absl::Status s = RunReduce(inputs, "Add", "Div", &out);
    unsetenv(kOneRoundBytes);
    ASSERT_OK(s);
    ExpectAllIdentical(out);
    for (int j = 0; j < 1001; ++j) {
      float mean = 0;
      for (int m = 0; m < 4; ++m) mean += inputs[m].data<float>()[j];
      EXPECT_NEAR(out[0].data<float>()[j], mean / 4, 1e-6) << algorithm;
    }
  }
}

TEST(CollectiveReduceTest, ManyTinyChunks) {
  setenv("TG_COLLECTIVE_CHUNK_BYTES", "64", 1);  // 16 floats: hundreds of chunks
  UseAlgorithm("0");                             // the ring, even for 40 KB
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<Tensor> exact, random;
  std::vector<float> expected(10007, 0.f);
  for (int m = 0; m < 4; ++m) {
    std::vector<float> v(10007), r(10007);
    for (int j = 0; j < 10007; ++j) {
      v[j] = static_cast<float>((j * 7 + m) % 1000);
      expected[j] += v[j];
      r[j] = dist(rng);
    }
    exact.push_back(Vec(v));
    random.push_back(Vec(r));
  }
  std::vector<Tensor> out;
  absl::Status s = RunReduce(exact, "Add", "Id", &out);
  std::vector<Tensor> out_random;
  absl::Status s_random = RunReduce(random, "Max", "Id", &out_random);
  absl::Status s_mean = RunReduce(random, "Add", "Div", &out_random);
  unsetenv("TG_COLLECTIVE_CHUNK_BYTES");
  unsetenv(kOneRoundBytes);
  ASSERT_OK(s);
  for (const Tensor& t : out) EXPECT_EQ(Values<float>(t), expected);
  ASSERT_OK(s_random);
  ASSERT_OK(s_mean);
  ExpectAllIdentical(out_random);
}

// Every dtype and merge op, for 2, 3 and 4 members (4 and 2: recursive
// doubling; 3: one round; with "0": the ring), odd sizes, exact results
// (small integers, so even Mul of float is exact) and bit-identical members.
template <typename T>
void ExpectEveryOpExact(int n, int64_t size, const std::string& algorithm) {
  const std::vector<std::string> merges = {"Add", "Mul", "Min", "Max"};
  std::vector<std::vector<T>> values(n, std::vector<T>(size));
  for (int m = 0; m < n; ++m)
    for (int64_t j = 0; j < size; ++j) values[m][j] = static_cast<T>((j * 5 + m * 3) % 7 - 3);
  Scope root = Scope::NewRootScope();
  std::vector<Output> reduced;
  for (int m = 0; m < n; ++m) {
    Scope s = root.WithDevice(Cpu(m));
    auto x = ops::Const(s, Vec(values[m]));
    for (size_t op = 0; op < merges.size(); ++op) {
      reduced.push_back(ops::CollectiveReduce(s, x, n, /*group_key=*/2,
                                              /*instance_key=*/static_cast<int>(op) + 1,
                                              merges[op], "Id", 20));
    }
  }
  UseAlgorithm(algorithm);
  ClientSession session(root, FourCpus());
  unsetenv(kOneRoundBytes);
  std::vector<Tensor> out;
  ASSERT_OK(session.Run(reduced, &out));
  for (size_t op = 0; op < merges.size(); ++op) {
    std::vector<T> expected = values[0];
    for (int m = 1; m < n; ++m)
      for (int64_t j = 0; j < size; ++j) {
        const T x = values[m][j];
        T& e = expected[j];
        e = op == 0 ? e + x : op == 1 ? e * x : op == 2 ? std::min(e, x) : std::max(e, x);
      }
    for (int m = 0; m < n; ++m) {
      const Tensor& t = out[m * merges.size() + op];
      EXPECT_EQ(Values<T>(t), expected) << merges[op] << " n=" << n << " size=" << size << " "
                                        << algorithm << " " << DataTypeString(t.dtype());
      EXPECT_TRUE(SameBytes(t, out[op])) << merges[op] << " member " << m;
    }
  }
}

TEST(CollectiveReduceTest, EveryDtypeAndOpTwoThreeFourMembersExact) {
  for (const std::string& algorithm : kBothAlgorithms)
    for (int n : {2, 3, 4})
      for (int64_t size : {1, 3, 1001}) {
        ExpectEveryOpExact<float>(n, size, algorithm);
        ExpectEveryOpExact<double>(n, size, algorithm);
        ExpectEveryOpExact<int32_t>(n, size, algorithm);
        ExpectEveryOpExact<int64_t>(n, size, algorithm);
      }
}

// Recursive doubling (4 members) when one member never runs: the others
// fail at their deadline naming who they waited for; nothing hangs. (CPU:2
// waits for CPU:3 and CPU:0 for CPU:2 with the same deadline, so either may
// be the first to say so.)
TEST(CollectiveReduceTest, DoublingWithAMemberMissingIsDeadlineExceeded) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> all;
  for (int i = 0; i < 4; ++i) {
    Scope s = root.WithDevice(Cpu(i));
    all.push_back(ops::CollectiveReduce(s, ops::Const(s, {1.f, 2.f, 3.f}), 4, 6, 1, "Add", "Div",
                                        0.5f));
  }
  ClientSession session(root, FourCpus());
  std::vector<Tensor> out;
  ASSERT_OK(session.Run(all, &out));  // the group and instance are known from here on
  for (const Tensor& t : out) EXPECT_EQ(Values<float>(t), std::vector<float>({1, 2, 3}));
  const absl::Status missing = session.Run({all[0], all[1], all[2]}, &out);
  EXPECT_EQ(missing.code(), absl::StatusCode::kDeadlineExceeded) << missing;
  EXPECT_TRUE(absl::StrContains(missing.message(), "waiting for /job:localhost/replica:0/task:0/device:CPU:3") ||
              absl::StrContains(missing.message(), "waiting for /job:localhost/replica:0/task:0/device:CPU:2"))
      << missing;
}

TEST(CollectiveReduceTest, SingleMemberIsIdentity) {
  std::vector<Tensor> out;
  ASSERT_OK(RunReduce({Vec<double>({1.5, -2})}, "Add", "Div", &out));
  EXPECT_EQ(Values<double>(out[0]), std::vector<double>({1.5, -2}));
}

TEST(CollectiveReduceTest, SameGraphManyStepsInARow) {
  std::vector<Tensor> out;
  ASSERT_OK(RunReduce({Vec<int64_t>({1, 2, 3}), Vec<int64_t>({10, 20, 30})}, "Add", "Id", &out,
                      /*steps=*/25));
  for (const Tensor& t : out) EXPECT_EQ(Values<int64_t>(t), std::vector<int64_t>({11, 22, 33}));
}

// A step in which only one member ran leaves the members' exec_seq apart;
// the failed runs make both ask the leader again, which resynchronizes them.
TEST(CollectiveReduceTest, MembersResynchronizeAfterAStepOnlyOneOfThemRan) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> both;
  for (int i = 0; i < 2; ++i) {
    Scope s = root.WithDevice(Cpu(i));
    both.push_back(ops::CollectiveReduce(s, ops::Const(s, {1.f + i}), 2, 5, 1, "Add", "Id", 1));
  }
  ClientSession session(root, FourCpus());
  std::vector<Tensor> out;
  for (int step = 0; step < 3; ++step) ASSERT_OK(session.Run(both, &out));
  EXPECT_STATUS(session.Run({both[0]}, &out), kDeadlineExceeded, "");  // member 1 never ran
  absl::Status s = session.Run(both, &out);  // may still fail: exec_seq apart until now
  if (!s.ok()) {
    EXPECT_STATUS(s, kDeadlineExceeded, "");
    s = session.Run(both, &out);
  }
  ASSERT_OK(s);
  for (const Tensor& t : out) EXPECT_EQ(Values<float>(t), std::vector<float>({3}));
}

TEST(CollectiveReduceTest, MismatchedShapesAreInvalidArgument) {
  std::vector<Tensor> out;
  EXPECT_STATUS(RunReduce({Vec<float>({1, 2}), Vec<float>({1, 2, 3})}, "Add", "Id", &out),
                kInvalidArgument, "members disagree");
}

TEST(CollectiveReduceTest, DivOfIntegersIsInvalidArgument) {
  std::vector<Tensor> out;
  EXPECT_STATUS(RunReduce({Vec<int32_t>({1}), Vec<int32_t>({2})}, "Add", "Div", &out),
                kInvalidArgument, "final_op Div");
}

TEST(CollectiveReduceTest, MissingMemberIsDeadlineExceededNamingTheGroup) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> reduced;
  for (int i = 0; i < 2; ++i) {  // group_size 3, only two members
    Scope s = root.WithDevice(Cpu(i));
    reduced.push_back(
        ops::CollectiveReduce(s, ops::Const(s, {1.f, 2.f}), 3, 7, 1, "Add", "Id", 0.5f));
  }
  ClientSession session(root, FourCpus());
  std::vector<Tensor> out;
  EXPECT_STATUS(session.Run(reduced, &out), kDeadlineExceeded,
                "collective group 7 (size 3): 2 of 3 members joined within 500ms");
}

TEST(CollectiveReduceTest, StepTimeoutCancelsAWaitingMember) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDevice(Cpu(0));
  auto lonely = ops::CollectiveReduce(s, ops::Const(s, {1.f}), 2, 1, 1, "Add", "Id", 60);
  ClientSession session(root, FourCpus());
  RunOptions options;
  options.set_timeout_in_ms(300);
  std::vector<Tensor> out;
  EXPECT_STATUS(session.Run(options, {}, {lonely}, {}, &out, nullptr), kDeadlineExceeded, "");
}

TEST(CollectiveBcastTest, FromOneMemberToTheOthers) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> outs;
  const TensorShape shape({2, 3});
  for (int i = 0; i < 3; ++i) {
    Scope s = root.WithDevice(Cpu(i));
    if (i == 1) {
      outs.push_back(ops::CollectiveBcastSend(
          s, ops::Const(s, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f}, shape), 3, 2, 5, shape, 20));
    } else {
      outs.push_back(ops::CollectiveBcastRecv(s, DT_FLOAT, 3, 2, 5, shape, 20));
    }
  }
  ClientSession session(root, FourCpus());
  std::vector<Tensor> out;
  for (int step = 0; step < 3; ++step) {
    ASSERT_OK(session.Run(outs, &out));
    for (const Tensor& t : out) {
      EXPECT_EQ(t.shape(), shape);
      EXPECT_EQ(Values<float>(t), std::vector<float>({1, 2, 3, 4, 5, 6}));
    }
  }
}

TEST(CollectiveBcastTest, NoSenderIsInvalidArgument) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> outs;
  for (int i = 0; i < 2; ++i) {
    outs.push_back(ops::CollectiveBcastRecv(root.WithDevice(Cpu(i)), DT_FLOAT, 2, 2, 5, {1}, 20));
  }
  ClientSession session(root, FourCpus());
  std::vector<Tensor> out;
  EXPECT_STATUS(session.Run(outs, &out), kInvalidArgument, "0 senders");
}

TEST(CollectiveGatherTest, ConcatenatesInRankOrder) {
  Scope root = Scope::NewRootScope();
  std::vector<Output> outs;
  for (int i = 0; i < 3; ++i) {
    Scope s = root.WithDevice(Cpu(i));
    const int32_t b = 10 * i;
    outs.push_back(ops::CollectiveGather(s, ops::Const(s, {b, b + 1, b + 2, b + 3}, {2, 2}), 3, 3,
                                         9, TensorShape({2, 2}), 20));
  }
  ClientSession session(root, FourCpus());
  std::vector<Tensor> out;
  ASSERT_OK(session.Run(outs, &out));
  for (const Tensor& t : out) {
    EXPECT_EQ(t.shape(), TensorShape({6, 2}));
    EXPECT_EQ(Values<int32_t>(t),
              std::vector<int32_t>({0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}));
  }
}

TEST(CollectiveGatherTest, InputNotOfTheShapeAttrIsInvalidArgument) {
  Scope root = Scope::NewRootScope();
  Scope s = root.WithDevice(Cpu(0));
  auto g = ops::CollectiveGather(s, ops::Const(s, {1.f, 2.f}), 1, 3, 9, TensorShape({3}), 20);
  ClientSession session(root, FourCpus());
  std::vector<Tensor> out;
  EXPECT_STATUS(session.Run({g}, &out), kInvalidArgument, "shape attr says [3]");
}

}  // namespace
}  // namespace tensorgrid
