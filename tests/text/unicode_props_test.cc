// Checks every code point against tests/data_files/tokenizer/hf_char_props.txt,
// the behaviour of HF's BertNormalizer and BertPreTokenizer on each code
// point alone (format in tools/gen_tokenizer_golden.py).
#include "text/unicode_props.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace infercost::text::detail {
namespace {

std::string hex_list(const char32_t* cps, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%s%X", i ? "+" : "", static_cast<unsigned>(cps[i]));
    s += buf;
  }
  return s;
}

// Our answer for `cp` in the golden file's notation.
std::string describe(char32_t cp) {
  const uint8_t f = char_flags(cp);
  std::string clean = (f & kDrop) ? "R" : (f & kSpace) ? "S" : "K";
  std::string cjk = (f & kCjk) ? "C" : "-";
  char32_t d[kMaxDecomp], kept[kMaxDecomp];
  const int nd = nfd_decompose(cp, d);
  int nk = 0;
  for (int i = 0; i < nd; ++i) {
    if (!(char_flags(d[i]) & kMn)) kept[nk++] = d[i];
  }
  std::string strip = (nk == 1 && kept[0] == cp) ? "=" : nk == 0 ? "-" : hex_list(kept, nk);
  char32_t l[2];
  const int nl = (f & kLower) ? to_lower_full(cp, l) : (l[0] = cp, 1);
  std::string lower;
  if (nl == 1 && l[0] == cp) {
    lower = "=";
  } else if (nl == 1) {
    const long delta = static_cast<long>(l[0]) - static_cast<long>(cp);
    lower = std::to_string(delta);
    if (delta > 0) lower.insert(lower.begin(), '+');
  } else {
    lower = hex_list(l, nl);
  }
  std::string pre = (f & kSpace) ? "W" : (f & kPunct) ? "P" : "-";
  std::string out = clean;
  for (const std::string* part : {&cjk, &strip, &lower, &pre}) {
    out += ' ';
    out += *part;
  }
  return out;
}

TEST(UnicodePropsTest, EveryCodePointMatchesHuggingFace) {
  const std::string path = std::filesystem::path(INFERCOST_TEST_DATA_DIR) / "tokenizer/hf_char_props.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot open " << path;
  std::vector<std::string> expected(0x110000, "K - = = -");
  std::string line;
  size_t lines = 0;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string first, last, rest;
    ls >> first >> last;
    std::getline(ls, rest);
    ASSERT_FALSE(rest.empty()) << line;
    const auto a = std::stoul(first, nullptr, 16), b = std::stoul(last, nullptr, 16);
    ASSERT_LE(a, b);
    ASSERT_LT(b, 0x110000u);
    for (auto cp = a; cp <= b; ++cp) expected[cp] = rest.substr(1);
    ++lines;
  }
  ASSERT_GT(lines, 10000u);
  size_t mismatches = 0;
  for (char32_t cp = 0; cp < 0x110000; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;  // not text; HF cannot see them
    const std::string got = describe(cp);
    if (got != expected[cp] && ++mismatches <= 20) {
      ADD_FAILURE() << std::hex << "U+" << static_cast<unsigned>(cp) << ": HF '" << expected[cp]
                    << "', ours '" << got << "'";
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(UnicodePropsTest, Utf8DecodeIsStrict) {
  auto bad = [](std::string s) {
    return find_invalid_utf8(reinterpret_cast<const unsigned char*>(s.data()), s.size());
  };
  const std::string ascii = "plain ascii text, long enough for the 8-byte loop";
  EXPECT_EQ(bad(ascii), ascii.size());
  const std::string mixed = "caf\xC3\xA9 \xF0\x9F\x98\x80 \xE4\xB8\xAD";
  EXPECT_EQ(bad(mixed), mixed.size());
  EXPECT_EQ(bad("ab\xC0\xAF"), 2u);         // overlong '/'
  EXPECT_EQ(bad("abc\xE0\x80\xAF"), 3u);    // overlong, 3 bytes
  EXPECT_EQ(bad("\xED\xA0\x80"), 0u);       // surrogate U+D800
  EXPECT_EQ(bad("x\xF4\x90\x80\x80"), 1u);  // past U+10FFFF
  EXPECT_EQ(bad("xy\xF0\x9F\x98"), 2u);     // truncated
  EXPECT_EQ(bad("0123456789\xFF"), 10u);
  EXPECT_EQ(bad("\x80"), 0u);              // lone continuation byte
  EXPECT_EQ(bad("\xF4\x8F\xBF\xBF"), 4u);  // U+10FFFF is fine
}

}  // namespace
}  // namespace infercost::text::detail
