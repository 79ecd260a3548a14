#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "io/row_source.h"
#include "source_test_util.h"
#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::TempDir;
using test::contains;
using test::expect_mutations_never_crash;
using test::read_all;

Result<test::ReadResult> read_array(const TempDir& dir, const std::string& content,
                                    SourceOptions options = {}, size_t chunk = 2) {
  return read_all(dir.write("in.json", content), InputFormat::kJsonArray, options, chunk);
}

TEST(JsonArraySource, NestedValuesAndBracketsInsideStrings) {
  TempDir dir;
  auto r = read_array(
      dir,
      "[\n"
      "  {\"meta\": {\"a\": [1, {\"b\": \"]}\"}], \"c\": {}}, \"full_text\": \"one [x] {y}, z\"},\n"
      "  {\"full_text\": \"esc \\\" ] \\\\\", \"arr\": [[], [[\"[\"]], \"\\\\\\\"\"]},\n"
      "  {\"full_text\": \"multi\\nline\",\n   \"k\": \"v,]}\"}\n"
      "]\n");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"one [x] {y}, z", "esc \" ] \\", "multi\nline"}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(r->bytes_read, r->bytes_total);
}

TEST(JsonArraySource, WhitespaceVariations) {
  TempDir dir;
  const std::vector<std::string> files = {
      "[{\"full_text\":\"a\"},{\"full_text\":\"b\"}]",
      "\xEF\xBB\xBF  \r\n\t[ \n{ \"full_text\" : \"a\" }\n,\n\t{\"full_text\":\"b\"} \r\n ]  \n\n",
      "[{\"full_text\":\"a\"}\n,{\"full_text\":\"b\"}\n]",
  };
  for (const std::string& f : files) {
    auto r = read_array(dir, f, {}, 1);
    ASSERT_TRUE(r.ok()) << r.status().to_string() << " for " << f;
    EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"a", "b"})) << f;
  }
  auto lines = read_array(dir, files[1]);
  ASSERT_TRUE(lines.ok());
  EXPECT_EQ(lines->rows.lines, (std::vector<int64_t>{3, 5}));
}

TEST(JsonArraySource, EmptyArrayAndEmptyFile) {
  TempDir dir;
  for (const std::string& f :
       {std::string("[]"), std::string(" [ \n ] \n"), std::string(""), std::string("\n ")}) {
    auto r = read_array(dir, f);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->rows.size(), 0u);
  }
}

TEST(JsonArraySource, TopLevelNotAnArray) {
  TempDir dir;
  auto r = read_array(dir, "\n{\"full_text\": \"x\"}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(
      contains(r.status(), "in.json: line 2: expected a JSON array of objects at the top level, found '{'"))
      << r.status().message();
}

TEST(JsonArraySource, BadElementNamesItsLine) {
  TempDir dir;
  const std::string f =
      "[\n{\"full_text\": \"ok\"},\n{\"full_text\": 12},\n\"just a string\",\n"
      "{\"full_text\": tru},\n{\"other\": 1},\n{\"full_text\": \"bad \xff\"},\n{\"full_text\": \"last\"}\n]";
  auto fail = read_array(dir, f);
  ASSERT_FALSE(fail.ok());
  EXPECT_EQ(fail.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(contains(fail.status(), "in.json: line 3: column 'full_text' is a number"))
      << fail.status().message();
  auto skip = read_array(dir, f, test::skip_options());
  ASSERT_TRUE(skip.ok()) << skip.status().to_string();
  EXPECT_EQ(skip->rows.texts, (std::vector<std::string>{"ok", "last"}));
  EXPECT_EQ(skip->rows.lines, (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(skip->skipped, 5);
  // Each kind of bad element on its own names its problem.
  auto non_object = read_array(dir, "[{\"full_text\":\"a\"},\n 3]");
  ASSERT_FALSE(non_object.ok());
  EXPECT_TRUE(contains(non_object.status(), "line 2: expected a JSON object, found a number"))
      << non_object.status().message();
  auto malformed = read_array(dir, "[{\"full_text\":\"a\"},\n\n{\"full_text\": \"x\" \"y\"}]");
  ASSERT_FALSE(malformed.ok());
  EXPECT_TRUE(contains(malformed.status(), "line 3: malformed JSON")) << malformed.status().message();
}

TEST(JsonArraySource, StructuralErrors) {
  TempDir dir;
  struct Case {
    std::string file;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"[{\"full_text\":\"a\"},\n{\"full_text\":\"b\"}\n",
       "line 1: the JSON array opened here is not closed"},
      {"[{\"full_text\":\"a\"},\n{\"full_text\":\"b\n",
       "line 2: the array element that starts here is not closed"},
      {"[{\"full_text\":\"a\"}] x", "line 1: unexpected 'x' after the end of the JSON array"},
      {"[{\"full_text\":\"a\"}]\n]", "line 2: unexpected ']' after the end"},
      {"[{\"full_text\":\"a\"},]", "expected a value after ','"},
      {"[{\"full_text\":\"a\"} {\"full_text\":\"b\"}]", "expected ',' or ']' after an array element"},
      {"[{\"full_text\":\"a\"},\n{\"x\":[1}]", "line 2: mismatched '}' closes '['"},
      {"[}", "unmatched '}'"},
      {"[", "the JSON array opened here is not closed"},
  };
  for (const Case& c : cases) {
    auto r = read_array(dir, c.file, test::skip_options());
    ASSERT_FALSE(r.ok()) << c.file;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_TRUE(contains(r.status(), c.message)) << r.status().message() << " for " << c.file;
  }
}

TEST(JsonArraySource, MissingColumnInFirstObjectIsNotFound) {
  TempDir dir;
  auto r = read_array(dir, "[{\"id\": 1, \"text\": \"x\"}, {\"full_text\": \"y\"}]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(r.status(), "in.json: no column 'full_text' (the first object has: id, text)"))
      << r.status().message();
}

TEST(JsonArraySource, NullRowsAndValuesAsJson) {
  TempDir dir;
  const std::string f =
      "[{\"full_text\": null}, {\"full_text\": \"s\\u00e9\\n\"}, {\"full_text\": 1.5e3},"
      " {\"full_text\": {\"a\": [1, 2, {\"b\": null}]}}, {\"full_text\": true}]";
  auto plain = read_array(dir, f);
  ASSERT_FALSE(plain.ok());
  EXPECT_TRUE(contains(plain.status(), "line 1: column 'full_text' is a number")) << plain.status().message();
  auto json = read_array(dir, f, test::json_options());
  ASSERT_TRUE(json.ok()) << json.status().to_string();
  ASSERT_EQ(json->rows.size(), 5u);
  EXPECT_EQ(json->rows.is_null, (std::vector<uint8_t>{1, 0, 0, 0, 0}));
  EXPECT_EQ(json->rows.texts[0], "");
  EXPECT_EQ(json->rows.texts[1], "\"s\xc3\xa9\\n\"");
  EXPECT_EQ(json->rows.texts[2], "1500.0");
  EXPECT_EQ(json->rows.texts[3], "{\"a\":[1,2,{\"b\":null}]}");
  EXPECT_EQ(json->rows.texts[4], "true");
}

TEST(JsonArraySource, ManyElements) {
  TempDir dir;
  std::string f = "[";
  for (int i = 0; i < 5000; ++i)
    f += (i ? ",\n" : "") + std::string("{\"full_text\":\"r") + std::to_string(i) + "\"}";
  f += "]";
  auto r = read_array(dir, f, {}, 64);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 5000u);
  EXPECT_EQ(r->rows.texts[4999], "r4999");
  EXPECT_EQ(r->rows.lines[4999], 5000);
}

TEST(JsonArraySource, DeepNestingIsABadRowNotACrash) {
  TempDir dir;
  std::string deep(5000, '[');
  deep += std::string(5000, ']');
  auto r = read_array(
      dir, "[{\"full_text\":\"a\"}, {\"full_text\":\"b\", \"d\": " + deep + "}, {\"full_text\":\"c\"}]",
      test::skip_options());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(r->skipped, 1);
}

TEST(JsonArraySource, RandomMutationsNeverCrash) {
  const std::string base =
      "[\n {\"full_text\": \"a [b] {c}, \\\"d\\\"\", \"n\": [1, {\"x\": null}]},\n"
      " {\"full_text\": null},\n {\"full_text\": \"caf\xc3\xa9\"} ]\n";
  const char alphabet[] = {'[', ']', '{', '}', '"', '\\', ',', ':', '\n', ' ', 'a', '1', '\xff', '\0'};
  expect_mutations_never_crash(base, std::string_view(alphabet, sizeof(alphabet)), InputFormat::kJsonArray,
                               ".json", 3, 4321);
}

}  // namespace
}  // namespace infercost::io
