#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "io/row_source.h"

namespace infercost::io {

namespace {

constexpr const char* kKnownExtensions[] = {".jsonl", ".ndjson", ".json", ".csv", ".parquet", ".parq", ".pq"};

bool has_known_extension(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view ext : kKnownExtensions) {
    if (lower.size() > ext.size() && lower.compare(lower.size() - ext.size(), ext.size(), ext) == 0)
      return true;
  }
  return false;
}

bool is_regular_file(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status expand_folder(const std::string& dir, std::vector<std::string>& out) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return io_error(dir + ": cannot list the folder: " + std::strerror(errno));
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || !has_known_extension(name)) continue;
    std::string path = dir.back() == '/' ? dir + name : dir + "/" + name;
    // Through symbolic links: a link to a data file counts as the file.
    if (is_regular_file(path)) names.push_back(std::move(path));
  }
  ::closedir(d);
  if (names.empty()) {
    return not_found(dir +
                     ": the folder has no input files (.jsonl, .ndjson, .json, .csv, .parquet, .parq, .pq)");
  }
  std::sort(names.begin(), names.end());
  out.insert(out.end(), names.begin(), names.end());
  return Status();
}

Status expand_glob(const std::string& pattern, std::vector<std::string>& out) {
  glob_t g;
  std::memset(&g, 0, sizeof(g));
  int rc = ::glob(pattern.c_str(), GLOB_ERR | GLOB_NOSORT, nullptr, &g);
  std::vector<std::string> matches;
  if (rc == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      // A pattern names files; folders it happens to match are not descended.
      if (is_regular_file(g.gl_pathv[i])) matches.emplace_back(g.gl_pathv[i]);
    }
  }
  ::globfree(&g);
  if (rc == GLOB_ABORTED)
    return io_error(pattern + ": a folder could not be read while matching the pattern");
  if (rc == GLOB_NOSPACE) return resource_exhausted(pattern + ": out of memory while matching the pattern");
  if (matches.empty()) return not_found(pattern + ": no files match the pattern");
  std::sort(matches.begin(), matches.end());
  out.insert(out.end(), matches.begin(), matches.end());
  return Status();
}

}  // namespace

Result<std::vector<std::string>> expand_inputs(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  for (const std::string& arg : args) {
    if (arg.empty()) return invalid_argument("an input path is empty");
    struct stat st;
    if (::stat(arg.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) {
        INFERCOST_RETURN_IF_ERROR(expand_folder(arg, files));
      } else {
        files.push_back(arg);
      }
      continue;
    }
    if (arg.find_first_of("*?[") != std::string::npos) {
      INFERCOST_RETURN_IF_ERROR(expand_glob(arg, files));
      continue;
    }
    int err = errno;
    if (err == ENOENT || err == ENOTDIR) return not_found(arg + ": no such file or folder");
    return io_error(arg + ": " + std::strerror(err));
  }
  return files;
}

Result<int64_t> read_inputs(const std::vector<std::string>& inputs, const std::string& format_flag,
                            const SourceOptions& options, size_t first_batch_rows, const RowVisitor& visit) {
  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> paths, expand_inputs(inputs));
  int64_t skipped = 0;
  size_t want = first_batch_rows;
  for (const std::string& path : paths) {
    if (want == 0) break;
    INFERCOST_ASSIGN_OR_RETURN(InputFormat format, input_format_for(path, format_flag));
    INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<RowSource> source, open_row_source(path, format, options));
    RowBatch batch;
    while (want > 0) {
      batch.clear();
      INFERCOST_ASSIGN_OR_RETURN(size_t got, source->next(want, batch));
      if (got == 0) break;
      want = visit(path, *source, batch);
    }
    skipped += source->rows_skipped();
  }
  return skipped;
}

}  // namespace infercost::io
