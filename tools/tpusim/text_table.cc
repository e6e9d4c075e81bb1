#include "tools/tpusim/text_table.h"

#include <algorithm>
#include <stdexcept>

namespace tpusim::cli {

TextTable::Column TextTable::Fixed(RunMetrics::Value RunMetrics::*metric) {
  const MetricField& field = FieldOf(metric);
  const std::string unit = field.unit;
  return Column{field.header, unit.empty() ? "" : "(" + unit + ")"};
}

TextTable::Column TextTable::Human(RunMetrics::Value RunMetrics::*metric) {
  return Column{FieldOf(metric).header, ""};
}

void TextTable::AddRow(std::vector<std::string> cells) {
  if (cells.size() != columns_.size())
    throw std::logic_error("a table row has another number of cells than the table has columns");
  rows_.push_back(Row{std::move(cells), {}});
}

void TextTable::AddNote(std::string note) {
  if (rows_.empty()) throw std::logic_error("a table note comes after its row");
  rows_.back().notes.push_back(std::move(note));
}

void TextTable::Print(std::ostream& out, const std::string& prefix,
                      const std::string& row_prefix) const {
  std::vector<size_t> widths;
  bool units = false;
  for (size_t c = 0; c < columns_.size(); ++c) {
    size_t width = std::max(columns_[c].header.size(), columns_[c].unit.size());
    for (const Row& row : rows_)
      width = std::max(width, row.cells[c].size());
    widths.push_back(width);
    units = units || !columns_[c].unit.empty();
  }
  const auto line = [&](const std::string& start, auto cell) {
    std::string text = start;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const std::string value = cell(c);
      const std::string pad(widths[c] - value.size(), ' ');
      if (c > 0) text += "  ";
      text += columns_[c].left ? value + pad : pad + value;
    }
    text.erase(text.find_last_not_of(' ') + 1);
    out << text << "\n";
  };
  line(prefix, [&](size_t c) { return columns_[c].header; });
  if (units) line(prefix, [&](size_t c) { return columns_[c].unit; });
  for (const Row& row : rows_) {
    line(row_prefix, [&](size_t c) { return row.cells[c]; });
    for (const std::string& note : row.notes)
      out << row_prefix << "    " << note << "\n";
  }
}

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text)
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace tpusim::cli
