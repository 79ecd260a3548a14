// Built-in word lists behind TweetGenerator and tweet_lexicon(). Private to
// src/corpus. Each list is ordered roughly by how often the generator should
// pick an entry (the generator skews towards the front).
#pragma once

#include <string_view>
#include <vector>

namespace infercost::corpus::internal {

struct TweetWords {
  std::vector<std::string_view> function_words;  // pronouns, articles, auxiliaries, contractions
  std::vector<std::string_view> nouns;           // singular, countable: plurals are composed
  std::vector<std::string_view> plural_nouns;    // composed from `nouns` (storage owned here)
  std::vector<std::string_view> mass_nouns;      // no plural form emitted
  std::vector<std::string_view> verbs;           // base and inflected forms, written out
  std::vector<std::string_view> adjectives;
  std::vector<std::string_view> adverbs;
  std::vector<std::string_view> positive;          // clearly positive sentiment words
  std::vector<std::string_view> negative;          // clearly negative sentiment words
  std::vector<std::string_view> slang;             // lol, omg, tbh, elongations (sooo)
  std::vector<std::string_view> topics;            // sports, tech, food, media, places (ASCII)
  std::vector<std::string_view> names;             // first names and handles' pieces
  std::vector<std::string_view> hashtag_words;     // tags used only after '#'
  std::vector<std::string_view> accented;          // single accented words (café)
  std::vector<std::string_view> accented_phrases;  // "São Paulo": split on ' ' for the lexicon
  std::vector<std::string_view> cjk;               // Chinese, Japanese and Korean words
  std::vector<std::string_view> emoji;             // single and multi code point emoji
  std::vector<std::string_view> emoticons;         // :) <3 ¯\_(ツ)_/¯
  std::vector<std::string_view> domains;           // pieces of URL host names
  std::vector<std::string_view> url_words;         // pieces of URL paths and queries
  std::vector<std::string_view> sentence_ends;     // . ! ? !!! ... ?!
  std::vector<std::string_view> symbols;           // every other punctuation / symbol piece
  std::vector<std::string_view> number_suffixes;   // k am pm st nd rd th
};

// Built once, on first use; thread-safe.
const TweetWords& tweet_words();

}  // namespace infercost::corpus::internal
