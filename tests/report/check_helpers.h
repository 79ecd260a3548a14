// Checks the report tests share: a strict little XML well-formedness checker
// (enough for our SVG: declaration, elements, attributes, text, entities,
// comments) and a PNG decoder (8-bit RGB/RGBA, non-interlaced) for
// screenshots.
#pragma once

#include <zlib.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace infercost::testing {

// "" when `xml` is well-formed, else what is wrong and where.
inline std::string xml_problem(const std::string& xml) {
  size_t i = 0;
  const size_t n = xml.size();
  auto at = [&](const char* s) { return xml.compare(i, std::char_traits<char>::length(s), s) == 0; };
  auto where = [&](const std::string& what) { return what + " at byte " + std::to_string(i); };
  auto name_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' || c == '.';
  };
  auto entity_ok = [&](size_t pos) {
    const size_t end = xml.find(';', pos);
    if (end == std::string::npos || end - pos > 10) return false;
    const std::string e = xml.substr(pos + 1, end - pos - 1);
    if (e == "amp" || e == "lt" || e == "gt" || e == "quot" || e == "apos") return true;
    if (e.size() > 1 && e[0] == '#') {
      const bool hex = e[1] == 'x';
      for (size_t k = hex ? 2 : 1; k < e.size(); ++k) {
        if (!(hex ? std::isxdigit(static_cast<unsigned char>(e[k]))
                  : std::isdigit(static_cast<unsigned char>(e[k]))))
          return false;
      }
      return e.size() > (hex ? 2u : 1u);
    }
    return false;
  };
  auto skip_ws = [&] {
    while (i < n && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
  };
  skip_ws();
  if (at("<?xml")) {
    const size_t end = xml.find("?>", i);
    if (end == std::string::npos) return where("unterminated XML declaration");
    i = end + 2;
  }
  std::vector<std::string> open;
  bool root_done = false;
  while (true) {
    if (open.empty()) skip_ws();
    if (i >= n) break;
    if (at("<!--")) {
      const size_t end = xml.find("-->", i);
      if (end == std::string::npos) return where("unterminated comment");
      i = end + 3;
      continue;
    }
    if (xml[i] == '<') {
      ++i;
      const bool closing = i < n && xml[i] == '/';
      if (closing) ++i;
      const size_t start = i;
      while (i < n && name_char(xml[i])) ++i;
      const std::string name = xml.substr(start, i - start);
      if (name.empty()) return where("tag without a name");
      if (closing) {
        skip_ws();
        if (i >= n || xml[i] != '>') return where("bad closing tag");
        ++i;
        if (open.empty() || open.back() != name) return where("closing </" + name + "> does not match");
        open.pop_back();
        if (open.empty()) root_done = true;
        continue;
      }
      if (open.empty() && root_done) return where("second root element");
      std::vector<std::string> attrs;
      while (true) {
        skip_ws();
        if (i >= n) return where("unterminated tag <" + name);
        if (xml[i] == '>' || at("/>")) break;
        const size_t a = i;
        while (i < n && name_char(xml[i])) ++i;
        const std::string attr = xml.substr(a, i - a);
        if (attr.empty()) return where("bad attribute in <" + name);
        for (const std::string& seen : attrs) {
          if (seen == attr) return where("duplicate attribute " + attr);
        }
        attrs.push_back(attr);
        skip_ws();
        if (i >= n || xml[i] != '=') return where("attribute without value: " + attr);
        ++i;
        skip_ws();
        if (i >= n || (xml[i] != '"' && xml[i] != '\'')) return where("unquoted attribute " + attr);
        const char q = xml[i++];
        while (i < n && xml[i] != q) {
          if (xml[i] == '<') return where("'<' in attribute " + attr);
          if (xml[i] == '&' && !entity_ok(i)) return where("bad entity in attribute " + attr);
          ++i;
        }
        if (i >= n) return where("unterminated attribute " + attr);
        ++i;
      }
      if (xml[i] == '/') {
        i += 2;
        if (open.empty()) root_done = true;
      } else {
        ++i;
        open.push_back(name);
      }
      continue;
    }
    if (open.empty()) return where("text outside the root element");
    if (xml[i] == '&' && !entity_ok(i)) return where("bad entity in text");
    if (xml[i] == '>') return where("raw '>' in text");
    ++i;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (!root_done) return "no root element";
  return "";
}

struct Image {
  int width = 0, height = 0;
  std::vector<uint32_t> rgb;  // 0xRRGGBB per pixel, row-major
};

// Decodes an 8-bit RGB or RGBA non-interlaced PNG (what Chromium writes).
// Returns "" or what went wrong.
inline std::string decode_png(const std::string& png, Image& out) {
  static const unsigned char kSig[8] = {0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a};
  if (png.size() < 8 || png.compare(0, 8, std::string(reinterpret_cast<const char*>(kSig), 8)) != 0) {
    return "not a PNG";
  }
  auto be32 = [&](size_t p) {
    return (uint32_t(uint8_t(png[p])) << 24) | (uint32_t(uint8_t(png[p + 1])) << 16) |
           (uint32_t(uint8_t(png[p + 2])) << 8) | uint32_t(uint8_t(png[p + 3]));
  };
  size_t p = 8;
  int depth = 0, color_type = -1, interlace = 0;
  std::string idat;
  while (p + 12 <= png.size()) {
    const uint32_t len = be32(p);
    const std::string type = png.substr(p + 4, 4);
    if (p + 12 + len > png.size()) return "truncated chunk " + type;
    const size_t data = p + 8;
    if (type == "IHDR") {
      out.width = int(be32(data));
      out.height = int(be32(data + 4));
      depth = uint8_t(png[data + 8]);
      color_type = uint8_t(png[data + 9]);
      interlace = uint8_t(png[data + 12]);
    } else if (type == "IDAT") {
      idat.append(png, data, len);
    } else if (type == "IEND") {
      break;
    }
    p += 12 + len;
  }
  if (depth != 8 || (color_type != 2 && color_type != 6) || interlace != 0) {
    return "unsupported PNG (depth " + std::to_string(depth) + ", colour type " + std::to_string(color_type) +
           ")";
  }
  const int bpp = color_type == 6 ? 4 : 3;
  const size_t stride = size_t(out.width) * bpp;
  std::vector<unsigned char> raw((stride + 1) * size_t(out.height));
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_size != raw.size()) {
    return "bad zlib data";
  }
  std::vector<unsigned char> prev(stride, 0), cur(stride);
  out.rgb.resize(size_t(out.width) * out.height);
  for (int y = 0; y < out.height; ++y) {
    const unsigned char* line = &raw[size_t(y) * (stride + 1)];
    const int filter = line[0];
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= size_t(bpp) ? cur[x - bpp] : 0;
      const int b = prev[x];
      const int c = x >= size_t(bpp) ? prev[x - bpp] : 0;
      int pred = 0;
      switch (filter) {
        case 0: pred = 0; break;
        case 1: pred = a; break;
        case 2: pred = b; break;
        case 3: pred = (a + b) / 2; break;
        case 4: {
          const int pp = a + b - c, pa = std::abs(pp - a), pb = std::abs(pp - b), pc = std::abs(pp - c);
          pred = (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
          break;
        }
        default: return "bad filter " + std::to_string(filter);
      }
      cur[x] = static_cast<unsigned char>(line[1 + x] + pred);
    }
    for (int x = 0; x < out.width; ++x) {
      const unsigned char* px = &cur[size_t(x) * bpp];
      out.rgb[size_t(y) * out.width + x] = (uint32_t(px[0]) << 16) | (uint32_t(px[1]) << 8) | px[2];
    }
    std::swap(prev, cur);
  }
  return "";
}

}  // namespace infercost::testing
