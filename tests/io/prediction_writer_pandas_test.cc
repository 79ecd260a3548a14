// Prediction files written by us, read back by pandas and pyarrow: the CSV
// and JSON-lines outputs must come back with the same texts, nulls and
// probabilities. Runs INFERCOST_PYTHON; skipped when it is absent.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "core/json_text.h"
#include "io/prediction_writer.h"
#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::TempDir;

// The read_csv arguments documented in prediction_writer.h, checked here.
constexpr const char* kCheckScript = R"PY(
import json, sys
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

csv_path, jsonl_path, expected_path = sys.argv[1:4]
exp = json.load(open(expected_path, encoding="utf-8"))
names = exp["names"]
texts = exp["texts"]
probs = np.array(exp["probs"], dtype=np.float32)
labels = exp["labels"]
failures = []

def check(what, ok):
    if not ok:
        failures.append(what)

def check_frame(kind, df, null_text):
    check(kind + ": columns " + str(list(df.columns)), list(df.columns) == ["text"] + names + ["label"])
    check(kind + ": row count", len(df) == len(texts))
    for i, t in enumerate(texts):
        got = df["text"].iloc[i]
        if t is None:
            check(kind + f": row {i} text {got!r} for null", null_text(got))
            for n in names:
                check(kind + f": row {i} {n} not null", pd.isna(df[n].iloc[i]))
            check(kind + f": row {i} label not null", pd.isna(df["label"].iloc[i]))
            continue
        check(kind + f": row {i} text {got!r} != {t!r}", isinstance(got, str) and got == t)
        for j, n in enumerate(names):
            v = df[n].iloc[i]
            check(kind + f": row {i} {n} {v!r} != {probs[i][j]!r}", np.float32(v) == probs[i][j])
        check(kind + f": row {i} label", df["label"].iloc[i] == labels[i])

# pandas.read_csv: keep_default_na=False keeps texts such as "NA" or "null";
# empty probability and label fields are the null rows' nulls; dtype=str
# keeps texts such as "123". pandas cannot tell "" from an empty field, so a
# null text reads as "".
csv_df = pd.read_csv(csv_path, keep_default_na=False,
                     na_values={**{n: [""] for n in names}, "label": [""]},
                     dtype={"text": str, "label": str})
check_frame("pandas csv", csv_df, lambda v: v == "")

# pyarrow.csv tells quoted "" from an empty field: nulls exactly.
table = pacsv.read_csv(csv_path,
                       parse_options=pacsv.ParseOptions(newlines_in_values=True),
                       convert_options=pacsv.ConvertOptions(
                           null_values=[""], strings_can_be_null=True, quoted_strings_can_be_null=False,
                           column_types={"text": pa.string(), "label": pa.string()}))
check_frame("pyarrow csv", table.to_pandas(), lambda v: v is None or pd.isna(v))

json_df = pd.read_json(jsonl_path, lines=True, dtype=False)
check_frame("pandas jsonl", json_df, lambda v: v is None or pd.isna(v))

if failures:
    print("\n".join(failures[:40]))
    sys.exit(1)
print("ok", len(texts), "rows")
)PY";

int run(const std::string& command, std::string& output) {
  std::FILE* p = ::popen(command.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) output.append(buf, n);
  return ::pclose(p);
}

TEST(PredictionWriterPandas, CsvAndJsonLinesReadBackIdentically) {
  const std::string python = INFERCOST_PYTHON;
  if (python.empty() || !std::filesystem::exists(python)) {
    GTEST_SKIP() << "INFERCOST_PYTHON (" << python << ") is absent; run `make pyenv`";
  }
  const std::vector<std::string> labels = {"NEGATIVE", "Positive", "neutral"};
  const std::vector<std::string> names = {"negative", "positive", "neutral"};
  std::vector<std::string> texts = {"plain",
                                    "with, comma",
                                    "say \"hi\"",
                                    "\"",
                                    ",",
                                    "two\nlines",
                                    "crlf\r\ninside",
                                    "lone\rcarriage return",
                                    "  leading and trailing  ",
                                    " ",
                                    "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe6\x97\xa5\xe6\x9c\xac",
                                    "",
                                    "",  // null
                                    "NA",
                                    "null",
                                    "NaN",
                                    "123",
                                    "0.5",
                                    "#not a comment",
                                    "'single'",
                                    "tab\there",
                                    "back\\slash",
                                    "trailing comma,"};
  std::vector<uint8_t> is_null(texts.size(), 0);
  is_null[12] = 1;
  std::vector<float> probs;
  for (size_t i = 0; i < texts.size(); ++i) {
    float a = 1.0f / static_cast<float>(i + 3), b = 1e-8f * static_cast<float>(i), c = 1.0f - a - b;
    probs.insert(probs.end(), {a, c, b});
    if (i % 3 == 1) std::swap(probs[probs.size() - 1], probs[probs.size() - 2]);
  }

  TempDir dir;
  PredictionColumns columns;
  columns.labels = labels;
  for (const std::string& name : {std::string("out.csv"), std::string("out.jsonl")}) {
    auto format = output_format_for(dir.file(name), "");
    ASSERT_TRUE(format.ok());
    auto writer = create_prediction_writer(dir.file(name), *format, columns);
    ASSERT_TRUE(writer.ok()) << writer.status().to_string();
    // Two batches, to cross a write() boundary.
    std::vector<std::string> t1(texts.begin(), texts.begin() + 10), t2(texts.begin() + 10, texts.end());
    std::vector<uint8_t> n1(is_null.begin(), is_null.begin() + 10), n2(is_null.begin() + 10, is_null.end());
    std::vector<float> p1(probs.begin(), probs.begin() + 30), p2(probs.begin() + 30, probs.end());
    ASSERT_TRUE((*writer)->write(t1, n1, p1).ok());
    ASSERT_TRUE((*writer)->write(t2, n2, p2).ok());
    ASSERT_TRUE((*writer)->close().ok());
  }

  std::string expected = "{\"names\":[\"negative\",\"positive\",\"neutral\"],\"texts\":[";
  std::string probs_json = "],\"probs\":[";
  std::string labels_json = "],\"labels\":[";
  for (size_t i = 0; i < texts.size(); ++i) {
    const char* sep = i ? "," : "";
    expected += sep;
    if (is_null[i]) {
      expected += "null";
    } else {
      append_json_string(expected, texts[i]);
    }
    const float* p = probs.data() + 3 * i;
    probs_json += fmt::format("{}[{:.9g},{:.9g},{:.9g}]", sep, p[0], p[1], p[2]);
    size_t best = static_cast<size_t>(std::max_element(p, p + 3) - p);
    labels_json += sep;
    append_json_string(labels_json, labels[best]);
  }
  expected += probs_json + labels_json + "]}";
  dir.write("expected.json", expected);
  dir.write("check.py", kCheckScript);

  std::string output;
  int rc = run(python + " " + dir.file("check.py") + " " + dir.file("out.csv") + " " + dir.file("out.jsonl") +
                   " " + dir.file("expected.json") + " 2>&1",
               output);
  EXPECT_EQ(rc, 0) << output;
  EXPECT_NE(output.find("ok 23 rows"), std::string::npos) << output;
}

}  // namespace
}  // namespace infercost::io
