#include "core/sha256.h"

#include <gtest/gtest.h>

#include <string>

#include "test_utils.h"

namespace infercost {
namespace {

// The FIPS 180-4 / NIST CSHS example vectors for SHA-256.
TEST(Sha256, NistVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(
      sha256_hex(
          "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnop"
          "qrsmnopqrstnopqrstu"),
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths around the 55/56/64-byte padding boundaries, fed in every chunking.
TEST(Sha256, IncrementalUpdatesMatchOneShot) {
  // sha256 of 55, 56 and 64 'a's (one-shot values checked against coreutils sha256sum).
  EXPECT_EQ(sha256_hex(std::string(55, 'a')),
            "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  EXPECT_EQ(sha256_hex(std::string(56, 'a')),
            "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  EXPECT_EQ(sha256_hex(std::string(64, 'a')),
            "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  std::string text;
  for (int i = 0; i < 300; ++i) text.push_back(static_cast<char>('a' + i % 26));
  const std::string expected = sha256_hex(text);
  for (size_t chunk : {1u, 3u, 55u, 63u, 64u, 65u, 128u}) {
    Sha256 h;
    for (size_t at = 0; at < text.size(); at += chunk) h.update(std::string_view(text).substr(at, chunk));
    EXPECT_EQ(h.hex_digest(), expected) << "chunk " << chunk;
  }
  Sha256 h;
  h.update("abc");
  (void)h.finish();
  h.reset();
  h.update("abc");
  EXPECT_EQ(h.hex_digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// An empty view may carry a null pointer; hashing it is a no-op (the sanitizer
// build fails here if the bytes reach memcpy).
TEST(Sha256, EmptyUpdatesChangeNothing) {
  Sha256 h;
  h.update(std::string_view());
  h.update(nullptr, 0);
  h.update("ab");
  h.update(std::string_view());
  h.update("c");
  EXPECT_EQ(h.hex_digest(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, FilesHashAsTheirBytesConcatenatedInOrder) {
  testing::TempDir dir;
  const std::string a = dir.write("a.txt", "ab");
  const std::string b = dir.write("b.txt", "c");
  auto digest = sha256_of_files({a, b});
  ASSERT_TRUE(digest.ok()) << digest.status().to_string();
  EXPECT_EQ(digest->sha256_hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");  // "abc"
  EXPECT_EQ(digest->bytes, 3);
  EXPECT_NE(sha256_of_files({b, a})->sha256_hex, digest->sha256_hex);
  EXPECT_EQ(sha256_of_files({})->sha256_hex, sha256_hex(""));
  auto missing = sha256_of_files({a, dir.file("none.txt")});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("none.txt: cannot open"), std::string::npos);
}

}  // namespace
}  // namespace infercost
