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

#include "infercost/core/status.h"
#include "infercost/report/analysis.h"

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

Document build_document(const ReportModel& model);
std::string render_markdown(const Document& doc);
std::string render_html(const Document& doc);

// Writes <dir>/report.html, <dir>/report.md and <dir>/<chart>.svg, creating
// <dir> if needed. Every file is written to a temporary first and renamed
// only when all of them are complete; on error none is left behind (and a
// folder this call created is removed).
Status write_report(const Document& doc, const std::string& dir);

}  // namespace infercost::report
