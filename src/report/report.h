// `infercost report`: a ReportModel laid out as a document (sections of
// paragraphs, tables and charts), printed as Markdown and as one
// self-contained HTML page (inline CSS and SVG, no script, no network), and
// written to a folder with every chart also as its own SVG file.
//
// The Markdown and the HTML come from the same Document, so they hold the
// same tables and the same answer text; Markdown links the SVG files where
// the HTML inlines them.
#pragma once

#include <string>
#include <vector>

#include "infercost/status.h"
#include "report/analysis.h"

namespace infercost::report {

struct Table {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;  // per column (numbers)
  std::vector<std::vector<std::string>> rows;
};

struct Chart {
  std::string file;  // "runtime.svg"
  std::string title;
  std::string standalone;  // the .svg file's text
  std::string inline_svg;  // for the HTML page
};

// One piece of a section. Text is plain (printers escape it).
struct Block {
  enum class Kind { kParagraph, kList, kTable, kChart };
  Kind kind = Kind::kParagraph;
  std::string text;                // kParagraph
  std::vector<std::string> items;  // kList
  Table table;                     // kTable
  size_t chart = 0;                // kChart: index into Document::charts
};

struct Section {
  std::string id;  // HTML anchor
  std::string heading;
  std::vector<Block> blocks;
};

struct Document {
  std::string title;
  std::vector<std::string> intro;  // paragraphs under the title
  std::vector<Section> sections;
  std::vector<Chart> charts;
};

// The plain-language answer, one paragraph each (plain text): the corpus the
// figures are projected to, the cheapest and fastest points and how they
// compare, the deadline, and what qualifies them (mixed price lists,
// synthetic models, data sets, unpriced and failed points).
std::vector<std::string> answer_paragraphs(const ReportModel& model);

// "3.1x faster", "2.0x slower" or "about as fast" (within 5%): how
// `seconds` compares with `other_seconds`.
std::string speed_phrase(double seconds, double other_seconds);
// "costs 1.8x more", "costs 45% less" or "costs about the same" (within 5%).
std::string cost_phrase(double usd, double other_usd);
// "Compared with B, A is 3.1x faster and costs 1.8x more."
std::string comparison_sentence(const std::string& a, const TimeCost& a_tc, const std::string& b,
                                const TimeCost& b_tc);

Document build_document(const ReportModel& model);
std::string render_markdown(const Document& doc);
std::string render_html(const Document& doc);

// Writes <dir>/report.html, <dir>/report.md and <dir>/<chart>.svg, creating
// <dir> if needed. Every file is written to a temporary first and renamed
// only when all of them are complete; on error none is left behind (and a
// folder this call created is removed).
Status write_report(const Document& doc, const std::string& dir);

}  // namespace infercost::report
