#include "run/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/file.h"
#include "core/json_text.h"
#include "core/sha256.h"
#include "core/test_point.h"
#include "core/time_text.h"
#include "engine/settings.h"

namespace infercost::run {

namespace {

using Json = nlohmann::ordered_json;

constexpr uint64_t kEdgeBytes = 64 << 10;

constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

std::string base64_encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v =
        (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kBase64[(v >> s) & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) v |= uint32_t(uint8_t(in[i + 1])) << 8;
    out += kBase64[(v >> 18) & 63];
    out += kBase64[(v >> 12) & 63];
    out += i + 1 < in.size() ? kBase64[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// False on anything but canonical padded base64.
bool base64_decode(std::string_view in, std::string& out) {
  out.clear();
  if (in.size() % 4 != 0) return false;
  auto value = [](char c) -> int {
    const char* p = std::strchr(kBase64, c);
    return c != '\0' && p ? static_cast<int>(p - kBase64) : -1;
  };
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      if (in[i + k] == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad > 0 || (v[k] = value(in[i + k])) < 0) {
        return false;
      }
    }
    const uint32_t bits =
        (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | uint32_t(v[3]);
    out += static_cast<char>((bits >> 16) & 0xff);
    if (pad < 2) out += static_cast<char>((bits >> 8) & 0xff);
    if (pad < 1) out += static_cast<char>(bits & 0xff);
  }
  return true;
}

// A JSON object's field, typed; errors name the origin and the field's path.
class Reader {
 public:
  Reader(const std::string& origin, const char* kind) : origin_(origin), kind_(kind) {}
  Status error(const std::string& where, const std::string& what) const {
    return corruption(origin_ + ": not a valid " + kind_ + ": " + (where.empty() ? "" : "'" + where + "' ") +
                      what);
  }
  Result<const Json*> field(const Json& obj, const std::string& where, const char* key) const {
    if (!obj.is_object()) return error(where, "is not an object");
    auto it = obj.find(key);
    if (it == obj.end()) return error(where.empty() ? key : where + "." + key, "is missing");
    return &*it;
  }
  template <typename T>
  Status get(const Json& obj, const std::string& where, const char* key, T& out) const {
    INFERCOST_ASSIGN_OR_RETURN(const Json* v, field(obj, where, key));
    const std::string path = where.empty() ? key : where + "." + key;
    if constexpr (std::is_same_v<T, std::string>) {
      if (!v->is_string()) return error(path, "is not a string");
    } else if constexpr (std::is_same_v<T, bool>) {
      if (!v->is_boolean()) return error(path, "is not true or false");
    } else if constexpr (std::is_unsigned_v<T>) {
      if (!v->is_number_unsigned()) return error(path, "is not a whole number of at least 0");
    } else {
      if (!v->is_number_integer()) return error(path, "is not a whole number");
    }
    out = v->get<T>();
    return Status();
  }

 private:
  const std::string& origin_;
  std::string kind_;
};

Status hash_head_tail(const std::string& path, uint64_t size, std::string& out) {
  Result<MappedFile> file = MappedFile::open(path);
  if (!file.ok()) return file.status();
  const std::string_view all = file->view();
  Sha256 h;
  h.update(std::to_string(size) + ";");
  if (all.size() <= 2 * kEdgeBytes) {
    h.update(all);
  } else {
    h.update(all.substr(0, kEdgeBytes));
    h.update(all.substr(all.size() - kEdgeBytes));
  }
  out = h.hex_digest();
  return Status();
}

Status stat_file(const std::string& path, uint64_t& size, int64_t& mtime_ns) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const std::string why = path + ": cannot stat: " + std::strerror(errno);
    return errno == ENOENT ? not_found(why) : io_error(why);
  }
  size = static_cast<uint64_t>(st.st_size);
  mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  return Status();
}

Json files_json(const std::vector<JobInput>& files) {
  Json out = Json::array();
  for (const JobInput& in : files) {
    out.push_back({{"path", in.path},
                   {"format", in.format},
                   {"size", in.size},
                   {"mtime_ns", in.mtime_ns},
                   {"head_tail_sha256", in.head_tail_sha256}});
  }
  return out;
}

Json job_json(const JobIdentity& identity) {
  Json job;
  job["inputs"] = files_json(identity.inputs);
  job["model"] = {{"dir", identity.model_dir},
                  {"files_sha256", identity.model_files_sha256},
                  {"weights_size", identity.weights_size},
                  {"weights_mtime_ns", identity.weights_mtime_ns},
                  {"weights_head_tail_sha256", identity.weights_head_tail_sha256}};
  Json options = Json::object();
  for (const auto& [k, v] : identity.options) options[k] = v;
  job["options"] = std::move(options);
  return job;
}

Status parse_files(const Reader& r, const Json& parent, const std::string& where, const char* key,
                   std::vector<JobInput>& out) {
  INFERCOST_ASSIGN_OR_RETURN(const Json* files, r.field(parent, where, key));
  const std::string path = where.empty() ? key : where + "." + key;
  if (!files->is_array()) return r.error(path, "is not a list");
  for (size_t i = 0; i < files->size(); ++i) {
    const std::string at = fmt::format("{}[{}]", path, i);
    JobInput in;
    INFERCOST_RETURN_IF_ERROR(r.get((*files)[i], at, "path", in.path));
    INFERCOST_RETURN_IF_ERROR(r.get((*files)[i], at, "format", in.format));
    INFERCOST_RETURN_IF_ERROR(r.get((*files)[i], at, "size", in.size));
    INFERCOST_RETURN_IF_ERROR(r.get((*files)[i], at, "mtime_ns", in.mtime_ns));
    INFERCOST_RETURN_IF_ERROR(r.get((*files)[i], at, "head_tail_sha256", in.head_tail_sha256));
    out.push_back(std::move(in));
  }
  return Status();
}

Status parse_job(const Reader& r, const Json& j, JobIdentity& identity) {
  INFERCOST_ASSIGN_OR_RETURN(const Json* job, r.field(j, "", "job"));
  INFERCOST_RETURN_IF_ERROR(parse_files(r, *job, "job", "inputs", identity.inputs));
  INFERCOST_ASSIGN_OR_RETURN(const Json* model, r.field(*job, "job", "model"));
  INFERCOST_RETURN_IF_ERROR(r.get(*model, "job.model", "dir", identity.model_dir));
  INFERCOST_RETURN_IF_ERROR(r.get(*model, "job.model", "files_sha256", identity.model_files_sha256));
  INFERCOST_RETURN_IF_ERROR(r.get(*model, "job.model", "weights_size", identity.weights_size));
  INFERCOST_RETURN_IF_ERROR(r.get(*model, "job.model", "weights_mtime_ns", identity.weights_mtime_ns));
  INFERCOST_RETURN_IF_ERROR(
      r.get(*model, "job.model", "weights_head_tail_sha256", identity.weights_head_tail_sha256));
  INFERCOST_ASSIGN_OR_RETURN(const Json* options, r.field(*job, "job", "options"));
  if (!options->is_object()) return r.error("job.options", "is not an object");
  for (auto it = options->begin(); it != options->end(); ++it) {
    if (!it->is_string()) return r.error("job.options." + it.key(), "is not a string");
    identity.options.emplace_back(it.key(), it->get<std::string>());
  }
  return Status();
}

// The head of a checkpoint's or a record's JSON, as parse_job_document reads
// it: the schema, written_by, the time field `when` (now where `time` is
// empty) and the job.
Json job_document(const char* schema, const std::string& written_by, const char* when,
                  const std::string& time, const JobIdentity& job) {
  Json j;
  j["schema"] = schema;
  j["written_by"] = written_by;
  j[when] = time.empty() ? utc_now_iso8601() : time;
  j["job"] = job_json(job);
  return j;
}

// A checkpoint's or a record's JSON, its nesting bounded before parsing:
// the schema (`ours`' major version), written_by, the time field `when` and
// the job; kCorruption through `r` for anything else.
Result<Json> parse_job_document(const Reader& r, std::string_view text, const std::string& origin,
                                const std::string& ours, const char* when, std::string& written_by,
                                std::string& time, JobIdentity& job) {
  INFERCOST_RETURN_IF_ERROR(check_json_nesting(text, origin));
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) return r.error("", "not JSON (a truncated or garbled file)");
  std::string schema;
  INFERCOST_RETURN_IF_ERROR(r.get(j, "", "schema", schema));
  const std::string major = ours.substr(0, ours.find('/') + 1) + ours.substr(ours.find('/') + 1, 1);
  if (schema.rfind(major, 0) != 0 || (schema.size() > major.size() && schema[major.size()] != '.')) {
    return r.error("schema", "is '" + schema + "'; this infercost reads " + ours);
  }
  INFERCOST_RETURN_IF_ERROR(r.get(j, "", "written_by", written_by));
  INFERCOST_RETURN_IF_ERROR(r.get(j, "", when, time));
  INFERCOST_RETURN_IF_ERROR(parse_job(r, j, job));
  return j;
}

// The file at `path` as `parse` reads it, or none where there is no file;
// a file that cannot be read or parsed is kInvalidArgument.
template <typename T>
Result<std::optional<T>> read_if_present(const std::string& path,
                                         Result<T> (*parse)(std::string_view, const std::string&)) {
  if (!path_exists(path)) return std::optional<T>();
  Result<std::string> text = read_file(path);
  if (!text.ok()) return invalid_argument(text.status().message());
  Result<T> parsed = parse(*text, path);
  if (!parsed.ok()) return invalid_argument(parsed.status().message());
  return std::optional<T>(std::move(*parsed));
}

}  // namespace

std::string checkpoint_json(const Checkpoint& c) {
  Json j = job_document(kCheckpointSchema, c.written_by, "updated", c.updated, c.job);
  const JobProgress& p = c.progress;
  j["progress"] = {
      {"files_done", p.files_done},
      {"position", {{"rows", p.position.rows}, {"offset", p.position.offset}, {"line", p.position.line}}},
      {"rows_done", p.rows_done},
      {"rows_null", p.rows_null},
      {"rows_skipped", p.rows_skipped},
      {"first_skip_reason", p.first_skip_reason},
      {"precision", p.precision},
      {"output",
       {{"bytes", p.output.bytes},
        {"rows", p.output.rows},
        {"parquet_footer_base64", base64_encode(p.output.parquet_footer)}}}};
  return j.dump(1) + "\n";
}

Result<Checkpoint> parse_checkpoint(std::string_view text, const std::string& origin) {
  Reader r(origin, "checkpoint");
  Checkpoint c;
  INFERCOST_ASSIGN_OR_RETURN(Json j, parse_job_document(r, text, origin, kCheckpointSchema, "updated",
                                                        c.written_by, c.updated, c.job));
  INFERCOST_ASSIGN_OR_RETURN(const Json* progress, r.field(j, "", "progress"));
  JobProgress& p = c.progress;
  INFERCOST_RETURN_IF_ERROR(r.get(*progress, "progress", "files_done", p.files_done));
  INFERCOST_ASSIGN_OR_RETURN(const Json* position, r.field(*progress, "progress", "position"));
  INFERCOST_RETURN_IF_ERROR(r.get(*position, "progress.position", "rows", p.position.rows));
  INFERCOST_RETURN_IF_ERROR(r.get(*position, "progress.position", "offset", p.position.offset));
  INFERCOST_RETURN_IF_ERROR(r.get(*position, "progress.position", "line", p.position.line));
  INFERCOST_RETURN_IF_ERROR(r.get(*progress, "progress", "rows_done", p.rows_done));
  INFERCOST_RETURN_IF_ERROR(r.get(*progress, "progress", "rows_null", p.rows_null));
  INFERCOST_RETURN_IF_ERROR(r.get(*progress, "progress", "rows_skipped", p.rows_skipped));
  INFERCOST_RETURN_IF_ERROR(r.get(*progress, "progress", "first_skip_reason", p.first_skip_reason));
  INFERCOST_RETURN_IF_ERROR(r.get(*progress, "progress", "precision", p.precision));
  INFERCOST_ASSIGN_OR_RETURN(const Json* output, r.field(*progress, "progress", "output"));
  INFERCOST_RETURN_IF_ERROR(r.get(*output, "progress.output", "bytes", p.output.bytes));
  INFERCOST_RETURN_IF_ERROR(r.get(*output, "progress.output", "rows", p.output.rows));
  std::string footer;
  INFERCOST_RETURN_IF_ERROR(r.get(*output, "progress.output", "parquet_footer_base64", footer));
  if (!base64_decode(footer, p.output.parquet_footer)) {
    return r.error("progress.output.parquet_footer_base64", "is not base64");
  }
  if (p.files_done < 0 || p.files_done > static_cast<int64_t>(c.job.inputs.size())) {
    return r.error("progress.files_done",
                   fmt::format("is {}, but the job has {} inputs", p.files_done, c.job.inputs.size()));
  }
  if (p.rows_done < 0 || p.position.rows < 0 || p.position.line < 0 || p.output.rows < 0) {
    return r.error("progress", "holds a negative count");
  }
  return c;
}

std::string identity_difference(const JobIdentity& then, const JobIdentity& now, std::string_view then_is) {
  const bool record = then_is == "record";
  const std::string then_job = record ? "the finished job" : "the checkpoint's job";
  const std::string then_run = record ? "the finished job" : "the checkpoint's run";
  auto command = [](const JobIdentity& j) {
    for (const auto& [key, value] : j.options) {
      if (key == kJobCommandOption) return value;
    }
    return std::string("run");
  };
  if (command(then) != command(now)) {
    return fmt::format("{} is `infercost {}`'s, this is `infercost {}`",
                       record ? "the finished job" : "the checkpoint", command(then), command(now));
  }
  if (then.inputs.size() != now.inputs.size()) {
    return fmt::format("the inputs are {} files now, {} had {}", now.inputs.size(), then_job,
                       then.inputs.size());
  }
  for (size_t i = 0; i < now.inputs.size(); ++i) {
    const JobInput &a = then.inputs[i], &b = now.inputs[i];
    const std::string which = fmt::format("input {} ({})", i + 1, b.path);
    if (a.path != b.path) return fmt::format("input {} is {} now, it was {}", i + 1, b.path, a.path);
    if (a.format != b.format)
      return fmt::format("{}: read as {} now, it was read as {}", which, b.format, a.format);
    if (a.size != b.size) return fmt::format("{}: its size changed ({} -> {} bytes)", which, a.size, b.size);
    if (a.head_tail_sha256 != b.head_tail_sha256) return which + ": its contents changed";
    if (a.mtime_ns != b.mtime_ns) return which + ": it was modified since (its mtime changed)";
  }
  if (then.model_dir != now.model_dir)
    return fmt::format("{} is {} now, it was {}", setting_ref("model_dir"), now.model_dir, then.model_dir);
  if (then.model_files_sha256 != now.model_files_sha256) {
    return "the model's config or tokenizer files changed (" + now.model_dir + ")";
  }
  if (then.weights_size != now.weights_size ||
      then.weights_head_tail_sha256 != now.weights_head_tail_sha256 ||
      then.weights_mtime_ns != now.weights_mtime_ns) {
    return "the model's weights changed (" + now.model_dir + ")";
  }
  for (const auto& [key, value] : now.options) {
    auto it = std::find_if(then.options.begin(), then.options.end(),
                           [&](const auto& kv) { return kv.first == key; });
    const std::string before = it == then.options.end() ? "(not set)" : it->second;
    if (before != value) {
      return fmt::format("{}: '{}' now, {} used '{}'", key, value, then_run, before);
    }
  }
  for (const auto& [key, value] : then.options) {
    auto it =
        std::find_if(now.options.begin(), now.options.end(), [&](const auto& kv) { return kv.first == key; });
    if (it == now.options.end()) return fmt::format("{}: {} used '{}'", key, then_run, value);
  }
  return "";
}

Result<JobInput> describe_input(const std::string& path, const std::string& format) {
  JobInput in;
  in.path = path;
  in.format = format;
  INFERCOST_RETURN_IF_ERROR(stat_file(path, in.size, in.mtime_ns));
  INFERCOST_RETURN_IF_ERROR(hash_head_tail(path, in.size, in.head_tail_sha256));
  return in;
}

Status describe_model(const std::string& model_dir, JobIdentity& identity) {
  identity.model_dir = model_dir;
  Sha256 files;
  for (const char* name :
       {"config.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "merges.txt"}) {
    const std::string path = model_dir + "/" + name;
    if (!path_exists(path)) continue;
    INFERCOST_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
    files.update(std::string(name) + ":" + std::to_string(bytes.size()) + ";");
    files.update(bytes);
  }
  identity.model_files_sha256 = files.hex_digest();
  const std::string weights = model_dir + "/model.safetensors";
  INFERCOST_RETURN_IF_ERROR(stat_file(weights, identity.weights_size, identity.weights_mtime_ns));
  return hash_head_tail(weights, identity.weights_size, identity.weights_head_tail_sha256);
}

JobFiles JobFiles::for_output(const std::string& output, bool folder) {
  JobFiles f;
  if (folder) {
    std::string dir = output;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    f.checkpoint = dir + "/.infercost-checkpoint";
    f.lock = dir + "/.infercost-lock";
    f.record = dir + "/.infercost-job";
  } else {
    f.checkpoint = output + ".infercost-checkpoint";
    f.lock = output + ".infercost-lock";
    const std::filesystem::path p(output);
    std::string name(1, '.');
    name += p.filename().string();
    name += ".infercost-job";
    f.record = (p.parent_path() / name).string();
  }
  return f;
}

std::string JobFiles::partial_of(const std::string& output_file, bool in_folder) {
  if (!in_folder) return output_file + ".infercost-partial";
  // Hidden, so that readers of the folder (Spark, pyarrow datasets) skip it.
  const std::filesystem::path p(output_file);
  std::string name(1, '.');  // (not "." + std::string: GCC 12 warns falsely of an overlapping copy)
  name += p.filename().string();
  name += ".infercost-partial";
  return (p.parent_path() / name).string();
}

Result<std::optional<Checkpoint>> read_checkpoint(const std::string& path) {
  return read_if_present<Checkpoint>(path, parse_checkpoint);
}

Status write_checkpoint(const std::string& path, const Checkpoint& checkpoint) {
  INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile out, AtomicOutputFile::create(path));
  INFERCOST_RETURN_IF_ERROR(out.write(checkpoint_json(checkpoint)));
  INFERCOST_RETURN_IF_ERROR(out.flush());
  test_point("checkpoint-write");           // the new one written, not yet in place
  INFERCOST_RETURN_IF_ERROR(out.commit());  // fsyncs the file, renames it, fsyncs the folder
  test_point("checkpoint-saved");
  return Status();
}

Result<JobLock> JobLock::acquire(const std::string& lock_path, const std::string& output) {
  // The lock file may be removed by its holder between our open and our
  // flock: then we hold a lock on a file nobody else sees, and try again.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return io_error(lock_path + ": cannot create the job's lock file: " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char buf[32] = {0};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      if (err != EWOULDBLOCK) return io_error(lock_path + ": cannot lock: " + std::strerror(err));
      std::string pid = n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
      while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
      return invalid_argument(fmt::format(
          "{}: another infercost run (PID {}) is writing this output; wait for it to end, or stop it", output,
          pid));
    }
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev) {
      const std::string pid = std::to_string(::getpid()) + "\n";
      if (::ftruncate(fd, 0) != 0 ||
          ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
        // The PID is only for messages; the lock holds without it.
      }
      JobLock lock;
      lock.lock_ = Owned<LockFile>(LockFile{fd, lock_path});
      return lock;
    }
    ::close(fd);
  }
  return io_error(lock_path + ": cannot lock: the lock file keeps being replaced");
}

void JobLock::LockFile::release() {
  ::unlink(path.c_str());  // while still held: a waiter then retries on a new file
  ::close(fd);
}

std::string job_record_json(const JobRecord& record) {
  Json j = job_document(kJobRecordSchema, record.written_by, "finished", record.finished, record.job);
  const JobProgress& p = record.progress;
  j["rows"] = {{"done", p.rows_done}, {"null", p.rows_null}, {"skipped", p.rows_skipped}};
  j["precision"] = p.precision;
  j["outputs"] = files_json(record.outputs);
  return j.dump(1) + "\n";
}

Result<JobRecord> parse_job_record(std::string_view text, const std::string& origin) {
  Reader r(origin, "job record");
  JobRecord record;
  INFERCOST_ASSIGN_OR_RETURN(Json j, parse_job_document(r, text, origin, kJobRecordSchema, "finished",
                                                        record.written_by, record.finished, record.job));
  INFERCOST_ASSIGN_OR_RETURN(const Json* rows, r.field(j, "", "rows"));
  INFERCOST_RETURN_IF_ERROR(r.get(*rows, "rows", "done", record.progress.rows_done));
  INFERCOST_RETURN_IF_ERROR(r.get(*rows, "rows", "null", record.progress.rows_null));
  INFERCOST_RETURN_IF_ERROR(r.get(*rows, "rows", "skipped", record.progress.rows_skipped));
  INFERCOST_RETURN_IF_ERROR(r.get(j, "", "precision", record.progress.precision));
  INFERCOST_RETURN_IF_ERROR(parse_files(r, j, "", "outputs", record.outputs));
  return record;
}

Result<std::optional<JobRecord>> read_job_record(const std::string& path) {
  return read_if_present<JobRecord>(path, parse_job_record);
}

Status write_job_record(const std::string& path, const JobRecord& record) {
  INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile out, AtomicOutputFile::create(path));
  INFERCOST_RETURN_IF_ERROR(out.write(job_record_json(record)));
  return out.commit();
}

std::string output_difference(const JobInput& then) {
  Result<JobInput> now = describe_input(then.path, then.format);
  if (!now.ok()) {
    return now.status().code() == StatusCode::kNotFound ? "it is missing" : now.status().message();
  }
  if (now->size != then.size) return fmt::format("its size changed ({} -> {} bytes)", then.size, now->size);
  if (now->head_tail_sha256 != then.head_tail_sha256) return "its contents changed";
  if (now->mtime_ns != then.mtime_ns) return "it was modified (its mtime changed)";
  return "";
}

}  // namespace infercost::run
