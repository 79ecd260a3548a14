#include "infercost/status.h"

#include <gtest/gtest.h>

#include <utility>

#include "core/enum_names.h"

namespace infercost {
namespace {

Result<int> parse_positive(int x) {
  if (x <= 0) return invalid_argument("not positive: " + std::to_string(x));
  return x;
}

Status twice(int x, int& out) {
  INFERCOST_ASSIGN_OR_RETURN(int v, parse_positive(x));
  out = 2 * v;
  return Status();
}

TEST(Status, OkAndContext) {
  EXPECT_TRUE(Status().ok());
  Status s = corruption("bad header").with_context("page 2").with_context("a.parquet");
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_EQ(s.message(), "a.parquet: page 2: bad header");
  EXPECT_EQ(s.to_string(), "Corrupt input: a.parquet: page 2: bad header");
  EXPECT_TRUE(Status().with_context("x").ok());
}

TEST(Status, ResultAndMacros) {
  int out = 0;
  EXPECT_TRUE(twice(4, out).ok());
  EXPECT_EQ(out, 8);
  Status s = twice(-1, out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "not positive: -1");
  Result<int> from_ok_status{Status()};
  EXPECT_FALSE(from_ok_status.ok());
  EXPECT_EQ(from_ok_status.status().code(), StatusCode::kInternal);
}

// Each maker of an error gives its code, and each code its name.
TEST(Status, MakersAndCodeNames) {
  const std::pair<Status, const char*> cases[] = {{invalid_argument("m"), "Invalid argument"},
                                                  {not_found("m"), "Not found"},
                                                  {io_error("m"), "I/O error"},
                                                  {corruption("m"), "Corrupt input"},
                                                  {unsupported("m"), "Unsupported"},
                                                  {resource_exhausted("m"), "Resource exhausted"},
                                                  {internal_error("m"), "Internal error"},
                                                  {unavailable("m"), "Unavailable"},
                                                  {cancelled("m"), "Stopped"},
                                                  {non_finite("m"), "Not a finite number"}};
  for (const auto& [status, name] : cases) {
    EXPECT_EQ(status_code_name(status.code()), name);
    EXPECT_EQ(status.message(), "m");
  }
  EXPECT_EQ(status_code_name(StatusCode::kOk), "OK");
  EXPECT_EQ(status_code_name(static_cast<StatusCode>(99)), "Unknown");
}

TEST(EnumName, ByValueWithGapsAndUnknowns) {
  enum class Kind { kA, kB, kSkipped, kC };
  static constexpr const char* kNames[] = {"a", "b", nullptr, "c"};
  EXPECT_STREQ(enum_name(Kind::kB, kNames), "b");
  EXPECT_STREQ(enum_name(Kind::kC, kNames), "c");
  EXPECT_STREQ(enum_name(Kind::kSkipped, kNames), "?");
  EXPECT_STREQ(enum_name(static_cast<Kind>(4), kNames, "none"), "none");
  EXPECT_STREQ(enum_name(static_cast<Kind>(-1), kNames), "?");
}

// value() of an error aborts with the status in every build (Release too: no
// assert), by each of its three overloads and through operator->.
TEST(StatusDeathTest, ValueOfAnErrorAbortsWithItsStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const char* expected = "value\\(\\) of an error result: Invalid argument: not positive: -3";
  EXPECT_DEATH((void)parse_positive(-3).value(), expected);
  Result<int> r = parse_positive(-3);
  EXPECT_DEATH((void)r.value(), expected);
  const Result<int>& cr = r;
  EXPECT_DEATH((void)cr.value(), expected);
  Result<std::string> text = not_found("no such file");
  EXPECT_DEATH((void)text->size(), "Not found: no such file");
}

}  // namespace
}  // namespace infercost
