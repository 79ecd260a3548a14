#include "io/whole_file.h"

#include "core/file.h"

namespace infercost::io {

Status write_whole_file(const std::string& path, std::string_view text) {
  INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile out, AtomicOutputFile::create(path));
  INFERCOST_RETURN_IF_ERROR(out.write(text));
  return out.commit();
}

}  // namespace infercost::io
