// ReportTable: the table model rendered as text, CSV and JSON, and banners.
#include "bench/report/ReportTable.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace nfsrdma::bench {

namespace {
constexpr std::size_t kMinWidth = 10;
constexpr std::size_t kGap = 4;

std::size_t widthOf(const ReportColumn& c) {
  return std::max(c.header.size(), kMinWidth) + kGap;
}

std::string formatNumber(double v, int decimals) {
  char buf[64];
  if (!std::isfinite(v)) v = 0;
  if (decimals == 0) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  return buf;
}
}  // namespace

ReportTable::ReportTable(std::vector<ReportColumn> columns) : columns_(std::move(columns)) {}

void ReportTable::addRow(std::vector<double> values) {
  if (values.size() != columns_.size()) {
    throw std::invalid_argument("ReportTable::addRow: " + std::to_string(values.size()) +
                                " values for " + std::to_string(columns_.size()) + " columns");
  }
  rows_.push_back(std::move(values));
}

std::size_t ReportTable::columnStart(std::size_t col) const {
  std::size_t pos = 1;  // perftest lines start with one space
  for (std::size_t i = 0; i < col; ++i) pos += widthOf(columns_[i]);
  return pos;
}

std::string ReportTable::cell(std::size_t row, std::size_t col) const {
  const ReportColumn& c = columns_.at(col);
  const double v = value(row, col);
  const bool widen = c.widenBelowOne && v != 0 && std::fabs(v) < 1;
  return formatNumber(v, widen ? std::max(c.decimals, 6) : c.decimals);
}

namespace {
// Appends text so it starts at `start` (at least one space after earlier text).
void placeAt(std::string& line, std::size_t start, const std::string& text) {
  if (line.size() < start) {
    line.append(start - line.size(), ' ');
  } else if (!line.empty() && line.back() != ' ') {
    line.push_back(' ');
  }
  line += text;
}
}  // namespace

std::string ReportTable::headerLine() const {
  std::string line;
  for (std::size_t c = 0; c < columns_.size(); ++c)
    placeAt(line, columnStart(c), columns_[c].header);
  return line;
}

std::string ReportTable::rowLine(std::size_t row) const {
  std::string line;
  for (std::size_t c = 0; c < columns_.size(); ++c) placeAt(line, columnStart(c), cell(row, c));
  return line;
}

std::string ReportTable::text() const {
  std::string out = headerLine() + "\n";
  for (std::size_t r = 0; r < rows_.size(); ++r) out += rowLine(r) + "\n";
  return out;
}

std::string ReportTable::csv() const {
  std::string out;
  for (std::size_t c = 0; c < columns_.size(); ++c) out += (c ? "," : "") + columns_[c].key;
  out += "\n";
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    for (std::size_t c = 0; c < columns_.size(); ++c) out += (c ? "," : "") + cell(r, c);
    out += "\n";
  }
  return out;
}

std::string ReportTable::jsonRows() const {
  JsonWriter w;
  writeRows(w);
  return w.str();
}

void ReportTable::writeRows(JsonWriter& w, std::string_view key) const {
  w.beginArray(key);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    w.beginObject();
    for (std::size_t c = 0; c < columns_.size(); ++c) w.number(columns_[c].key, cell(r, c));
    w.endObject();
  }
  w.endArray();
}

std::string bannerRule() {
  return std::string(87, '-') + "\n";
}

std::string formatBanner(std::string_view title, const BannerItems& items) {
  std::string out = bannerRule();
  const std::size_t pad = title.size() < 87 ? (87 - title.size()) / 2 : 0;
  out += std::string(pad, ' ') + std::string(title) + "\n";
  for (std::size_t i = 0; i < items.size(); ++i) {
    char buf[128];
    std::snprintf(buf, sizeof buf, " %-16s: %-24s", items[i].first.c_str(),
                  items[i].second.c_str());
    std::string piece = buf;
    if (i % 2 == 1 || i + 1 == items.size()) {
      while (!piece.empty() && piece.back() == ' ') piece.pop_back();
      piece += "\n";
    }
    out += piece;
  }
  return out + bannerRule();
}

std::string jsonObject(const BannerItems& items) {
  JsonWriter w;
  writeBanner(w, {}, items);
  std::string out = w.str();
  if (!out.empty() && out.back() == '\n') out.pop_back();  // the writer ends a document with one
  return out;
}

void writeBanner(JsonWriter& w, std::string_view key, const BannerItems& items) {
  w.beginObject(key);
  for (const auto& [name, value] : items) w.field(name, value);
  w.endObject();
}

}  // namespace nfsrdma::bench
