// ReportTable: one table of typed columns that renders as perftest-style text,
// CSV and JSON, so the three outputs cannot drift apart (perftest's
// hand-written JSON twins did). Text columns are left-aligned under their
// headers: every value starts at its header's first character, which keeps
// rows greppable and makes awk '{print $4}' pick the same field as perftest.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/report/Json.h"

namespace nfsrdma::bench {

struct ReportColumn {
  std::string header;  // text header, unit in brackets: "BW average[Gb/sec]"
  std::string key;     // JSON/CSV key: "bw_average_gbps"
  int decimals = 0;    // 0: integer
  // Values below 1 get 6 decimals (as perftest prints slow links, e.g.
  // "0.037945" Gb/s under emulation) so ratios of small figures keep their digits.
  bool widenBelowOne = false;
};

class ReportTable {
 public:
  explicit ReportTable(std::vector<ReportColumn> columns);

  // values.size() must equal the column count (std::invalid_argument).
  void addRow(std::vector<double> values);

  const std::vector<ReportColumn>& columns() const noexcept { return columns_; }
  std::size_t rowCount() const noexcept { return rows_.size(); }
  double value(std::size_t row, std::size_t col) const { return rows_.at(row).at(col); }

  // Character offset at which column col starts in header and row lines.
  std::size_t columnStart(std::size_t col) const;
  std::string headerLine() const;
  std::string rowLine(std::size_t row) const;
  std::string text() const;      // header and rows, '\n'-terminated
  std::string csv() const;       // keys, then rows
  std::string jsonRows() const;  // [{"key": value, ...}, ...]
  // The same rows as an array member of a document being written.
  void writeRows(JsonWriter& w, std::string_view key = {}) const;
  // A value as the text/CSV/JSON cell shows it ("389.00", "5000").
  std::string cell(std::size_t row, std::size_t col) const;

 private:
  std::vector<ReportColumn> columns_;
  std::vector<std::vector<double>> rows_;
};

using BannerItems = std::vector<std::pair<std::string, std::string>>;
// A dashed rule, the centred title, then "name : value" pairs two per line.
std::string formatBanner(std::string_view title, const BannerItems& items);
// The rule line that closes a table.
std::string bannerRule();

// JSON object of string values, for banners; writeBanner puts it into a
// document being written.
std::string jsonObject(const BannerItems& items);
void writeBanner(JsonWriter& w, std::string_view key, const BannerItems& items);

}  // namespace nfsrdma::bench
