#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/format.h"

namespace infercost::report::svg {

const char* color(int index) {
  return kPalette[((index % kPaletteSize) + kPaletteSize) % kPaletteSize];
}

namespace {

constexpr int kWidth = 760;
constexpr double kFont = 12;        // tick labels, legend
constexpr double kCharWidth = 0.6;  // of the font size: a generous estimate for sans-serif
constexpr const char* kInk = "#222222";
constexpr const char* kGrid = "#e3e3e3";
constexpr const char* kAxis = "#555555";

double text_width(std::string_view text, double font = kFont) {
  // Count UTF-8 code points, not bytes.
  size_t chars = 0;
  for (unsigned char c : text) chars += (c & 0xC0) != 0x80;
  return double(chars) * font * kCharWidth;
}

// Shortens `text` to fit `width` pixels, ending it with "…".
std::string fit(const std::string& text, double width, double font = kFont) {
  if (text_width(text, font) <= width) return text;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = text[i];
    if ((c & 0xC0) != 0x80 && text_width(out + "..", font) > width) break;
    out += text[i];
  }
  while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
  if (!out.empty()) out.pop_back();
  return out + "\u2026";
}

std::string num(double v) {
  std::string s = fmt::format("{:.1f}", v);
  if (s == "-0.0") s = "0.0";
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

class Canvas {
 public:
  Canvas(int width, int height, const std::string& title, bool standalone) {
    if (standalone) out_ += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out_ += "<svg";
    if (standalone) out_ += " xmlns=\"http://www.w3.org/2000/svg\"";
    out_ += fmt::format(
        " viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" font-family=\"sans-serif\" "
        "font-size=\"{}\">\n",
        width, height, width, height, num(kFont));
    out_ += "<title>" + xml_escape(title) + "</title>\n";
    out_ +=
        fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", width, height);
    text(16, 24, title, "start", kInk, 15, "bold");
  }

  void line(double x1, double y1, double x2, double y2, const char* stroke, double width = 1,
            const char* dash = nullptr) {
    out_ +=
        fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n",
                    num(x1), num(y1), num(x2), num(y2), stroke, num(width),
                    dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
  }
  void text(double x, double y, const std::string& s, const char* anchor = "start", const char* fill = kInk,
            double size = kFont, const char* weight = nullptr, double rotate = 0) {
    out_ +=
        fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" fill=\"{}\"", num(x), num(y), anchor, fill);
    if (size != kFont) out_ += fmt::format(" font-size=\"{}\"", num(size));
    if (weight) out_ += fmt::format(" font-weight=\"{}\"", weight);
    if (rotate != 0) out_ += fmt::format(" transform=\"rotate({} {} {})\"", num(rotate), num(x), num(y));
    out_.append(">").append(xml_escape(s)).append("</text>\n");
  }
  void rect(double x, double y, double w, double h, const char* fill, const std::string& tooltip = "") {
    out_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"", num(x), num(y),
                        num(std::max(w, 0.0)), num(std::max(h, 0.0)), fill);
    close_with(tooltip, "rect");
  }
  void circle(double x, double y, double r, const char* fill, const char* stroke, double stroke_width,
              const std::string& tooltip) {
    out_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\"", num(x), num(y), num(r), fill);
    if (stroke) out_ += fmt::format(" stroke=\"{}\" stroke-width=\"{}\"", stroke, num(stroke_width));
    close_with(tooltip, "circle");
  }
  void polyline(const std::vector<std::pair<double, double>>& pts, const char* stroke, double width,
                const char* dash) {
    std::string p;
    for (const auto& [x, y] : pts) p.append(p.empty() ? "" : " ").append(num(x)).append(",").append(num(y));
    out_ += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n", p,
                        stroke, num(width), dash ? fmt::format(" stroke-dasharray=\"{}\"", dash) : "");
  }
  // An error bar: a line from a to b (vertical when `vertical`) with caps.
  void error_bar(double at, double a, double b, bool vertical, const char* stroke) {
    const double cap = 4;
    if (vertical) {
      line(at, a, at, b, stroke, 1.3);
      line(at - cap, a, at + cap, a, stroke, 1.3);
      line(at - cap, b, at + cap, b, stroke, 1.3);
    } else {
      line(a, at, b, at, stroke, 1.3);
      line(a, at - cap, a, at + cap, stroke, 1.3);
      line(b, at - cap, b, at + cap, stroke, 1.3);
    }
  }
  std::string finish() { return out_ + "</svg>\n"; }

 private:
  void close_with(const std::string& tooltip, const char* tag) {
    if (tooltip.empty()) {
      out_ += "/>\n";
    } else {
      out_ += "><title>" + xml_escape(tooltip) + "</title></" + tag + ">\n";
    }
  }
  std::string out_;
};

struct LegendItem {
  std::string name;
  const char* color;
  enum Kind { kBox, kLine, kDot, kDashed, kOverlay } kind = kBox;
};

constexpr double kLegendRow = 20;

// The legend as a grid: every column as wide as the widest entry (names too
// long for one row are shortened), as many columns as fit `width`.
struct Legend {
  std::vector<LegendItem> items;
  double column = 0;
  int columns = 1;
  int rows() const { return int((items.size() + columns - 1) / columns); }
};

Legend make_legend(std::vector<LegendItem> items, double width) {
  Legend l;
  l.items = std::move(items);
  for (const LegendItem& item : l.items) l.column = std::max(l.column, 24 + text_width(item.name) + 22);
  l.column = std::min(l.column, width);
  l.columns = std::max(1, int(width / std::max(l.column, 1.0)));
  return l;
}

void draw_legend(Canvas& c, const Legend& legend, double top, double left) {
  for (size_t i = 0; i < legend.items.size(); ++i) {
    const LegendItem& item = legend.items[i];
    const double x = left + double(i % legend.columns) * legend.column;
    const double y = top + double(i / legend.columns) * kLegendRow;
    switch (item.kind) {
      case LegendItem::kBox: c.rect(x, y - 10, 14, 12, item.color); break;
      case LegendItem::kLine:
        c.line(x - 2, y - 4, x + 18, y - 4, item.color, 2);
        c.circle(x + 8, y - 4, 3.5, item.color, nullptr, 0, "");
        break;
      case LegendItem::kDot: c.circle(x + 8, y - 4, 4, item.color, nullptr, 0, ""); break;
      case LegendItem::kDashed: c.line(x - 2, y - 4, x + 18, y - 4, item.color, 2, "6 4"); break;
      case LegendItem::kOverlay:
        c.line(x - 2, y - 4, x + 18, y - 4, item.color, 1.5);
        c.circle(x + 8, y - 4, 5, "#ffffff", kInk, 2, "");
        break;
    }
    c.text(x + 24, y, fit(item.name, legend.column - 30));
  }
}

int decimals_for(double v) {
  for (int d = 0; d <= 6; ++d) {
    const double scale = std::pow(10.0, d);
    if (std::fabs(std::round(v * scale) / scale - v) <= 1e-9 * std::max(1.0, std::fabs(v))) return d;
  }
  return 6;
}

// Pixel position of data value v on an axis [lo, hi] mapped to [a, b].
struct Scale {
  bool log = false;
  double lo = 0, hi = 1, a = 0, b = 1;
  double operator()(double v) const {
    const double f = log ? std::log10(std::max(v, 1e-300)) : v;
    const double flo = log ? std::log10(lo) : lo;
    const double fhi = log ? std::log10(hi) : hi;
    return fhi == flo ? (a + b) / 2 : a + (f - flo) / (fhi - flo) * (b - a);
  }
};

void empty_chart(Canvas& c, double x, double y, const std::string& text) {
  c.text(x, y, text, "middle", kAxis, 14);
}

// Horizontal grid lines with labels left of the plot, skipping labels that
// would touch the one below.
void y_ticks(Canvas& c, const Ticks& t, const Scale& sy, double left, double plot_w) {
  double last = 1e9;
  for (size_t i = 0; i < t.values.size(); ++i) {
    const double y = sy(t.values[i]);
    c.line(left, y, left + plot_w, y, kGrid);
    if (last - y >= 14) {
      c.text(left - 8, y + 4, t.labels[i], "end", kAxis);
      last = y;
    }
  }
}

// Vertical grid lines with tick marks and labels under the plot, skipping
// labels that would overlap the previous one.
void x_ticks(Canvas& c, const Ticks& t, const Scale& sx, double top, double bottom_axis) {
  double last_right = -1e9;
  for (size_t i = 0; i < t.values.size(); ++i) {
    const double x = sx(t.values[i]);
    c.line(x, top, x, bottom_axis, kGrid);
    c.line(x, bottom_axis, x, bottom_axis + 5, kAxis);
    const double w = text_width(t.labels[i]);
    if (x - w / 2 >= last_right + 6) {
      c.text(x, bottom_axis + 19, t.labels[i], "middle", kAxis);
      last_right = x + w / 2;
    }
  }
}

}  // namespace

Ticks ticks_for(const Axis& axis, double lo, double hi, const std::vector<double>& data) {
  Ticks t;
  if (axis.log) {
    lo = std::max(lo, 1e-12);
    hi = std::max(hi, lo);
    double lo_e = std::log10(lo), hi_e = std::log10(hi);
    if (hi_e - lo_e < 1e-9) {
      lo_e -= 0.3;
      hi_e += 0.3;
    }
    const double pad = 0.06 * (hi_e - lo_e);
    lo_e -= pad;
    hi_e += pad;
    t.lo = std::pow(10.0, lo_e);
    t.hi = std::pow(10.0, hi_e);
    std::set<double> distinct(data.begin(), data.end());
    if (axis.ticks_at_data && !distinct.empty() && distinct.size() <= 12) {
      t.values.assign(distinct.begin(), distinct.end());
    } else {
      // Decades on wide axes; 1-2-5 steps on narrower ones, finer when
      // that leaves fewer than three ticks.
      auto ticks_with = [&](const std::vector<double>& mults) {
        std::vector<double> out;
        for (int e = int(std::floor(lo_e)); e <= int(std::ceil(hi_e)); ++e) {
          for (double m : mults) {
            const double v = m * std::pow(10.0, e);
            if (v >= t.lo * (1 - 1e-9) && v <= t.hi * (1 + 1e-9)) out.push_back(v);
          }
        }
        return out;
      };
      t.values = ticks_with(hi_e - lo_e >= 3 ? std::vector<double>{1} : std::vector<double>{1, 2, 5});
      if (t.values.size() < 3) t.values = ticks_with({1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9});
    }
    for (double v : t.values) {
      t.decimals = std::max(t.decimals, decimals_for(v));
      t.labels.push_back(tick_label(v, decimals_for(v)));
    }
    return t;
  }
  if (axis.from_zero) {
    lo = std::min(lo, 0.0);
    hi = std::max(hi, 0.0);
  }
  if (axis.min) lo = *axis.min;
  if (axis.max) hi = *axis.max;
  if (hi <= lo) hi = lo == 0 ? 1 : lo + std::fabs(lo) * 0.5;
  const double raw = (hi - lo) / 5;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  if (!axis.min) lo = std::floor(lo / step + 1e-9) * step;
  if (!axis.max) hi = std::ceil(hi / step - 1e-9) * step;
  t.lo = lo;
  t.hi = hi;
  const double first = std::ceil(lo / step - 1e-9) * step;
  for (int k = 0;; ++k) {
    const double v = first + k * step;
    if (v > hi + step * 1e-9 || k > 100) break;
    t.values.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
  }
  t.decimals = std::max(0, -int(std::floor(std::log10(step) + 1e-9)));
  for (double v : t.values) t.labels.push_back(tick_label(v, t.decimals));
  return t;
}

namespace {

// An XY chart's legend: its series shown there, then the overlay's line.
std::vector<LegendItem> xy_legend_items(const XYChart& chart) {
  std::vector<LegendItem> items;
  for (const Series& s : chart.series) {
    if (s.in_legend) {
      items.push_back({s.name, color(s.color),
                       s.dashed ? LegendItem::kDashed
                       : s.line ? LegendItem::kLine
                                : LegendItem::kDot});
    }
  }
  if (!chart.overlay.empty() && !chart.overlay_name.empty()) {
    items.push_back({chart.overlay_name, kInk, LegendItem::kOverlay});
  }
  return items;
}

// An XY chart's data on its axes: the series' lines and error bars, the
// overlay's line, then every point (over the lines), with its mark.
void draw_xy_data(Canvas& c, const XYChart& chart, const Scale& sx, const Scale& sy) {
  for (const Series& s : chart.series) {
    if (s.line && s.points.size() > 1) {
      std::vector<std::pair<double, double>> pts;
      for (const XYPoint& p : s.points) pts.emplace_back(sx(p.x), sy(p.y));
      c.polyline(pts, color(s.color), 2, s.dashed ? "6 4" : nullptr);
    }
    for (const XYPoint& p : s.points) {
      if (p.has_error && p.y_high > p.y_low)
        c.error_bar(sx(p.x), sy(p.y_low), sy(p.y_high), true, color(s.color));
    }
  }
  if (!chart.overlay.empty()) {
    std::vector<std::pair<double, double>> pts;
    for (const auto& [x, y] : chart.overlay) pts.emplace_back(sx(x), sy(y));
    c.polyline(pts, kInk, 1.5, nullptr);
  }
  for (const Series& s : chart.series) {
    for (const XYPoint& p : s.points) {
      const std::string tip = p.tooltip.empty() ? s.name : p.tooltip;
      if (p.emphasis) {
        c.circle(sx(p.x), sy(p.y), 6, color(s.color), kInk, 2, tip);
      } else if (s.dashed) {
        c.circle(sx(p.x), sy(p.y), 3, "#ffffff", color(s.color), 1.5, tip);
      } else {
        c.circle(sx(p.x), sy(p.y), 3.5, color(s.color), nullptr, 0, tip);
      }
      if (!p.mark.empty()) c.text(sx(p.x) + 8, sy(p.y) - 8, p.mark, "start", kInk, 12, "bold");
    }
  }
}

}  // namespace

std::string render(const XYChart& chart, bool standalone) {
  const Legend legend = make_legend(xy_legend_items(chart), kWidth - 32);

  std::vector<double> xs, ys;
  for (const Series& s : chart.series) {
    for (const XYPoint& p : s.points) {
      xs.push_back(p.x);
      ys.push_back(p.y);
      if (p.has_error) {
        ys.push_back(p.y_low);
        ys.push_back(p.y_high);
      }
    }
  }
  for (const auto& [x, y] : chart.overlay) {
    xs.push_back(x);
    ys.push_back(y);
  }
  const bool empty = xs.empty();
  const auto [xmin, xmax] =
      empty ? std::pair{1.0, 10.0}
            : std::pair{*std::min_element(xs.begin(), xs.end()), *std::max_element(xs.begin(), xs.end())};
  const auto [ymin, ymax] =
      empty ? std::pair{1.0, 10.0}
            : std::pair{*std::min_element(ys.begin(), ys.end()), *std::max_element(ys.begin(), ys.end())};
  // A log axis cannot show 0 or less: such data gets a linear axis from 0.
  auto usable = [](Axis axis, double lo) {
    if (axis.log && !(lo > 0)) {
      axis.log = false;
      axis.from_zero = true;
    }
    return axis;
  };
  const Axis x_axis = usable(chart.x, xmin), y_axis = usable(chart.y, ymin);
  const Ticks xt = ticks_for(x_axis, xmin, xmax, xs);
  const Ticks yt = ticks_for(y_axis, ymin, ymax, ys);

  double ylabel_width = 0;
  for (const std::string& label : yt.labels) ylabel_width = std::max(ylabel_width, text_width(label));
  const double left = 30 + ylabel_width + 10;
  const double right = 24;
  const double top = 44;
  const double plot_h = 300;
  const double plot_w = kWidth - left - right;
  const double bottom_axis = top + plot_h;
  const double legend_top = bottom_axis + 62;
  const int height = int(legend_top + legend.rows() * kLegendRow + 6);

  Canvas c(kWidth, height, chart.title, standalone);
  const Scale sx{x_axis.log, xt.lo, xt.hi, left, left + plot_w};
  const Scale sy{y_axis.log, yt.lo, yt.hi, bottom_axis, top};

  // Grid and ticks.
  y_ticks(c, yt, sy, left, plot_w);
  x_ticks(c, xt, sx, top, bottom_axis);
  c.line(left, top, left, bottom_axis, kAxis);
  c.line(left, bottom_axis, left + plot_w, bottom_axis, kAxis);
  c.text(left + plot_w / 2, bottom_axis + 42, x_axis.title + (x_axis.log ? ", log scale" : ""), "middle");
  c.text(16, top + plot_h / 2, y_axis.title + (y_axis.log ? ", log scale" : ""), "middle", kInk, kFont,
         nullptr, -90);

  if (empty) {
    empty_chart(c, left + plot_w / 2, top + plot_h / 2, chart.empty_text);
  }
  draw_xy_data(c, chart, sx, sy);
  draw_legend(c, legend, legend_top, 16);
  return c.finish();
}

std::string render(const BarChart& chart, bool standalone) {
  std::vector<LegendItem> items;
  for (const auto& [name, index] : chart.legend) items.push_back({name, color(index), LegendItem::kBox});
  const Legend legend = make_legend(items, kWidth - 32);
  double label_width = 0, value_width = 0;
  double xmax = 0;
  for (const Bar& b : chart.bars) {
    label_width = std::max(label_width, text_width(b.label));
    value_width = std::max(value_width, text_width(b.value_text));
    xmax = std::max({xmax, b.value, b.has_error ? b.high : 0.0});
  }
  label_width = std::min(label_width, 400.0);
  const double left = 16 + label_width + 10;
  const double right = 16 + value_width + 12;
  const double plot_w = kWidth - left - right;
  const double top = 44;
  const double row = 24;
  const double plot_h = std::max(1.0, double(chart.bars.size())) * row + 8;
  const double bottom_axis = top + plot_h;
  const double legend_top = bottom_axis + 62;
  const int height = int(legend_top + legend.rows() * kLegendRow + 6);

  Axis axis;
  axis.from_zero = true;
  const Ticks xt = ticks_for(axis, 0, xmax > 0 ? xmax : 1, {});
  Canvas c(kWidth, height, chart.title, standalone);
  const Scale sx{false, xt.lo, xt.hi, left, left + plot_w};
  x_ticks(c, xt, sx, top, bottom_axis);
  c.text(left + plot_w / 2, bottom_axis + 42, chart.value_title, "middle");
  if (chart.bars.empty()) empty_chart(c, left + plot_w / 2, top + plot_h / 2, chart.empty_text);
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const Bar& b = chart.bars[i];
    const double y = top + 4 + i * row;
    const double center = y + 8;
    c.text(left - 8, center + 4, fit(b.label, label_width), "end");
    c.rect(left, y, sx(b.value) - left, 16, color(b.color), b.tooltip.empty() ? b.label : b.tooltip);
    double end = sx(b.value);
    if (b.has_error && b.high > b.low) {
      c.error_bar(center, sx(b.low), sx(b.high), false, kInk);
      end = std::max(end, sx(b.high));
    }
    if (!b.value_text.empty()) c.text(end + 6, center + 4, b.value_text, "start", kInk);
  }
  c.line(left, top, left, bottom_axis, kAxis);
  c.line(left, bottom_axis, left + plot_w, bottom_axis, kAxis);
  draw_legend(c, legend, legend_top, 16);
  return c.finish();
}

std::string render(const GroupedBarChart& chart, bool standalone) {
  std::vector<LegendItem> items;
  for (size_t k = 0; k < chart.keys.size(); ++k)
    items.push_back({chart.keys[k], color(int(k)), LegendItem::kBox});
  const Legend legend = make_legend(items, kWidth - 32);
  double ymax = 0;
  bool any = false;
  for (const auto& group : chart.values) {
    for (const auto& bar : group) {
      if (!bar) continue;
      any = true;
      ymax = std::max({ymax, bar->value, bar->has_error ? bar->high : 0.0});
    }
  }
  Axis axis;
  axis.from_zero = true;
  const Ticks yt = ticks_for(axis, 0, ymax > 0 ? ymax : 1, {});
  double ylabel_width = 0;
  for (const std::string& label : yt.labels) ylabel_width = std::max(ylabel_width, text_width(label));
  const double left = 30 + ylabel_width + 10;
  const double right = 16;
  const double plot_w = kWidth - left - right;
  const double top = 44;
  const double plot_h = 280;
  const double bottom_axis = top + plot_h;
  const size_t groups = std::max<size_t>(1, chart.groups.size());
  const double group_w = plot_w / double(groups);

  // Group labels, wrapped at spaces to the group's width, at most 3 lines.
  std::vector<std::vector<std::string>> labels;
  size_t label_lines = 1;
  for (const std::string& g : chart.groups) {
    std::vector<std::string> lines(1);
    size_t start = 0;
    while (start <= g.size()) {
      size_t end = g.find(' ', start);
      if (end == std::string::npos) end = g.size();
      const std::string word = g.substr(start, end - start);
      const std::string joined = lines.back().empty() ? word : lines.back() + " " + word;
      if (!lines.back().empty() && text_width(joined) > group_w - 6) {
        lines.push_back(word);
      } else {
        lines.back() = joined;
      }
      start = end + 1;
    }
    if (lines.size() > 3) {
      lines.resize(3);
      lines[2] += " \u2026";
    }
    for (std::string& line : lines) line = fit(line, group_w - 6);
    label_lines = std::max(label_lines, lines.size());
    labels.push_back(lines);
  }
  const double legend_top = bottom_axis + 18 + label_lines * 15 + 16;
  const int height = int(legend_top + legend.rows() * kLegendRow + 6);

  Canvas c(kWidth, height, chart.title, standalone);
  const Scale sy{false, yt.lo, yt.hi, bottom_axis, top};
  y_ticks(c, yt, sy, left, plot_w);
  c.text(16, top + plot_h / 2, chart.value_title, "middle", kInk, kFont, nullptr, -90);
  if (!any) empty_chart(c, left + plot_w / 2, top + plot_h / 2, chart.empty_text);
  for (size_t g = 0; g < chart.groups.size(); ++g) {
    const double x0 = left + g * group_w;
    std::vector<size_t> present;
    if (g < chart.values.size()) {
      for (size_t k = 0; k < chart.values[g].size(); ++k) {
        if (chart.values[g][k]) present.push_back(k);
      }
    }
    const double bar_w = present.empty() ? 0 : std::min(34.0, group_w * 0.8 / double(present.size()));
    double x = x0 + (group_w - bar_w * double(present.size())) / 2;
    for (size_t k : present) {
      const Bar& b = *chart.values[g][k];
      c.rect(x + 1, sy(b.value), bar_w - 2, bottom_axis - sy(b.value), color(int(k)),
             b.tooltip.empty() ? chart.groups[g] + ", " + chart.keys[k] : b.tooltip);
      if (b.has_error && b.high > b.low) c.error_bar(x + bar_w / 2, sy(b.low), sy(b.high), true, kInk);
      x += bar_w;
    }
    for (size_t i = 0; i < labels[g].size(); ++i) {
      c.text(x0 + group_w / 2, bottom_axis + 18 + i * 15, labels[g][i], "middle", kInk);
    }
    if (g > 0) c.line(x0, bottom_axis, x0, bottom_axis + 6, kAxis);
  }
  c.line(left, top, left, bottom_axis, kAxis);
  c.line(left, bottom_axis, left + plot_w, bottom_axis, kAxis);
  draw_legend(c, legend, legend_top, 16);
  return c.finish();
}

}  // namespace infercost::report::svg
