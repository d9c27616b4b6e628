#include "core/util/command_line_flags.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

// A command line Parse may rewrite: argv points into `words`, with the null
// after the last argument that a real argv has.
class CommandLine {
 public:
  explicit CommandLine(std::vector<std::string> args) : words_(std::move(args)) {
    words_.insert(words_.begin(), "/path/to/prog");
    for (std::string& word : words_) argv_.push_back(word.data());
    argv_.push_back(nullptr);
    argc_ = static_cast<int>(words_.size());
  }

  int* argc() { return &argc_; }
  char** argv() { return argv_.data(); }
  // What argv holds after argv[0], up to *argc.
  std::vector<std::string> rest() const {
    return std::vector<std::string>(argv_.begin() + 1, argv_.begin() + argc_);
  }

 private:
  std::vector<std::string> words_;
  std::vector<char*> argv_;
  int argc_ = 0;
};

// One flag of every type, with its defaults.
struct Variables {
  int32_t index = -1;
  int64_t steps = 6000;
  float rate = 0.5f;
  double learning_rate = 1e-4;
  bool is_sync = false;
  std::string data_dir = "/data";

  std::vector<Flag> FlagList() {
    return {Flag("index", &index, "this task's index"),
            Flag("steps", &steps, "the last step"),
            Flag("rate", &rate, "a float"),
            Flag("learning_rate", &learning_rate, "Adam's learning rate"),
            Flag("is_sync", &is_sync, "synchronous replicas:\nsee the guide"),
            Flag("data_dir", &data_dir, "where the data is")};
  }
};

absl::Status Parse(Variables& v, CommandLine& line, bool* help) {
  return Flags::Parse(line.argc(), line.argv(), v.FlagList(), help);
}

TEST(CommandLineFlagsTest, EveryTypeWithEquals) {
  Variables v;
  CommandLine line({"--index=3", "--steps=12345678901", "--rate=0.25", "--learning_rate=2e-3",
                    "--is_sync=true", "--data_dir=/tmp/fm"});
  bool help = true;
  ASSERT_OK(Parse(v, line, &help));
  EXPECT_FALSE(help);
  EXPECT_EQ(v.index, 3);
  EXPECT_EQ(v.steps, 12345678901);
  EXPECT_EQ(v.rate, 0.25f);
  EXPECT_EQ(v.learning_rate, 2e-3);
  EXPECT_TRUE(v.is_sync);
  EXPECT_EQ(v.data_dir, "/tmp/fm");
}

TEST(CommandLineFlagsTest, EveryValueTypeAsTheNextArgument) {
  Variables v;
  CommandLine line({"--index", "-2", "--steps", "7", "--rate", "1.5", "--learning_rate", "0.1",
                    "--data_dir", "--not-a-flag"});
  bool help = false;
  ASSERT_OK(Parse(v, line, &help));
  EXPECT_EQ(v.index, -2);
  EXPECT_EQ(v.steps, 7);
  EXPECT_EQ(v.rate, 1.5f);
  EXPECT_EQ(v.learning_rate, 0.1);
  EXPECT_EQ(v.data_dir, "--not-a-flag");
  EXPECT_TRUE(line.rest().empty());
}

TEST(CommandLineFlagsTest, EmptyStringValue) {
  Variables v;
  CommandLine line({"--data_dir="});
  bool help = false;
  ASSERT_OK(Parse(v, line, &help));
  EXPECT_EQ(v.data_dir, "");
}

TEST(CommandLineFlagsTest, BoolForms) {
  for (const auto& [arg, want] :
       std::vector<std::pair<std::string, bool>>{{"--is_sync", true},
                                                 {"--is_sync=true", true},
                                                 {"--is_sync=1", true},
                                                 {"--is_sync=false", false},
                                                 {"--is_sync=0", false}}) {
    Variables v;
    v.is_sync = !want;
    CommandLine line({arg});
    bool help = false;
    ASSERT_OK(Parse(v, line, &help));
    EXPECT_EQ(v.is_sync, want) << arg;
  }
}

TEST(CommandLineFlagsTest, BoolNeverTakesTheNextArgument) {
  Variables v;
  CommandLine line({"--is_sync", "false"});
  bool help = false;
  ASSERT_OK(Parse(v, line, &help));
  EXPECT_TRUE(v.is_sync);
  EXPECT_EQ(line.rest(), std::vector<std::string>{"false"});
}

TEST(CommandLineFlagsTest, BadValuesNameTheFlagAndTheValue) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--index=x", "--index='x' is not an int32"},
      {"--index=1.5", "--index='1.5' is not an int32"},
      {"--index=3000000000", "--index='3000000000' is out of range for int32"},
      {"--steps=", "--steps='' is not an int64"},
      {"--steps=1e3", "--steps='1e3' is not an int64"},
      {"--steps=-99999999999999999999",
       "--steps='-99999999999999999999' is out of range for int64"},
      {"--rate=fast", "--rate='fast' is not a float"},
      {"--rate=1e50", "--rate='1e50' is out of range for float"},
      {"--rate=nan", "--rate='nan' is not a finite float"},
      {"--learning_rate=1e400", "--learning_rate='1e400' is out of range for double"},
      {"--learning_rate=-inf", "--learning_rate='-inf' is not a finite double"},
      {"--is_sync=yes", "--is_sync='yes' is not a bool (true or false)"},
      {"--is_sync=", "--is_sync='' is not a bool (true or false)"},
  };
  for (const auto& [arg, message] : cases) {
    Variables v;
    CommandLine line({arg});
    bool help = false;
    EXPECT_STATUS(Parse(v, line, &help), kInvalidArgument, message);
  }
}

TEST(CommandLineFlagsTest, UnknownFlag) {
  Variables v;
  CommandLine line({"--bogus=1"});
  bool help = false;
  EXPECT_STATUS(Parse(v, line, &help), kInvalidArgument, "unknown flag '--bogus'");
}

TEST(CommandLineFlagsTest, MissingValueAndRepeatedFlag) {
  Variables v;
  bool help = false;
  CommandLine missing({"--steps"});
  EXPECT_STATUS(Parse(v, missing, &help), kInvalidArgument, "flag '--steps' needs a value");
  CommandLine twice({"--steps=1", "--steps", "2"});
  EXPECT_STATUS(Parse(v, twice, &help), kInvalidArgument, "flag '--steps' is given more than once");
}

TEST(CommandLineFlagsTest, AnErrorChangesNothing) {
  Variables v;
  CommandLine line({"--steps=5", "input.txt", "--help", "--index=x"});
  bool help = false;
  EXPECT_STATUS(Parse(v, line, &help), kInvalidArgument, "--index='x'");
  EXPECT_EQ(v.steps, 6000);
  EXPECT_FALSE(help);
  EXPECT_EQ(*line.argc(), 5);
  EXPECT_EQ(line.rest(),
            (std::vector<std::string>{"--steps=5", "input.txt", "--help", "--index=x"}));
}

TEST(CommandLineFlagsTest, HelpIsReportedAndRemoved) {
  for (const char* arg : {"--help", "-help", "-h"}) {
    Variables v;
    CommandLine line({"--steps=5", arg});
    bool help = false;
    ASSERT_OK(Parse(v, line, &help));
    EXPECT_TRUE(help) << arg;
    EXPECT_EQ(v.steps, 5);
    EXPECT_TRUE(line.rest().empty()) << arg;
  }
}

TEST(CommandLineFlagsTest, RemovesItsFlagsAndKeepsTheRestInOrder) {
  Variables v;
  CommandLine line({"a", "--steps=5", "-x", "--is_sync", "b", "--", "--index=1", "c"});
  bool help = false;
  ASSERT_OK(Parse(v, line, &help));
  EXPECT_EQ(v.steps, 5);
  EXPECT_TRUE(v.is_sync);
  EXPECT_EQ(v.index, -1);  // after "--": not read
  EXPECT_EQ(*line.argc(), 7);
  EXPECT_EQ(std::string(line.argv()[0]), "/path/to/prog");
  EXPECT_EQ(line.rest(), (std::vector<std::string>{"a", "-x", "b", "--", "--index=1", "c"}));
  EXPECT_EQ(line.argv()[*line.argc()], nullptr);
}

TEST(CommandLineFlagsTest, AnEmptyArgvIsLeftAlone) {
  Variables v;
  int argc = 0;
  char* argv[] = {nullptr};
  bool help = true;
  ASSERT_OK(Flags::Parse(&argc, argv, v.FlagList(), &help));
  EXPECT_FALSE(help);
  EXPECT_EQ(argc, 0);
  EXPECT_TRUE(Flags::Parse(&argc, argv, v.FlagList()));
}

TEST(CommandLineFlagsTest, TensorFlowFormReturnsFalseForErrorsAndHelp) {
  Variables v;
  CommandLine good({"--steps=5", "file"});
  EXPECT_TRUE(Flags::Parse(good.argc(), good.argv(), v.FlagList()));
  EXPECT_EQ(v.steps, 5);
  EXPECT_EQ(good.rest(), std::vector<std::string>{"file"});

  CommandLine help({"--help"});
  testing::internal::CaptureStderr();
  EXPECT_FALSE(Flags::Parse(help.argc(), help.argv(), v.FlagList()));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");

  CommandLine bad({"--steps=x"});
  testing::internal::CaptureStderr();
  EXPECT_FALSE(Flags::Parse(bad.argc(), bad.argv(), v.FlagList()));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "prog: --steps='x' is not an int64\n");
}

TEST(CommandLineFlagsTest, UsageListsTypeDefaultAndHelp) {
  Variables v;
  EXPECT_EQ(Flags::Usage("prog [--steps=N]", v.FlagList()),
            "usage: prog [--steps=N]\n"
            "\n"
            "flags:\n"
            "  --index (int32, default -1)\n"
            "      this task's index\n"
            "  --steps (int64, default 6000)\n"
            "      the last step\n"
            "  --rate (float, default 0.5)\n"
            "      a float\n"
            "  --learning_rate (double, default 0.0001)\n"
            "      Adam's learning rate\n"
            "  --is_sync (bool, default false)\n"
            "      synchronous replicas:\n"
            "      see the guide\n"
            "  --data_dir (string, default \"/data\")\n"
            "      where the data is\n"
            "  --help\n"
            "      print this text\n");
}

TEST(CommandLineFlagsTest, UsageShowsTheValueWhenTheFlagWasMade) {
  int64_t steps = 1;
  const std::vector<Flag> flag_list = {Flag("steps", &steps, "the last step")};
  steps = 2;
  EXPECT_NE(Flags::Usage("prog", flag_list).find("--steps (int64, default 1)"), std::string::npos);
}

}  // namespace
}  // namespace tensorgrid
