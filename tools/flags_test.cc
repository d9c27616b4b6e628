#include "tools/flags.h"

#include <sstream>
#include <string>
#include <vector>

#include "core/platform/status_testutil.h"
#include "gtest/gtest.h"

namespace tensorgrid {
namespace tools {
namespace {

const std::vector<Flag>& TestFlags() {
  static const auto* flags = new std::vector<Flag>{
      {"graph", "FILE", false, "the graph"},
      {"fetch", "X,Y", true, "tensors to print;\nrepeatable"},
      {"json", "", false, "print JSON"},
  };
  return *flags;
}

// Parses `args`, recording every flag handed to the handler as
// "name=value" (or "name" when no value was written).
absl::StatusOr<bool> Parse(const std::vector<std::string>& args, std::vector<std::string>* seen) {
  return ParseArgs(TestFlags(), args, [seen](const FlagValue& flag) {
    seen->push_back(flag.has_value ? flag.name + "=" + flag.value : flag.name + "/" + flag.value);
    return absl::OkStatus();
  });
}

TEST(ParseArgsTest, ValuesBothWaysInOrder) {
  std::vector<std::string> seen;
  absl::StatusOr<bool> help = Parse({"--fetch=a", "--graph", "g.pbtxt", "--fetch", "b,c"}, &seen);
  ASSERT_TRUE(help.ok()) << help.status();
  EXPECT_FALSE(*help);
  EXPECT_EQ(seen, (std::vector<std::string>{"fetch=a", "graph=g.pbtxt", "fetch=b,c"}));
}

TEST(ParseArgsTest, EmptyValueAfterEqualsIsAValue) {
  std::vector<std::string> seen;
  ASSERT_TRUE(Parse({"--graph=", "--fetch", ""}, &seen).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"graph=", "fetch="}));
}

TEST(ParseArgsTest, ValueFlagTakesTheNextArgumentEvenWithDashes) {
  std::vector<std::string> seen;
  ASSERT_TRUE(Parse({"--graph", "--json"}, &seen).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"graph=--json"}));
}

TEST(ParseArgsTest, BoolFlagsAreNormalizedAndNeverTakeTheNextArgument) {
  std::vector<std::string> seen;
  ASSERT_TRUE(Parse({"--json"}, &seen).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"json/true"}));
  for (const char* on : {"--json=true", "--json=1", "--json="}) {
    seen.clear();
    ASSERT_TRUE(Parse({on}, &seen).ok()) << on;
    EXPECT_EQ(seen, (std::vector<std::string>{"json=true"})) << on;
  }
  for (const char* off : {"--json=false", "--json=0"}) {
    seen.clear();
    ASSERT_TRUE(Parse({off}, &seen).ok()) << off;
    EXPECT_EQ(seen, (std::vector<std::string>{"json=false"})) << off;
  }
  EXPECT_STATUS(Parse({"--json", "yes"}, &seen).status(), kInvalidArgument,
                "unexpected argument 'yes'");
  EXPECT_STATUS(Parse({"--json=maybe"}, &seen).status(), kInvalidArgument,
                "--json takes true or false, got 'maybe'");
}

TEST(ParseArgsTest, HelpInAnyFormAnywhere) {
  for (const char* h : {"--help", "-help", "-h"}) {
    std::vector<std::string> seen;
    absl::StatusOr<bool> help = Parse({"--graph=g", h, "--fetch=y"}, &seen);
    ASSERT_TRUE(help.ok()) << h;
    EXPECT_TRUE(*help) << h;
    EXPECT_EQ(seen.size(), 2) << h;
  }
  std::vector<std::string> seen;
  // --help is not a table flag, so it takes no value.
  EXPECT_STATUS(Parse({"--help=1"}, &seen).status(), kInvalidArgument, "unknown flag '--help'");
}

TEST(ParseArgsTest, SyntaxErrors) {
  std::vector<std::string> seen;
  EXPECT_STATUS(Parse({"--bogus=1"}, &seen).status(), kInvalidArgument, "unknown flag '--bogus'");
  EXPECT_STATUS(Parse({"g.pbtxt"}, &seen).status(), kInvalidArgument,
                "unexpected argument 'g.pbtxt'");
  EXPECT_STATUS(Parse({"--"}, &seen).status(), kInvalidArgument, "unexpected argument '--'");
  EXPECT_STATUS(Parse({"-graph=g"}, &seen).status(), kInvalidArgument, "unexpected argument");
  EXPECT_STATUS(Parse({"--graph"}, &seen).status(), kInvalidArgument,
                "flag '--graph' needs a value");
}

TEST(ParseArgsTest, OnlyRepeatableFlagsMayRepeat) {
  std::vector<std::string> seen;
  EXPECT_TRUE(Parse({"--fetch=a", "--fetch=b"}, &seen).ok());
  EXPECT_STATUS(Parse({"--graph=a", "--graph=b"}, &seen).status(), kInvalidArgument,
                "flag '--graph' is given more than once");
  EXPECT_STATUS(Parse({"--json", "--json=false"}, &seen).status(), kInvalidArgument,
                "flag '--json' is given more than once");
}

TEST(ParseArgsTest, HandlerErrorStopsTheParse) {
  int calls = 0;
  absl::StatusOr<bool> help =
      ParseArgs(TestFlags(), {"--graph=g", "--bogus", "--help"}, [&](const FlagValue&) {
        ++calls;
        return absl::InvalidArgumentError("no graphs today");
      });
  EXPECT_STATUS(help.status(), kInvalidArgument, "no graphs today");
  EXPECT_EQ(calls, 1);
}

TEST(AppendCommaListTest, TrimsItemsAndRejectsEmptyOnes) {
  std::vector<std::string> out = {"x"};
  EXPECT_OK(AppendCommaList({"fetch", " a , b", true}, &out));
  EXPECT_EQ(out, (std::vector<std::string>{"x", "a", "b"}));
  EXPECT_STATUS(AppendCommaList({"fetch", "a,,b", true}, &out), kInvalidArgument,
                "--fetch='a,,b' has an empty name");
  EXPECT_STATUS(AppendCommaList({"fetch", "", true}, &out), kInvalidArgument, "empty name");
}

TEST(FlagsHelpTest, OneColumnTwoSpacesAfterTheLongestFlag) {
  EXPECT_EQ(FlagsHelp(TestFlags()),
            "  --graph=FILE  the graph\n"
            "  --fetch=X,Y   tensors to print;\n"
            "                repeatable\n"
            "  --json        print JSON\n"
            "  --help        this text\n");
}

TEST(ReportTest, UsageErrorIsExitTwo) {
  std::ostringstream err;
  EXPECT_EQ(ReportUsageError(err, "tg_x", "unknown flag '--y'", "usage: tg_x\n"), 2);
  EXPECT_EQ(err.str(), "tg_x: unknown flag '--y'\n\nusage: tg_x\n");
  err.str("");
  EXPECT_EQ(ReportUsageError(err, "tg_x", "bad feed"), 2);
  EXPECT_EQ(err.str(), "tg_x: bad feed\n");
}

TEST(ReportTest, ErrorIsExitOneAndOkIsZero) {
  std::ostringstream err;
  EXPECT_EQ(ReportError(err, absl::NotFoundError("cannot read 'g.pb'")), 1);
  EXPECT_EQ(err.str(), "error: NOT_FOUND: cannot read 'g.pb'\n");
  err.str("");
  EXPECT_EQ(ReportError(err, absl::OkStatus()), 0);
  EXPECT_EQ(err.str(), "");
}

}  // namespace
}  // namespace tools
}  // namespace tensorgrid
