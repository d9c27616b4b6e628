// gtest checks of absl::Status values, for every test in the tree:
//
//   ASSERT_OK(session->Create(graph));
//   ASSERT_OK_AND_ASSIGN(std::unique_ptr<Session> session, NewSession(options));
//   EXPECT_STATUS(session->Run(...), kInvalidArgument, "feed 'x' has shape [3]");
//
// EXPECT_STATUS checks the code and a substring of the message, as a test
// of an error should (never just `!ok()`).
#ifndef TENSORGRID_CORE_PLATFORM_STATUS_TESTUTIL_H_
#define TENSORGRID_CORE_PLATFORM_STATUS_TESTUTIL_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "core/platform/status.h"
#include "gtest/gtest.h"

#define ASSERT_OK(expr)                 \
  do {                                  \
    ::absl::Status tg_ok_ = (expr);     \
    ASSERT_TRUE(tg_ok_.ok()) << tg_ok_; \
  } while (0)
#define EXPECT_OK(expr)                 \
  do {                                  \
    ::absl::Status tg_ok_ = (expr);     \
    EXPECT_TRUE(tg_ok_.ok()) << tg_ok_; \
  } while (0)

// Asserts that `expr` (an absl::StatusOr) is OK, and moves its value into
// `lhs`: a declaration or an existing variable.
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  TG_ASSERT_OK_AND_ASSIGN_IMPL_(TG_STATUS_CONCAT_(tg_statusor_, __LINE__), lhs, expr)
#define TG_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  ASSERT_TRUE(tmp.ok()) << tmp.status();              \
  lhs = std::move(tmp).value()

// Expects `status` to have `code` and a message containing `substr`.
#define EXPECT_STATUS(status_expr, code_, substr)                                       \
  do {                                                                                  \
    ::absl::Status tg_st_ = (status_expr);                                              \
    EXPECT_EQ(tg_st_.code(), ::absl::StatusCode::code_) << tg_st_;                      \
    EXPECT_NE(std::string(tg_st_.message()).find(substr), std::string::npos) << tg_st_; \
  } while (0)

#endif  // TENSORGRID_CORE_PLATFORM_STATUS_TESTUTIL_H_
