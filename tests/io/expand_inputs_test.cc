#include <gtest/gtest.h>
#include <sys/stat.h>

#include "io/row_source.h"
#include "test_utils.h"

namespace infercost::io {
namespace {

using infercost::testing::TempDir;

TEST(ExpandInputs, FolderSortedHiddenAndUnknownSkipped) {
  TempDir dir;
  ::mkdir(dir.file("data").c_str(), 0755);
  for (const char* name :
       {"data/b.csv", "data/a.jsonl", "data/C.PARQUET", "data/.hidden.jsonl", "data/notes.txt", "data/x.json",
        "data/y.ndjson", "data/z.pq", "data/w.parq", "data/README"}) {
    dir.write(name, "");
  }
  ::mkdir(dir.file("data/sub.jsonl").c_str(), 0755);  // a folder, not a file
  auto files = expand_inputs({dir.file("data")});
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  const std::string d = dir.file("data") + "/";
  EXPECT_EQ(*files, (std::vector<std::string>{d + "C.PARQUET", d + "a.jsonl", d + "b.csv", d + "w.parq",
                                              d + "x.json", d + "y.ndjson", d + "z.pq"}));
  // A trailing slash does not double up.
  auto slash = expand_inputs({dir.file("data") + "/"});
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ(*slash, *files);
}

TEST(ExpandInputs, GlobMatchesSorted) {
  TempDir dir;
  for (const char* name : {"p-2.jsonl", "p-10.jsonl", "p-1.jsonl", "q-1.jsonl", ".p-0.jsonl", "p-3.log"}) {
    dir.write(name, "");
  }
  auto files = expand_inputs({dir.file("p-*.jsonl")});
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  EXPECT_EQ(*files,
            (std::vector<std::string>{dir.file("p-1.jsonl"), dir.file("p-10.jsonl"), dir.file("p-2.jsonl")}));
  auto q = expand_inputs({dir.file("[pq]-?.*")});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, (std::vector<std::string>{dir.file("p-1.jsonl"), dir.file("p-2.jsonl"), dir.file("p-3.log"),
                                          dir.file("q-1.jsonl")}));
  auto none = expand_inputs({dir.file("nothing-*.csv")});
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("nothing-*.csv: no files match"), std::string::npos);
}

TEST(ExpandInputs, LiteralPathWithGlobCharactersIsAFile) {
  TempDir dir;
  dir.write("odd[1].jsonl", "");
  dir.write("odd1.jsonl", "");
  auto files = expand_inputs({dir.file("odd[1].jsonl")});
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(*files, (std::vector<std::string>{dir.file("odd[1].jsonl")}));
}

TEST(ExpandInputs, MissingPathsAndEmptyFolders) {
  TempDir dir;
  auto missing = expand_inputs({dir.file("absent.jsonl")});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("absent.jsonl: no such file or folder"), std::string::npos);
  ::mkdir(dir.file("empty").c_str(), 0755);
  dir.write("empty/readme.md", "");
  auto empty = expand_inputs({dir.file("empty")});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kNotFound);
  EXPECT_NE(empty.status().message().find("the folder has no input files"), std::string::npos);
}

TEST(ExpandInputs, MixedInputsKeepTheirOrder) {
  TempDir dir;
  ::mkdir(dir.file("f").c_str(), 0755);
  dir.write("f/2.csv", "");
  dir.write("f/1.csv", "");
  dir.write("z.jsonl", "");
  dir.write("g-b.json", "");
  dir.write("g-a.json", "");
  dir.write("explicit.txt", "");  // named directly: kept whatever its extension
  auto files =
      expand_inputs({dir.file("z.jsonl"), dir.file("f"), dir.file("g-*.json"), dir.file("explicit.txt")});
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  EXPECT_EQ(*files,
            (std::vector<std::string>{dir.file("z.jsonl"), dir.file("f/1.csv"), dir.file("f/2.csv"),
                                      dir.file("g-a.json"), dir.file("g-b.json"), dir.file("explicit.txt")}));
  auto one_missing = expand_inputs({dir.file("z.jsonl"), dir.file("gone.csv")});
  ASSERT_FALSE(one_missing.ok());
  EXPECT_NE(one_missing.status().message().find("gone.csv"), std::string::npos);
}

}  // namespace
}  // namespace infercost::io
