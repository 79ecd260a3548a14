#include "core/json_text.h"

namespace infercost {

namespace {

template <bool kEscapeHigh>
void append_quoted(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t run = 0;  // start of the pending run of bytes that need no escaping
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && (!kEscapeHigh || c < 0x80)) continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
  }
  out.append(text.data() + run, text.size() - run);
  out += '"';
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  append_quoted<false>(out, text);
}
void append_json_bytes(std::string& out, std::string_view bytes) {
  append_quoted<true>(out, bytes);
}

Status check_json_nesting(std::string_view text, const std::string& origin, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) {
        return corruption(origin + ": byte " + std::to_string(i) + ": JSON nests deeper than " +
                          std::to_string(max_depth) + " levels of objects and arrays");
      }
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return Status();
}

}  // namespace infercost
