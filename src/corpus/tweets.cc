#include "corpus/tweets.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>
#include <utility>

#include "core/file.h"
#include "core/json_text.h"
#include "corpus/tweet_words.h"

namespace infercost::corpus {

namespace {

using internal::tweet_words;
using internal::TweetWords;
using Words = std::vector<std::string_view>;

// Every random choice goes through these helpers, built only on the raw
// 64-bit engine output: std:: distributions differ between standard libraries.
// Each engine output is split into two 32-bit draws, which halves the time
// spent in the engine (the main cost of generation).
class Draws {
 public:
  explicit Draws(std::mt19937_64& engine) : engine_(engine) {}
  uint32_t next32() {
    if (has_spare_) {
      has_spare_ = false;
      return static_cast<uint32_t>(spare_ >> 32);
    }
    spare_ = engine_();
    has_spare_ = true;
    return static_cast<uint32_t>(spare_);
  }
  uint64_t full64() { return engine_(); }

 private:
  std::mt19937_64& engine_;
  uint64_t spare_ = 0;
  bool has_spare_ = false;
};

// Uniform in [0, n) by multiply-shift; the bias (n / 2^32) is far below what
// any test or statistic of the corpus can see.
uint64_t below(Draws& rng, uint64_t n) {
  if (n <= (uint64_t{1} << 32)) return (static_cast<uint64_t>(rng.next32()) * n) >> 32;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(rng.full64()) * n) >> 64);
}
bool chance(Draws& rng, uint32_t per_10000) {
  return below(rng, 10000) < per_10000;
}
// Index in [0, n) skewed towards 0 (P(k) ~ log(n/k)): lists are ordered by
// frequency, so this gives a roughly Zipf-like word distribution.
size_t skewed(Draws& rng, size_t n) {
  return below(rng, below(rng, n) + 1);
}
std::string_view pick(Draws& rng, const Words& words) {
  return words[skewed(rng, words.size())];
}
std::string_view pick_uniform(Draws& rng, const Words& words) {
  return words[below(rng, words.size())];
}

enum class Case { kAsIs, kCapital, kUpper };
enum class Mood { kPositive, kNegative, kNeutral };

constexpr std::string_view kAlnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// Hosts of long URLs; every dot-separated piece is in the domains list.
constexpr std::string_view kHosts[] = {
    "www.nytimes.com",        "www.bbc.co.uk",     "twitter.com",      "open.spotify.com",
    "en.wikipedia.org",       "github.com",        "medium.com",       "m.youtube.com",
    "www.instagram.com",      "www.reddit.com",    "techcrunch.com",   "www.theguardian.com",
    "www.washingtonpost.com", "www.reuters.com",   "www.forbes.com",   "www.espn.com",
    "www.theverge.com",       "www.cnn.com",       "news.google.com",  "www.amazon.com",
    "www.imdb.com",           "imgur.com",         "www.tiktok.com",   "www.linkedin.com",
    "blog.substack.com",      "www.bloomberg.com", "www.buzzfeed.com", "www.wired.com",
};

bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

bool is_ascii_word(std::string_view w) {
  for (char c : w) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '\'')) return false;
  }
  return true;
}

void append_uint(std::string& out, uint64_t v) {
  char buf[24];
  int n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) out.push_back(buf[--n]);
}

class TweetWriter {
 public:
  TweetWriter(std::mt19937_64& engine, std::string& out, uint64_t index)
      : rng_(engine), out_(out), w_(tweet_words()), index_(index) {}

  void write() {
    mood_ = pick_mood();
    lower_style_ = chance(rng_, 3500);
    shouty_ = chance(rng_, 200);
    cjk_heavy_ = chance(rng_, 250);
    accent_heavy_ = chance(rng_, 300);
    int64_t body_words = sample_body_words();
    long_form_ = body_words > 48;

    uint64_t opening = below(rng_, 10000);
    if (opening < 600) {
      out_ += "RT ";
      mention();
      out_ += ": ";
    } else if (opening < 3200) {
      int n = 1 + static_cast<int>(skewed(rng_, 4));
      for (int i = 0; i < n; ++i) {
        mention();
        out_ += ' ';
      }
    }
    if (long_form_ && chance(rng_, 4000)) thread_marker();

    body(body_words);

    if (chance(rng_, 2400)) {
      int n = 1 + static_cast<int>(skewed(rng_, 4));
      for (int i = 0; i < n; ++i) {
        out_ += ' ';
        hashtag();
      }
    }
    if (chance(rng_, 2200)) {
      out_ += ' ';
      url();
    }
    if (chance(rng_, 1800)) {
      out_ += ' ';
      emoji_run();
    }
  }

  // As write(), with exactly `words` words (count_words, at least 1): the
  // pieces outside the body (opening mentions, thread marker, hashtags, URL,
  // emoji run) are drawn with write()'s odds while they leave the body at
  // least one word; the body gets the rest, cut to its count where accented
  // phrases or end emoticons ran over.
  void write_words(int64_t words) {
    mood_ = pick_mood();
    lower_style_ = chance(rng_, 3500);
    shouty_ = chance(rng_, 200);
    cjk_heavy_ = chance(rng_, 250);
    accent_heavy_ = chance(rng_, 300);
    words = std::max<int64_t>(words, 1);
    long_form_ = words > 48;
    int64_t spare = words - 1;  // words the pieces outside the body may take
    auto take = [&spare](int64_t n) {
      n = std::min(n, spare);
      spare -= n;
      return n;
    };
    auto fits = [&spare](int64_t n) {
      if (n > spare) return false;
      spare -= n;
      return true;
    };
    uint64_t opening = below(rng_, 10000);
    const bool retweet = opening < 600 && fits(2);  // "RT @x:"
    const int64_t mentions =
        opening >= 600 && opening < 3200 ? take(1 + static_cast<int64_t>(skewed(rng_, 4))) : 0;
    const bool thread = long_form_ && chance(rng_, 4000) && fits(1);
    const int64_t hashtags = chance(rng_, 2400) ? take(1 + static_cast<int64_t>(skewed(rng_, 4))) : 0;
    const bool link = chance(rng_, 2200) && fits(1);
    const bool emoji = chance(rng_, 1800) && fits(1);
    const int64_t body_words = spare + 1;

    if (retweet) {
      out_ += "RT ";
      mention();
      out_ += ": ";
    }
    for (int64_t i = 0; i < mentions; ++i) {
      mention();
      out_ += ' ';
    }
    if (thread) thread_marker();
    const size_t body_start = out_.size();
    body(body_words);
    cut_after_words(body_start, body_words);
    for (int64_t i = 0; i < hashtags; ++i) {
      out_ += ' ';
      hashtag();
    }
    if (link) {
      out_ += ' ';
      url();
    }
    if (emoji) {
      out_ += ' ';
      emoji_run();
    }
  }

 private:
  // Keeps the first `words` words of out_ from `start` (which is at a word's
  // start) and nothing after the last of them.
  // `words` words of sentences of 3 to 17 words, with separators between them.
  void body(int64_t words) {
    int64_t emitted = 0;
    while (emitted < words) {
      const int64_t len =
          std::min(3 + static_cast<int64_t>(below(rng_, 9) + below(rng_, 7)), words - emitted);
      sentence(len);
      emitted += len;
      if (emitted < words) separator();
    }
  }

  void cut_after_words(size_t start, int64_t words) {
    size_t i = start;
    for (int64_t w = 0; w < words && i < out_.size(); ++w) {
      while (i < out_.size() && is_ascii_space(out_[i])) ++i;
      while (i < out_.size() && !is_ascii_space(out_[i])) ++i;
    }
    out_.resize(i);
  }

  Mood pick_mood() {
    uint64_t r = below(rng_, 100);
    return r < 40 ? Mood::kPositive : r < 75 ? Mood::kNegative : Mood::kNeutral;
  }

  // Words of body text. Most rows are tweet-sized; 0.4% are threads and 0.3%
  // pasted articles, long enough that many pass BERT's 512-token limit.
  int64_t sample_body_words() {
    uint64_t r = below(rng_, 10000);
    auto tri = [&](int64_t lo, int64_t half) {
      return lo + static_cast<int64_t>(below(rng_, half + 1) + below(rng_, half + 1));
    };
    if (r < 3000) return tri(1, 3);
    if (r < 7000) return tri(3, 5);
    if (r < 9000) return tri(9, 9);
    if (r < 9930) return tri(22, 12);
    if (r < 9970) return tri(50, 120);
    return tri(320, 340);
  }

  void emit_word(std::string_view word, Case c) {
    size_t start = out_.size();
    out_ += word;
    if (c == Case::kAsIs || !is_ascii_word(word)) return;
    if (c == Case::kCapital) {
      char& first = out_[start];
      if (first >= 'a' && first <= 'z') first = static_cast<char>(first - 'a' + 'A');
      return;
    }
    for (size_t i = start; i < out_.size(); ++i) {
      char& ch = out_[i];
      if (ch >= 'a' && ch <= 'z') ch = static_cast<char>(ch - 'a' + 'A');
    }
  }

  std::string_view sentiment_word() {
    switch (mood_) {
      case Mood::kPositive: return chance(rng_, 9000) ? pick(rng_, w_.positive) : pick(rng_, w_.negative);
      case Mood::kNegative: return chance(rng_, 9000) ? pick(rng_, w_.negative) : pick(rng_, w_.positive);
      case Mood::kNeutral: break;
    }
    return chance(rng_, 5000) ? pick(rng_, w_.positive) : pick(rng_, w_.negative);
  }

  // One body item: a word of some class, or an inline entity (which keeps its
  // own case).
  void item(Case c) {
    uint32_t r = static_cast<uint32_t>(below(rng_, 10000));
    uint32_t cjk = cjk_heavy_ ? 2500 : 40;
    uint32_t accent = accent_heavy_ ? 700 : 60;
    if (r < 220) return emoji_inline();
    r -= 220;
    if (r < 120) return mention();
    r -= 120;
    if (r < 160) return hashtag();
    r -= 160;
    if (r < 260) return number();
    r -= 260;
    if (r < cjk) return emit_word(pick_uniform(rng_, w_.cjk), Case::kAsIs);
    r -= cjk;
    if (r < accent) {
      if (chance(rng_, 2500)) {
        emit_word(pick_uniform(rng_, w_.accented_phrases), Case::kAsIs);
      } else {
        emit_word(pick_uniform(rng_, w_.accented), Case::kAsIs);
      }
      return;
    }
    r -= accent;
    // The word classes, each taking the draws below its bound (of the 10,000 less the inline items
    // above); no list: a sentiment word of the row's mood.
    struct WordClass {
      uint32_t below;
      const Words TweetWords::*list;
    };
    static constexpr WordClass kClasses[] = {
        {450, &TweetWords::slang},           {1400, nullptr},
        {5000, &TweetWords::function_words}, {6100, &TweetWords::nouns},
        {6450, &TweetWords::plural_nouns},   {6700, &TweetWords::mass_nouns},
        {7800, &TweetWords::verbs},          {8500, &TweetWords::adjectives},
        {8900, &TweetWords::adverbs},        {9150, &TweetWords::topics}};
    const uint32_t ampersand_below = 9300;  // then "&amp;"; the rest are function words
    const WordClass* k = std::find_if(std::begin(kClasses), std::end(kClasses),
                                      [r](const WordClass& x) { return r < x.below; });
    if (k == std::end(kClasses) && r < ampersand_below) return emit_word("&amp;", Case::kAsIs);
    const Words TweetWords::*list = k == std::end(kClasses) ? &TweetWords::function_words : k->list;
    std::string_view word = list != nullptr ? pick(rng_, w_.*list) : sentiment_word();
    if (c == Case::kAsIs && !lower_style_ && chance(rng_, 120)) c = Case::kUpper;
    emit_word(word, c);
  }

  void sentence(int64_t len) {
    Case first = lower_style_ ? Case::kAsIs : Case::kCapital;
    Case rest = Case::kAsIs;
    if (shouty_ || (!lower_style_ && chance(rng_, 300))) first = rest = Case::kUpper;
    std::string_view quote_close;
    if (chance(rng_, 200)) {
      bool curly = chance(rng_, 4000);
      out_ += curly ? "“" : "\"";
      quote_close = curly ? "”" : "\"";
    }
    for (int64_t k = 0; k < len; ++k) {
      if (k > 0) out_ += ' ';
      item(k == 0 ? first : rest);
      if (k + 1 < len && chance(rng_, 450)) out_ += ',';
    }
    if (!quote_close.empty()) out_ += quote_close;
    uint64_t r = below(rng_, 100);
    if (r < 55) {
      out_ += '.';
    } else if (r < 85) {
      out_ += pick(rng_, w_.sentence_ends);
    } else if (r < 92 && !long_form_) {
      out_ += ' ';
      out_ += pick_uniform(rng_, w_.emoticons);
    }  // else: no end mark, as in many tweets
  }

  void separator() {
    if (long_form_ && chance(rng_, 1500)) {
      out_ += chance(rng_, 7000) ? "\n\n" : "\n";
    } else if (chance(rng_, 30)) {
      out_ += '\t';
    } else {
      out_ += ' ';
    }
  }

  void thread_marker() {
    uint64_t r = below(rng_, 3);
    if (r == 0) {
      out_ += "🧵 ";
    } else if (r == 1) {
      out_ += "THREAD: ";
    } else {
      append_uint(out_, 1 + index_ % 3);
      out_ += '/';
      append_uint(out_, 3 + below(rng_, 12));
      out_ += ' ';
    }
  }

  void code(size_t n) {
    for (size_t i = 0; i < n; ++i) out_ += kAlnum[below(rng_, kAlnum.size())];
  }

  void mention() {
    out_ += '@';
    uint64_t r = below(rng_, 100);
    std::string_view first = pick(rng_, w_.names);
    emit_word(first, chance(rng_, 2500) ? Case::kCapital : Case::kAsIs);
    if (r < 25) {
      out_ += '_';
      emit_word(pick(rng_, chance(rng_, 5000) ? w_.names : w_.nouns), Case::kAsIs);
    } else if (r < 45) {
      emit_word(pick(rng_, chance(rng_, 5000) ? w_.names : w_.topics), Case::kCapital);
    } else if (r < 55) {
      emit_word(pick(rng_, w_.topics), Case::kAsIs);
    }
    if (chance(rng_, 3500)) append_uint(out_, chance(rng_, 5000) ? below(rng_, 100) : 1960 + below(rng_, 65));
  }

  void hashtag() {
    out_ += '#';
    uint64_t r = below(rng_, 100);
    if (r < 35) {
      emit_word(pick(rng_, w_.hashtag_words), Case::kAsIs);
    } else if (r < 55) {
      emit_word(pick(rng_, w_.topics), chance(rng_, 3000) ? Case::kUpper : Case::kAsIs);
    } else if (r < 80) {
      // CamelCase compound: #GameDay, #LoveThis
      emit_word(pick(rng_, chance(rng_, 5000) ? w_.positive : w_.adjectives), Case::kCapital);
      emit_word(pick(rng_, w_.nouns), Case::kCapital);
    } else if (r < 92) {
      emit_word(sentiment_word(), Case::kAsIs);
    } else {
      emit_word(pick(rng_, w_.topics), Case::kAsIs);
      append_uint(out_, 2015 + below(rng_, 11));
    }
  }

  void url() {
    uint64_t r = below(rng_, 100);
    if (r < 55) {
      out_ += "https://t.co/";
      code(10);
      return;
    }
    if (r < 63) {
      out_ += "https://youtu.be/";
      code(11);
      return;
    }
    if (r < 70) {
      out_ += chance(rng_, 8000) ? "https://bit.ly/" : "http://bit.ly/";
      code(7);
      return;
    }
    out_ += "https://";
    std::string_view host = kHosts[below(rng_, std::size(kHosts))];
    out_ += host;
    if (host == "twitter.com") {
      out_ += '/';
      emit_word(pick(rng_, w_.names), Case::kAsIs);
      out_ += "/status/";
      append_uint(out_, 1000000000000000000ULL + below(rng_, 500000000000000000ULL));
      if (chance(rng_, 4000)) out_ += "?s=20";
      return;
    }
    int segments = 1 + static_cast<int>(below(rng_, 3));
    for (int s = 0; s < segments; ++s) {
      out_ += '/';
      uint64_t kind = below(rng_, 10);
      if (kind < 3) {
        emit_word(pick(rng_, w_.url_words), Case::kAsIs);
      } else if (kind < 5) {
        append_uint(out_, 2015 + below(rng_, 11));
        out_ += '/';
        append_uint(out_, 1 + below(rng_, 12));
      } else if (kind < 6) {
        code(8 + below(rng_, 6));
      } else {
        // article slug: some-words-joined-by-dashes
        int words = 3 + static_cast<int>(below(rng_, 7));
        for (int i = 0; i < words; ++i) {
          if (i > 0) out_ += '-';
          const Words& list = i % 3 == 1 ? w_.function_words : (i % 2 == 0 ? w_.nouns : w_.verbs);
          std::string_view word = pick(rng_, list);
          if (word.find('\'') != std::string_view::npos || word.find('/') != std::string_view::npos) {
            word = pick(rng_, w_.nouns);
          }
          emit_word(word, Case::kAsIs);
        }
        if (chance(rng_, 3000)) out_ += ".html";
      }
    }
    uint64_t q = below(rng_, 10);
    if (q < 3) {
      out_ += "?utm_source=twitter&utm_medium=social";
    } else if (q < 4) {
      out_ += "?id=";
      append_uint(out_, below(rng_, 10000000));
    } else if (q < 5) {
      out_ += "?ref=share";
    }
  }

  void emoji_inline() {
    if (chance(rng_, 1500)) {
      out_ += pick_uniform(rng_, w_.emoticons);
    } else {
      out_ += pick(rng_, w_.emoji);
    }
  }

  void emoji_run() {
    std::string_view e = pick(rng_, w_.emoji);
    uint64_t n = 1 + skewed(rng_, 5);
    bool same = chance(rng_, 5000);
    for (uint64_t i = 0; i < n; ++i) {
      out_ += e;
      if (!same) e = pick(rng_, w_.emoji);
    }
  }

  void number() {
    uint64_t r = below(rng_, 100);
    if (r < 30) {
      append_uint(out_, 1 + skewed(rng_, 100));
    } else if (r < 40) {
      append_uint(out_, 1990 + below(rng_, 36));
    } else if (r < 48) {
      append_uint(out_, 1 + below(rng_, 12));
      out_ += ':';
      uint64_t m = below(rng_, 12) * 5;
      if (m < 10) out_ += '0';
      append_uint(out_, m);
      if (chance(rng_, 5000)) out_ += chance(rng_, 5000) ? "am" : "pm";
    } else if (r < 55) {
      append_uint(out_, 1 + below(rng_, 12));
      out_ += chance(rng_, 5000) ? "am" : "pm";
    } else if (r < 62) {
      append_uint(out_, skewed(rng_, 101));
      out_ += '%';
    } else if (r < 70) {
      out_ += '$';
      append_uint(out_, 1 + skewed(rng_, 1000));
      if (chance(rng_, 3000)) {
        out_ += '.';
        append_uint(out_, 10 + below(rng_, 90));
      }
    } else if (r < 76) {
      append_uint(out_, 1 + below(rng_, 99));
      if (chance(rng_, 5000)) {
        out_ += ",000";
      } else {
        static constexpr std::string_view kMagnitudes[] = {"k", "K", "m", "M"};
        out_ += kMagnitudes[below(rng_, std::size(kMagnitudes))];
      }
    } else if (r < 83) {
      uint64_t n = 1 + skewed(rng_, 31);
      append_uint(out_, n);
      uint64_t last = n % 10;
      bool teen = n % 100 >= 11 && n % 100 <= 13;
      out_ += teen ? "th" : last == 1 ? "st" : last == 2 ? "nd" : last == 3 ? "rd" : "th";
    } else if (r < 90) {
      append_uint(out_, below(rng_, 6));
      out_ += '-';
      append_uint(out_, below(rng_, 6));
    } else if (r < 96) {
      append_uint(out_, below(rng_, 11));
      out_ += "/10";
    } else {
      out_ += '#';
      append_uint(out_, 1 + skewed(rng_, 10));
    }
  }

  Draws rng_;
  std::string& out_;
  const TweetWords& w_;
  uint64_t index_;
  Mood mood_ = Mood::kNeutral;
  bool lower_style_ = false;
  bool shouty_ = false;
  bool cjk_heavy_ = false;
  bool accent_heavy_ = false;
  bool long_form_ = false;
};

std::vector<std::string> build_lexicon() {
  const TweetWords& w = tweet_words();
  std::set<std::string> entries;
  auto add_all = [&](const Words& list) {
    for (std::string_view e : list) entries.emplace(e);
  };
  for (const Words* list :
       {&w.function_words, &w.nouns,         &w.plural_nouns, &w.mass_nouns,     &w.verbs,     &w.adjectives,
        &w.adverbs,        &w.positive,      &w.negative,     &w.slang,          &w.topics,    &w.names,
        &w.hashtag_words,  &w.accented,      &w.cjk,          &w.emoji,          &w.emoticons, &w.domains,
        &w.url_words,      &w.sentence_ends, &w.symbols,      &w.number_suffixes}) {
    add_all(*list);
  }
  for (std::string_view phrase : w.accented_phrases) {
    size_t i = 0;
    while (i < phrase.size()) {
      size_t j = phrase.find(' ', i);
      if (j == std::string_view::npos) j = phrase.size();
      if (j > i) entries.emplace(phrase.substr(i, j - i));
      i = j + 1;
    }
  }
  for (char c : kAlnum) entries.emplace(1, c);
  for (std::string_view s :
       {"RT",  "THREAD", "&amp;", "https", "http", "://",   "/",      ".",      ",",      ":",      "?",
        "=",   "&",      "_",     "-",     "%",    "$",     "'",      "\"",     "“",      "”",      "🧵",
        "utm", "status", "s",     "id",    "ref",  "share", "source", "medium", "social", "twitter"}) {
    entries.emplace(s);
  }
  return {entries.begin(), entries.end()};
}

}  // namespace

int64_t count_words(std::string_view text) {
  int64_t words = 0;
  bool in_word = false;
  for (char c : text) {
    const bool space = is_ascii_space(c);
    if (!space && !in_word) ++words;
    in_word = !space;
  }
  return words;
}

void WordCounts::add(int64_t words, int64_t rows) {
  if (words < 0 || rows < 1) return;
  rows_with_[words] += rows;
  rows_ += rows;
  words_ += static_cast<double>(words) * static_cast<double>(rows);
}

int64_t WordCounts::quantile(double q) const {
  if (rows_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const int64_t rank = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(q * static_cast<double>(rows_))));
  int64_t seen = 0;
  for (const auto& [words, rows] : rows_with_) {
    seen += rows;
    if (seen >= rank) return words;
  }
  return rows_with_.rbegin()->first;
}

double WordCounts::mean() const {
  return rows_ > 0 ? words_ / static_cast<double>(rows_) : 0.0;
}

TweetGenerator::TweetGenerator(uint64_t seed) : rng_(seed) {}

TweetGenerator::TweetGenerator(uint64_t seed, const WordCounts& lengths) : rng_(seed) {
  int64_t total = 0;
  for (const auto& [words, rows] : lengths.rows_with()) {
    total += rows;
    length_words_.push_back(words);
    length_cumulative_.push_back(total);
  }
}

std::string TweetGenerator::next() {
  std::string out;
  out.reserve(192);
  TweetWriter writer(rng_, out, count_);
  if (length_cumulative_.empty()) {
    writer.write();
  } else {
    // A row of the source drawn uniformly; its word count is the target.
    Draws draws(rng_);
    const int64_t row = static_cast<int64_t>(below(draws, static_cast<uint64_t>(length_cumulative_.back())));
    const size_t bin =
        static_cast<size_t>(std::upper_bound(length_cumulative_.begin(), length_cumulative_.end(), row) -
                            length_cumulative_.begin());
    writer.write_words(length_words_[bin]);
  }
  ++count_;
  return out;
}

const std::vector<std::string>& tweet_lexicon() {
  static const std::vector<std::string> lexicon = build_lexicon();
  return lexicon;
}

Result<TweetsWriteSummary> write_tweets_jsonl(const std::string& path, int64_t rows, uint64_t seed,
                                              const TweetsProgressFn& on_progress,
                                              int64_t progress_every_rows) {
  if (rows < 0) return invalid_argument(path + ": row count must be >= 0, got " + std::to_string(rows));
  if (progress_every_rows < 1) {
    return invalid_argument("progress interval must be >= 1 row, got " + std::to_string(progress_every_rows));
  }
  INFERCOST_ASSIGN_OR_RETURN(AtomicOutputFile file, AtomicOutputFile::create(path));
  static constexpr size_t kFlushBytes = 1 << 20;
  TweetGenerator generator(seed);
  TweetsWriteSummary summary;
  std::string buffer;
  buffer.reserve(kFlushBytes + 64 * 1024);
  for (int64_t i = 0; i < rows; ++i) {
    buffer += "{\"id\": ";
    append_uint(buffer, static_cast<uint64_t>(i));
    buffer += ", \"full_text\": ";
    append_json_string(buffer, generator.next());
    buffer += "}\n";
    if (buffer.size() >= kFlushBytes) {
      INFERCOST_RETURN_IF_ERROR(file.write(buffer));
      summary.bytes += static_cast<int64_t>(buffer.size());
      buffer.clear();
    }
    summary.rows = i + 1;
    if (on_progress && summary.rows % progress_every_rows == 0) {
      on_progress(summary.rows, summary.bytes + static_cast<int64_t>(buffer.size()));
    }
  }
  INFERCOST_RETURN_IF_ERROR(file.write(buffer));
  summary.bytes += static_cast<int64_t>(buffer.size());
  INFERCOST_RETURN_IF_ERROR(file.commit());
  return summary;
}

Status write_tweets_jsonl(const std::string& path, int64_t rows, uint64_t seed) {
  auto result = write_tweets_jsonl(path, rows, seed, TweetsProgressFn{});
  return result.ok() ? Status::ok_status() : result.status();
}

}  // namespace infercost::corpus
