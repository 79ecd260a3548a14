// Helpers shared by the test suites.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace infercost::testing {

// A fresh folder under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "infercost-test-XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    if (!made) std::abort();
    path_ = made;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `content` to `name`, creating its parent folders.
  std::string write(const std::string& name, const std::string& content) const {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(file(name)).parent_path(), ec);
    std::ofstream(file(name), std::ios::binary) << content;
    return file(name);
  }

 private:
  std::string path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A gtest-safe parameter name: "tiny-bert" -> "tiny_bert".
struct DashesToUnderscores {
  template <typename Info>
  std::string operator()(const Info& info) const {
    std::string s = info.param;
    for (char& c : s) {
      if (c == '-') c = '_';
    }
    return s;
  }
};

// Number of entries in a folder (to check that no temporary was left behind).
inline int count_entries(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace infercost::testing
