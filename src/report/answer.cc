// ReportModel -> the answer's paragraphs: which point is cheapest, fastest,
// meets the deadline, and what qualifies those figures.
#include <fmt/format.h>

#include <map>

#include "report/format.h"
#include "report/report.h"

namespace infercost::report {

namespace {
constexpr double kSame = 1.05;  // ratios within 5% read "about the same"
}

std::string speed_phrase(double seconds, double other_seconds) {
  if (!(seconds > 0) || !(other_seconds > 0)) return "of unknown speed";
  const double ratio = other_seconds / seconds;
  if (ratio >= kSame) return times(ratio) + " faster";
  if (1 / ratio >= kSame) return times(1 / ratio) + " slower";
  return "about as fast";
}

std::string cost_phrase(double usd, double other_usd) {
  if (!(usd > 0) || !(other_usd > 0)) return "of unknown cost";
  const double ratio = usd / other_usd;
  if (ratio >= kSame) return "costs " + times(ratio) + " more";
  if (1 / ratio >= kSame) return fmt::format("costs {:.0f}% less", (1 - ratio) * 100);
  return "costs about the same";
}

std::string comparison_sentence(const std::string& a, const TimeCost& a_tc, const std::string& b,
                                const TimeCost& b_tc) {
  return fmt::format("Compared with {}, {} is {} and {}.", b, a, speed_phrase(a_tc.seconds, b_tc.seconds),
                     cost_phrase(a_tc.usd, b_tc.usd));
}

namespace {

std::string point_name(const ReportModel& m, const Point& p) {
  return fmt::format("{}, batch size {}", m.configs[p.config].name, p.batch_size);
}

std::string short_sha(const std::string& sha) {
  return sha.empty() ? "no content hash" : "sha256 " + sha.substr(0, 12);
}

// The warning when the priced points' prices are not like for like
// (ReportModel::prices_mixed).
std::string price_mix_warning(const ReportModel& m) {
  std::vector<std::string> parts;
  std::vector<std::string> named;
  for (const ReportModel::PriceUse& u : m.price_uses) {
    const std::string list = u.list.empty() ? "an unnamed price list" : u.list;
    if (!u.list.empty()) named.push_back(u.list);
    parts.push_back(fmt::format("{} ({}) for {}", list, u.date.empty() ? "no date" : u.date,
                                join(u.instances, ", ", " and ")));
  }
  // Suggest a current list over the historical seed-2021.
  std::string example = "NAME";
  for (const std::string& n : named) {
    if (example == "NAME" || (example == "seed-2021" && n != "seed-2021")) example = n;
  }
  return fmt::format(
      "Warning: the costs below mix prices from different price lists or dates: {}. Such prices are not "
      "like for like, so the cost comparisons partly compare the price lists rather than the machines. To "
      "compare on one list, re-price every record: infercost report --price-list {} (with --prices FILE "
      "for a list of your own).",
      join(parts, "; ", "; "), example);
}

std::string describe_point(const ReportModel& m, size_t i) {
  const Point& p = m.points[i];
  const Configuration& c = m.configs[p.config];
  if (!p.priced)
    return fmt::format("{}: {} for the corpus (unpriced)", point_name(m, p),
                       duration(p.corpus_seconds.median));
  return fmt::format("{}: {} and {} for the corpus (at {}; {} per million rows)", point_name(m, p),
                     duration(p.corpus_seconds.median), usd(p.corpus_usd.median), hourly(c.usd_per_hour),
                     usd(p.usd_per_million_rows.median));
}

// Cheapest, fastest, how they compare, and the deadline.
void answer_choices(const ReportModel& m, std::vector<std::string>& a) {
  const ReportModel::Choices& c = m.choices;
  if (!c.fastest) return;
  const size_t fast_all = *c.fastest;
  if (!c.cheapest) {
    a.push_back(
        "No record names an instance with an hourly price, so cost questions cannot be answered: give the "
        "runs "
        "--instance NAME, or re-price the records with --prices FILE / --price-list NAME.");
    a.push_back("Fastest: " + describe_point(m, fast_all) + ".");
    return;
  }
  const size_t cheap = *c.cheapest;
  const size_t fast = *c.fastest_priced;
  a.push_back("Cheapest: " + describe_point(m, cheap) + ".");
  if (fast_all != fast) {
    a.push_back("Fastest: " + describe_point(m, fast_all) + "; it cannot be compared on cost.");
    a.push_back("Fastest priced: " + describe_point(m, fast) + ".");
  } else {
    a.push_back("Fastest: " + describe_point(m, fast) + ".");
  }
  if (cheap == fast) {
    a.push_back("The cheapest configuration is also the fastest.");
  } else {
    const Point& pf = m.points[fast];
    const Point& pc = m.points[cheap];
    a.push_back(comparison_sentence(
        fmt::format("the fastest{} ({})", fast_all != fast ? " priced" : "", point_name(m, pf)),
        {pf.corpus_seconds.median, pf.corpus_usd.median}, fmt::format("the cheapest ({})", point_name(m, pc)),
        {pc.corpus_seconds.median, pc.corpus_usd.median}));
  }
  if (!m.deadline_seconds) {
    a.push_back(
        "No --deadline was given: pass one (e.g. --deadline 2h) to get the cheapest configuration that "
        "finishes the corpus in time.");
    return;
  }
  const double deadline = *m.deadline_seconds;
  const std::string dl = fmt::format("Deadline {} ({})", m.deadline_text, duration(deadline));
  if (c.deadline.meets) {
    const size_t i = *c.deadline.meets;
    a.push_back(fmt::format("{}: the cheapest configuration that finishes the corpus within it is {}{}.", dl,
                            describe_point(m, i), i == cheap ? "; it is also the cheapest overall" : ""));
  } else if (c.deadline.closest) {
    const Point& p = m.points[*c.deadline.closest];
    a.push_back(fmt::format(
        "{}: no priced configuration finishes the corpus within it. The closest is {}, which takes {} "
        "({} the deadline) and costs {}.",
        dl, point_name(m, p), duration(p.corpus_seconds.median), times(p.corpus_seconds.median / deadline),
        usd(p.corpus_usd.median)));
  }
}

// Synthetic models, grouped by model name.
void answer_synthetic(const ReportModel& m, std::vector<std::string>& a) {
  std::map<std::string, std::vector<std::string>> synthetic;
  for (const Configuration& c : m.configs) {
    if (c.synthetic) synthetic[c.model.empty() ? "unnamed" : c.model].push_back(c.name);
  }
  if (synthetic.empty()) {
    if (!m.configs.empty()) a.push_back("No result comes from a synthetic model.");
    return;
  }
  for (const auto& [model, names] : synthetic) {
    a.push_back(
        fmt::format("Synthetic model: {} ran '{}', a synthetic model with random weights: {} speed is "
                    "real, {} predictions "
                    "are not.",
                    join(names, ", ", " and "), model, names.size() == 1 ? "its" : "their",
                    names.size() == 1 ? "its" : "their"));
  }
}

void answer_data_sets(const ReportModel& m, std::vector<std::string>& a) {
  if (m.data_sets.size() > 1) {
    std::vector<std::string> sets;
    for (const DataSet& d : m.data_sets) {
      sets.push_back(fmt::format("data set {}: {}, {} rows, {} ({})", d.index, d.shape, count(d.rows),
                                 short_sha(d.content_sha256), join(d.machines, ", ", " and ")));
    }
    a.push_back(fmt::format(
        "The records cover {} different data sets ({}). Their run times and run costs are not directly "
        "comparable: compare the corpus projections or the per-million-row figures.",
        m.data_sets.size(), join(sets, "; ", "; ")));
  } else if (m.data_sets.size() == 1) {
    const DataSet& d = m.data_sets[0];
    a.push_back(fmt::format("Every point classified the same data: {}, {} rows, {}.", d.shape, count(d.rows),
                            short_sha(d.content_sha256)));
  }
}

void answer_unpriced_and_failed(const ReportModel& m, std::vector<std::string>& a) {
  std::vector<std::string> unpriced;
  for (const Configuration& c : m.configs) {
    if (c.usd_per_hour <= 0) unpriced.push_back(c.name);
  }
  if (!unpriced.empty() && m.choices.cheapest) {
    a.push_back(fmt::format(
        "Unpriced (no instance with an hourly price in the records): {}; {} in the time charts only.",
        join(unpriced, ", ", " and "), unpriced.size() == 1 ? "it appears" : "they appear"));
  }
  if (m.failed.empty()) {
    a.push_back("No point failed.");
    return;
  }
  std::vector<std::string> items;
  for (const FailedPoint& f : m.failed) {
    items.push_back(
        fmt::format("{} {}, batch size {}: {}", f.machine, f.description, f.batch_size, f.reason));
  }
  a.push_back(fmt::format("{} {} failed and {} left out of the charts: {}.", m.failed.size(),
                          m.failed.size() == 1 ? "point" : "points", m.failed.size() == 1 ? "is" : "are",
                          join(items, "; ", "; ")));
}

}  // namespace

std::vector<std::string> answer_paragraphs(const ReportModel& m) {
  std::vector<std::string> a;
  if (m.points.empty()) {
    a.push_back("No benchmark point succeeded, so there is nothing to compare.");
  } else {
    a.push_back(fmt::format(
        "All times and costs below are projected to a corpus of {} ({}), at each point's measured rows per "
        "second, so that points measured on different data compare fairly.",
        fmt::format("{} rows", count(m.corpus_rows)),
        m.corpus_rows_given ? "--corpus-rows"
                            : "the largest data.rows among the records; set it with --corpus-rows"));
  }
  if (m.prices_mixed) a.push_back(price_mix_warning(m));
  answer_choices(m, a);
  answer_synthetic(m, a);
  answer_data_sets(m, a);
  answer_unpriced_and_failed(m, a);
  return a;
}

}  // namespace infercost::report
