#include "core/platform/json.h"

#include <string>

#include "gtest/gtest.h"

namespace tensorgrid {
namespace {

TEST(JsonQuoteTest, PlainTextIsQuoted) { EXPECT_EQ(JsonQuote("MatMul"), "\"MatMul\""); }

TEST(JsonQuoteTest, QuotesBackslashesAndControlCharactersAreEscaped) {
  EXPECT_EQ(JsonQuote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(JsonQuote("l1\nl2\tx\r"), "\"l1\\nl2\\tx\\r\"");
  EXPECT_EQ(JsonQuote(std::string("\x01\x1f", 2)), "\"\\u0001\\u001f\"");
  EXPECT_EQ(JsonQuote(std::string("a\0b", 3)), "\"a\\u0000b\"");
}

TEST(JsonQuoteTest, ValidUtf8PassesThrough) {
  EXPECT_EQ(JsonQuote("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80\"");
}

TEST(JsonQuoteTest, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(JsonQuote(std::string("a\xff") + "b"), "\"a\\ufffdb\"");
  EXPECT_EQ(JsonQuote("\xc3"), "\"\\ufffd\"");                        // truncated
  EXPECT_EQ(JsonQuote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong '/'
  EXPECT_EQ(JsonQuote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
}

}  // namespace
}  // namespace tensorgrid
