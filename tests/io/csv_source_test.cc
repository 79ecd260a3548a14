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

Result<test::ReadResult> read_csv(const TempDir& dir, const std::string& content, SourceOptions options = {},
                                  size_t chunk = 3) {
  return read_all(dir.write("in.csv", content), InputFormat::kCsv, options, chunk);
}

TEST(CsvSource, QuotesEscapesAndEmbeddedSeparators) {
  TempDir dir;
  auto r = read_csv(dir,
                    "id,full_text,extra\n"
                    "1,plain,x\n"
                    "2,\"with, comma\",y\n"
                    "3,\"say \"\"hi\"\"\",z\n"
                    "4,\"two\nlines\r\nand crlf\",w\n"
                    "5,\" spaced \",\"q,\"\"\n\"\n"
                    "6,unquoted \"inner\" quotes,v\n"
                    "7,caf\xc3\xa9 \xf0\x9f\x98\x80,u\n");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{
                               "plain", "with, comma", "say \"hi\"", "two\nlines\r\nand crlf", " spaced ",
                               "unquoted \"inner\" quotes", "caf\xc3\xa9 \xf0\x9f\x98\x80"}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{2, 3, 4, 5, 8, 10, 11}));
  EXPECT_EQ(r->rows.is_null, std::vector<uint8_t>(7, 0));
  EXPECT_EQ(r->bytes_read, r->bytes_total);
}

TEST(CsvSource, CrlfBomAndFinalLineWithoutNewline) {
  TempDir dir;
  auto r = read_csv(dir,
                    "\xEF\xBB\xBF"
                    "full_text,n\r\na,1\r\n\"b\r\nc\",2\r\nlast,3");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"a", "b\r\nc", "last"}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{2, 3, 5}));
  // The BOM is not part of the first column's name.
  auto first = read_csv(dir,
                        "\xEF\xBB\xBF"
                        "full_text\nx\n");
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(first->rows.texts, (std::vector<std::string>{"x"}));
}

TEST(CsvSource, NullAndEmptyStrings) {
  TempDir dir;
  auto r = read_csv(dir, "a,full_text,b\n1,,2\n1,\"\",2\n1,x,\n,y,\n");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"", "", "x", "y"}));
  EXPECT_EQ(r->rows.is_null, (std::vector<uint8_t>{1, 0, 0, 0}));
  // Last column empty at the end of the file without a newline: null.
  auto last = read_csv(dir, "a,full_text\n1,");
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->rows.is_null, (std::vector<uint8_t>{1}));
}

TEST(CsvSource, EmptyFileAndHeaderOnly) {
  TempDir dir;
  auto empty = read_csv(dir, "");
  ASSERT_TRUE(empty.ok()) << empty.status().to_string();
  EXPECT_EQ(empty->rows.size(), 0u);
  auto header = read_csv(dir, "full_text,label\n");
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_EQ(header->rows.size(), 0u);
  auto header_no_newline = read_csv(dir, "full_text");
  ASSERT_TRUE(header_no_newline.ok());
  EXPECT_EQ(header_no_newline->rows.size(), 0u);
}

TEST(CsvSource, BlankLinesAreSkipped) {
  TempDir dir;
  auto r = read_csv(dir, "full_text,n\n\na,1\r\n\r\nb,2\n\n");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->rows.lines, (std::vector<int64_t>{3, 5}));
}

TEST(CsvSource, MissingColumnListsTheHeader) {
  TempDir dir;
  auto r = read_csv(dir, "id,text,\"odd, name\"\n1,x,y\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(contains(r.status(), "in.csv: no column 'full_text'")) << r.status().message();
  EXPECT_TRUE(contains(r.status(), "(columns: id, text, odd, name)")) << r.status().message();
  SourceOptions other;
  other.column = "odd, name";
  auto ok = read_csv(dir, "id,text,\"odd, name\"\n1,x,y\n", other);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(ok->rows.texts, (std::vector<std::string>{"y"}));
}

TEST(CsvSource, RaggedRowsAreBadRowsNamingTheLine) {
  TempDir dir;
  const std::string csv = "full_text,n\na,1\nb\nc,3,extra\n\"d\ne\",4\nf,5,\n";
  auto fail = read_csv(dir, csv);
  ASSERT_FALSE(fail.ok());
  EXPECT_EQ(fail.status().code(), StatusCode::kCorruption);
  EXPECT_TRUE(contains(fail.status(), "in.csv: line 3: 1 field, the header has 2"))
      << fail.status().message();
  auto skip = read_csv(dir, csv, test::skip_options(), 1);
  ASSERT_TRUE(skip.ok()) << skip.status().to_string();
  EXPECT_EQ(skip->rows.texts, (std::vector<std::string>{"a", "d\ne"}));
  EXPECT_EQ(skip->rows.lines, (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(skip->skipped, 3);
  EXPECT_TRUE(contains(skip->first_skip, "line 3: 1 field")) << skip->first_skip.message();
}

TEST(CsvSource, TextAfterClosingQuoteIsABadRow) {
  TempDir dir;
  auto r = read_csv(dir, "full_text,n\n\"ab\"cd,1\nok,2\n", test::skip_options());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"ok"}));
  EXPECT_TRUE(contains(r->first_skip, "line 2: text after the closing quote of field 1"))
      << r->first_skip.message();
}

TEST(CsvSource, UnterminatedQuoteNamesTheLine) {
  TempDir dir;
  for (OnBadRow policy : {OnBadRow::kFail, OnBadRow::kSkip}) {
    SourceOptions o;
    o.on_bad_row = policy;
    auto r = read_csv(dir, "n,full_text\n1,fine\n2,\"never\nclosed,3\n4,x\n", o);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_TRUE(contains(r.status(), "in.csv: line 3: the quoted field opened on line 3 is not closed"))
        << r.status().message();
  }
  auto header = read_csv(dir, "\"full_text\n");
  ASSERT_FALSE(header.ok());
  EXPECT_TRUE(contains(header.status(), "line 1:")) << header.status().message();
}

TEST(CsvSource, InvalidUtf8IsABadRow) {
  TempDir dir;
  auto fail = read_csv(dir, "full_text\nok\nbad \xff\xfe\n");
  ASSERT_FALSE(fail.ok());
  EXPECT_TRUE(contains(fail.status(), "line 3: invalid UTF-8")) << fail.status().message();
  auto skip = read_csv(dir, "full_text,other\nok,\xff\nbad \xc3\x28,x\nfine,y\n", test::skip_options());
  ASSERT_TRUE(skip.ok());
  // Only the text column is checked.
  EXPECT_EQ(skip->rows.texts, (std::vector<std::string>{"ok", "fine"}));
  EXPECT_EQ(skip->skipped, 1);
}

TEST(CsvSource, ValuesAsJson) {
  TempDir dir;
  auto r = read_csv(dir, "full_text\n\"a \"\"q\"\"\nb\"\n\"\"\n\n12\n", test::json_options());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->rows.texts, (std::vector<std::string>{"\"a \\\"q\\\"\\nb\"", "\"\"", "\"12\""}));
  EXPECT_EQ(r->rows.is_null, (std::vector<uint8_t>{0, 0, 0}));
  auto nulls = read_csv(dir, "full_text,x\n,1\n", test::json_options());
  ASSERT_TRUE(nulls.ok());
  EXPECT_EQ(nulls->rows.is_null, (std::vector<uint8_t>{1}));
  EXPECT_EQ(nulls->rows.texts, (std::vector<std::string>{""}));
}

TEST(CsvSource, ManyRowsInSmallBatches) {
  TempDir dir;
  std::string csv = "n,full_text\n";
  for (int i = 0; i < 1000; ++i) csv += std::to_string(i) + ",\"row " + std::to_string(i) + "\"\n";
  auto r = read_csv(dir, csv, {}, 7);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->rows.size(), 1000u);
  EXPECT_EQ(r->rows.texts[999], "row 999");
  EXPECT_EQ(r->rows.lines[999], 1001);
}

// Random byte edits of a valid file: each read ends in rows or an error,
// never a crash or a hang (the suite runs under ASan in CI).
TEST(CsvSource, RandomMutationsNeverCrash) {
  const std::string base =
      "\xEF\xBB\xBF"
      "id,full_text,other\r\n1,\"a, \"\"b\"\"\nc\",x\r\n2,plain,\"\"\n3,,\"q\"\n4,caf\xc3\xa9,z";
  const char alphabet[] = {'"', ',', '\n', '\r', 'a', '\xff', '\xc3', ' ', '\0'};
  expect_mutations_never_crash(base, std::string_view(alphabet, sizeof(alphabet)), InputFormat::kCsv, ".csv",
                               5, 1234);
}

}  // namespace
}  // namespace infercost::io
