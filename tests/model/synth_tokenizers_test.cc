// The tokenizer files `model synth` builds for the RoBERTa family
// (src/model/synth_tokenizers.h); tools/check_synth_model.py loads them with
// HF tokenizers and transformers.
#include "synth_tokenizers.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "corpus/tweets.h"

namespace infercost::model {
namespace {

// BPE as HF applies it: the lowest-ranked pair first, until none applies.
std::vector<std::string> apply_merges(const ByteLevelBpe& bpe, const std::string& text) {
  const std::vector<std::string> alphabet = byte_level_alphabet();
  std::map<std::pair<std::string, std::string>, size_t> rank;
  for (size_t i = 0; i < bpe.merges.size(); ++i) rank.emplace(bpe.merges[i], i);
  std::vector<std::string> w;
  for (unsigned char c : text) w.push_back(alphabet[c]);
  for (;;) {
    size_t best = SIZE_MAX, at = 0;
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      auto it = rank.find({w[i], w[i + 1]});
      if (it != rank.end() && it->second < best) best = it->second, at = i;
    }
    if (best == SIZE_MAX) return w;
    w[at] += w[at + 1];
    w.erase(w.begin() + static_cast<std::ptrdiff_t>(at) + 1);
  }
}

TEST(SynthTokenizers, ByteLevelAlphabetIsGpt2s) {
  const std::vector<std::string> a = byte_level_alphabet();
  ASSERT_EQ(a.size(), 256u);
  EXPECT_EQ(std::set<std::string>(a.begin(), a.end()).size(), 256u);
  EXPECT_EQ(a['a'], "a");
  EXPECT_EQ(a['!'], "!");
  EXPECT_EQ(a[' '], "\xC4\xA0");   // Ġ, U+0120
  EXPECT_EQ(a[0], "\xC4\x80");     // Ā, U+0100: the first remapped byte
  EXPECT_EQ(a['\n'], "\xC4\x8A");  // Ċ
  EXPECT_EQ(a[0xAD], "\xC5\x83");  // the soft hyphen is remapped too: Ń, U+0143
  EXPECT_EQ(a[0xE9], "\xC3\xA9");  // é stands for itself
}

TEST(SynthTokenizers, BpeMergesUntilEveryWordIsOneToken) {
  const std::vector<std::string> words = {"low", "lower", "lowest", "newer", "wider", "new"};
  Result<ByteLevelBpe> learned = learn_byte_level_bpe(words, 1000);
  ASSERT_TRUE(learned.ok()) << learned.status().to_string();
  const ByteLevelBpe& bpe = *learned;
  ASSERT_GT(bpe.vocab.size(), 261u);
  EXPECT_EQ(std::vector<std::string>(bpe.vocab.begin(), bpe.vocab.begin() + 4),
            (std::vector<std::string>{"<s>", "<pad>", "</s>", "<unk>"}));
  EXPECT_EQ(bpe.vocab[4], "\xC4\x80");
  EXPECT_EQ(bpe.vocab.back(), "<mask>");
  EXPECT_EQ(bpe.first_merged, 260);
  EXPECT_EQ(bpe.end_merged + 1, static_cast<int32_t>(bpe.vocab.size()));
  // Every merge joins two tokens that exist before it, into one that exists.
  std::map<std::string, size_t> id;
  for (size_t i = 0; i < bpe.vocab.size(); ++i) id.emplace(bpe.vocab[i], i);
  EXPECT_EQ(id.size(), bpe.vocab.size()) << "duplicate tokens";
  for (const auto& [a, b] : bpe.merges) {
    ASSERT_TRUE(id.count(a) && id.count(b) && id.count(a + b)) << a << " " << b;
    EXPECT_LT(id[a], id[a + b]);
    EXPECT_LT(id[b], id[a + b]);
  }
  for (const std::string& w : words) {
    EXPECT_EQ(apply_merges(bpe, w).size(), 1u) << w;
    EXPECT_EQ(apply_merges(bpe, " " + w), std::vector<std::string>{"\xC4\xA0" + w}) << w;
  }
  EXPECT_EQ(bpe.word_ids.size(), words.size());
  // The most frequent pair first, ties in byte order: "e" "r", "l" "o", "o" "w" and "w" "e" each occur in
  // three words, bare and word-start (6 times).
  EXPECT_EQ(bpe.merges.front(), (std::pair<std::string, std::string>{"e", "r"}));
  // The files as HF reads them.
  const auto vocab = nlohmann::json::parse(bpe_vocab_json(bpe));
  EXPECT_EQ(vocab.size(), bpe.vocab.size());
  EXPECT_EQ(vocab.at("<pad>"), 1);
  EXPECT_EQ(vocab.at("<mask>"), bpe.vocab.size() - 1);
  const std::string merges = bpe_merges_txt(bpe);
  EXPECT_EQ(merges.rfind("#version: 0.2\ne r\n", 0), 0u) << merges.substr(0, 40);
  // Deterministic.
  EXPECT_EQ(bpe_merges_txt(learn_byte_level_bpe(words, 1000).value()), merges);
  // The vocabulary bound holds, <mask> included.
  EXPECT_EQ(learn_byte_level_bpe(words, 270).value().vocab.size(), 270u);
  EXPECT_EQ(learn_byte_level_bpe(words, 200).status().code(), StatusCode::kInternal);
}

TEST(SynthTokenizers, BpeOfTheTweetLexiconFitsRobertaBase) {
  const std::vector<std::string> words = bpe_training_words(corpus::tweet_lexicon());
  ASSERT_GT(words.size(), 1000u);
  Result<ByteLevelBpe> bpe = learn_byte_level_bpe(words, 50265);
  ASSERT_TRUE(bpe.ok()) << bpe.status().to_string();
  EXPECT_LT(bpe->vocab.size(), 50265u);
  // Every word ends as one word-start token.
  EXPECT_EQ(bpe->word_ids.size(), words.size());
  std::printf("[synth] roberta BPE: %zu words, %zu merges, %zu tokens\n", words.size(), bpe->merges.size(),
              bpe->vocab.size());
}

TEST(SynthTokenizers, UnigramPiecesCoverTheLexicon) {
  const std::vector<std::string>& lexicon = corpus::tweet_lexicon();
  Result<UnigramVocab> built = build_unigram_vocab(lexicon, 250002);
  ASSERT_TRUE(built.ok()) << built.status().to_string();
  const UnigramVocab& v = *built;
  ASSERT_GT(v.pieces.size(), lexicon.size());
  EXPECT_EQ(v.pieces[0].first, "<s>");
  EXPECT_EQ(v.pieces[1].first, "<pad>");
  EXPECT_EQ(v.pieces[2].first, "</s>");
  EXPECT_EQ(v.pieces[3].first, "<unk>");
  EXPECT_EQ(v.pieces.back().first, "<mask>");
  std::set<std::string> pieces;
  for (int32_t i = v.first_word; i < v.end_word; ++i) {
    const auto& [piece, score] = v.pieces[size_t(i)];
    EXPECT_TRUE(pieces.insert(piece).second) << "duplicate " << piece;
    EXPECT_LT(score, 0.0) << piece;
    if (i > v.first_word) {
      EXPECT_LE(score, v.pieces[size_t(i) - 1].second) << piece;
    }
  }
  EXPECT_TRUE(pieces.count("\xE2\x96\x81")) << "the word-start mark alone";
  for (const std::string& entry : lexicon) {
    EXPECT_TRUE(pieces.count("\xE2\x96\x81" + entry)) << entry;
    for (size_t i = 0; i < entry.size();) {
      size_t n = 1;
      while (i + n < entry.size() && (static_cast<unsigned char>(entry[i + n]) & 0xC0) == 0x80) ++n;
      EXPECT_TRUE(pieces.count(entry.substr(i, n))) << "character of " << entry;
      i += n;
    }
  }
  EXPECT_EQ(v.word_ids.size(), std::set<std::string>(lexicon.begin(), lexicon.end()).size());
  const auto j = nlohmann::json::parse(unigram_tokenizer_json(v));
  EXPECT_EQ(j["model"]["type"], "Unigram");
  EXPECT_EQ(j["model"]["unk_id"], 3);
  EXPECT_EQ(j["model"]["vocab"].size(), v.pieces.size());
  EXPECT_EQ(j["pre_tokenizer"]["type"], "Metaspace");
  EXPECT_EQ(j["post_processor"]["single"][0]["SpecialToken"]["id"], "<s>");
  EXPECT_EQ(j["added_tokens"].back()["id"], v.pieces.size() - 1);
  EXPECT_EQ(build_unigram_vocab(lexicon, 1000).status().code(), StatusCode::kInternal);
  std::printf("[synth] xlm-r Unigram: %zu lexicon entries, %zu pieces\n", lexicon.size(), v.pieces.size());
}

}  // namespace
}  // namespace infercost::model
