#include <utf8proc.h>

#include <string>

#include "core/file.h"
#include "text/tokenizer.h"

namespace infercost::text {

Result<Vocab> Vocab::load_txt(const std::string& path) {
  INFERCOST_ASSIGN_OR_RETURN(std::string data, read_file(path));
  std::vector<std::string> tokens;
  size_t pos = 0;
  // A final "\n" ends the last line rather than starting an empty token.
  while (pos < data.size()) {
    size_t end = data.find('\n', pos);
    const size_t next = end == std::string::npos ? data.size() : end + 1;
    if (end == std::string::npos) end = data.size();
    size_t len = end - pos;
    if (len > 0 && data[pos + len - 1] == '\r') --len;
    std::string token = data.substr(pos, len);
    if (utf8proc_decompose(reinterpret_cast<const utf8proc_uint8_t*>(token.data()),
                           static_cast<utf8proc_ssize_t>(token.size()), nullptr, 0, UTF8PROC_STABLE) < 0) {
      return corruption(path + ": line " + std::to_string(tokens.size() + 1) + ": token is not valid UTF-8");
    }
    tokens.push_back(std::move(token));
    pos = next;
  }
  if (tokens.empty()) return corruption(path + ": vocabulary is empty");
  return from_tokens(std::move(tokens));
}

Vocab Vocab::from_tokens(std::vector<std::string> tokens) {
  Vocab v;
  v.tokens_ = std::move(tokens);
  v.ids_.reserve(v.tokens_.size());
  for (size_t i = 0; i < v.tokens_.size(); ++i) v.ids_[v.tokens_[i]] = static_cast<int32_t>(i);
  return v;
}

int32_t Vocab::find(std::string_view token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace infercost::text
