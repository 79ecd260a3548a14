// Document -> Markdown and HTML text, and the atomic write of a report folder.
#include <fmt/format.h>

#include <filesystem>
#include <system_error>

#include "core/file.h"
#include "report/format.h"
#include "report/report.h"

namespace infercost::report {
namespace {

// Markdown text: also escapes '$' (GitHub renders $...$ as math).
std::string md(std::string_view text) {
  std::string escaped = markdown_escape(text);
  std::string out;
  for (char c : escaped) {
    if (c == '$') out += '\\';
    out += c;
  }
  return out;
}

void markdown_table(std::string& out, const Table& t) {
  out += "|";
  for (const std::string& h : t.header) out.append(" ").append(md(h)).append(" |");
  out += "\n|";
  for (size_t i = 0; i < t.header.size(); ++i) {
    out += i < t.right_aligned.size() && t.right_aligned[i] ? "---:|" : "---|";
  }
  out += "\n";
  for (const auto& row : t.rows) {
    out += "|";
    for (const std::string& cell : row) out.append(" ").append(md(cell)).append(" |");
    out += "\n";
  }
  out += "\n";
}

constexpr const char* kCss = R"(body{margin:0;background:#f6f6f4;color:#222;font:15px/1.5 sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 28px 48px;background:#fff}
h1,h2,p,li,figcaption{overflow-wrap:break-word}
h1{font-size:26px;margin:8px 0 12px}h2{font-size:20px;margin:36px 0 10px;border-bottom:1px solid #ddd;padding-bottom:4px}
p{margin:8px 0}nav{font-size:14px;margin:12px 0}nav a{margin-right:14px;color:#0b5cad}
.answer p{margin:6px 0;padding:6px 10px;background:#f0f5fb;border-left:4px solid #0072b2}
table{border-collapse:collapse;margin:12px 0 20px;font-size:13px;display:block;overflow-x:auto;max-width:100%}
th,td{border:1px solid #d8d8d8;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f2f2f2}th.n{text-align:right}td.n{text-align:right;white-space:nowrap}
figure{margin:12px 0}figure svg{width:100%;max-width:920px;height:auto;display:block}
figcaption{font-size:12px;color:#666}ol,ul{margin:6px 0 12px})";

// A cell's text, escaped, with a line-break opportunity after each '/' and
// '_' (browsers break after '-' of themselves), so model names such as
// "org/some_long_model-name" wrap in a narrow column instead of widening it.
std::string cell_html(const std::string& text) {
  const std::string escaped = xml_escape(text);
  std::string out;
  out.reserve(escaped.size());
  for (char c : escaped) {
    out += c;
    if (c == '/' || c == '_') out += "<wbr>";
  }
  return out;
}

void html_table(std::string& out, const Table& t) {
  out += "<table>\n<thead><tr>";
  for (size_t i = 0; i < t.header.size(); ++i) {
    const bool right = i < t.right_aligned.size() && t.right_aligned[i];
    out += right ? "<th class=\"n\">" : "<th>";
    out += xml_escape(t.header[i]) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      const bool right = i < t.right_aligned.size() && t.right_aligned[i];
      out += right ? "<td class=\"n\">" : "<td>";
      out += cell_html(row[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
}

void markdown_chart(std::string& out, const Chart& c) {
  out += fmt::format("![{}]({})\n\n", md(c.title), c.file);
}

void html_chart(std::string& out, const Chart& c) {
  out += "<figure>\n" + c.inline_svg + "<figcaption>Also saved as " + xml_escape(c.file) +
         "</figcaption>\n</figure>\n";
}

// How a format writes the blocks of a section: the text of paragraphs and
// list items escaped by `text` between their opening and closing marks.
struct BlockMarkup {
  std::string (*text)(std::string_view);
  const char* paragraph_open;
  const char* paragraph_close;
  const char* list_open;
  const char* item_open;
  const char* item_close;
  const char* list_close;
  void (*table)(std::string&, const Table&);
  void (*chart)(std::string&, const Chart&);
};

constexpr BlockMarkup kMarkdownBlocks{md, "", "\n\n", "", "- ", "\n", "\n", markdown_table, markdown_chart};
constexpr BlockMarkup kHtmlBlocks{xml_escape, "<p>",     "</p>\n",   "<ul>\n",  "<li>",
                                  "</li>\n",  "</ul>\n", html_table, html_chart};

void append_blocks(std::string& out, const Document& doc, const Section& s, const BlockMarkup& m) {
  for (const Block& b : s.blocks) {
    switch (b.kind) {
      case Block::Kind::kParagraph:
        out.append(m.paragraph_open).append(m.text(b.text)).append(m.paragraph_close);
        break;
      case Block::Kind::kList:
        out += m.list_open;
        for (const std::string& item : b.items) {
          out.append(m.item_open).append(m.text(item)).append(m.item_close);
        }
        out += m.list_close;
        break;
      case Block::Kind::kTable: m.table(out, b.table); break;
      case Block::Kind::kChart: m.chart(out, doc.charts.at(b.chart)); break;
    }
  }
}

}  // namespace

std::string render_markdown(const Document& doc) {
  std::string out = "# " + md(doc.title) + "\n\n";
  for (const std::string& p : doc.intro) out += md(p) + "\n\n";
  for (const Section& s : doc.sections) {
    out += "## " + md(s.heading) + "\n\n";
    append_blocks(out, doc, s, kMarkdownBlocks);
  }
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') out.pop_back();
  return out;
}

std::string render_html(const Document& doc) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + xml_escape(doc.title) + "</title>\n<style>\n" + kCss +
         "\n</style>\n</head>\n<body>\n<main>\n";
  out += "<h1>" + xml_escape(doc.title) + "</h1>\n";
  for (const std::string& p : doc.intro) out += "<p>" + xml_escape(p) + "</p>\n";
  out += "<nav>";
  for (const Section& s : doc.sections) {
    out += "<a href=\"#" + xml_escape(s.id) + "\">" + xml_escape(s.heading) + "</a>";
  }
  out += "</nav>\n";
  for (const Section& s : doc.sections) {
    out += "<section id=\"" + xml_escape(s.id) + "\"" + (s.id == "answer" ? " class=\"answer\"" : "") + ">\n";
    out += "<h2>" + xml_escape(s.heading) + "</h2>\n";
    append_blocks(out, doc, s, kHtmlBlocks);
    out += "</section>\n";
  }
  out += "</main>\n</body>\n</html>\n";
  return out;
}

Status write_report(const Document& doc, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  if (existed && !fs::is_directory(dir, ec)) {
    return invalid_argument(fmt::format("--out {}: exists and is not a folder", dir));
  }
  if (!existed) {
    fs::create_directories(dir, ec);
    if (ec) return io_error(fmt::format("{}: cannot create the folder: {}", dir, ec.message()));
  }
  auto cleanup = [&] {
    if (!existed) fs::remove(dir, ec);  // only if still empty
  };
  std::vector<std::pair<std::string, std::string>> files = {{"report.md", render_markdown(doc)},
                                                            {"report.html", render_html(doc)}};
  for (const Chart& c : doc.charts) files.emplace_back(c.file, c.standalone);
  std::vector<AtomicOutputFile> outputs;
  for (const auto& [name, text] : files) {
    Result<AtomicOutputFile> f = AtomicOutputFile::create((fs::path(dir) / name).string());
    Status st = f.ok() ? f->write(text) : f.status();
    if (!st.ok()) {
      if (f.ok()) f->abandon();
      for (AtomicOutputFile& o : outputs) o.abandon();
      cleanup();
      return st;
    }
    outputs.push_back(std::move(*f));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Status st = outputs[i].commit();
    if (!st.ok()) {
      for (size_t j = i; j < outputs.size(); ++j) outputs[j].abandon();
      for (size_t j = 0; j < i; ++j) fs::remove(outputs[j].path(), ec);
      cleanup();
      return st;
    }
  }
  return Status::ok_status();
}

}  // namespace infercost::report
