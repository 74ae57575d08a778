#include "export/csv_records.h"

namespace gpuscope::prom {
namespace {

class CsvReader {
 public:
  CsvReader(std::string_view text, std::string_view filename) : text_(text), file_(filename) {}

  // The next record; false at the end of the text.
  Result<bool> Next(CsvRecord* record);

 private:
  // Length of the line end at `i` (LF, CR LF, or a CR ending the text), or 0.
  std::size_t LineEnd(std::size_t i) const {
    if (i >= text_.size()) return 0;
    if (text_[i] == '\n') return 1;
    if (text_[i] != '\r') return 0;
    if (i + 1 == text_.size()) return 1;
    return text_[i + 1] == '\n' ? 2 : 0;
  }
  Status Error(int line, std::string_view problem) const {
    return Status::InvalidArgument(std::string(file_) + ":" + std::to_string(line) + ": " +
                                   std::string(problem));
  }
  // Reads one field; sets *last when it ends the record.
  Result<std::string> Quoted(int record_line, bool* last);
  Result<std::string> Unquoted(int record_line, bool* last);

  std::string_view text_;
  std::string_view file_;
  std::size_t pos_ = 0;
  int line_ = 1;
};

Result<std::string> CsvReader::Quoted(int record_line, bool* last) {
  std::string field;
  ++pos_;  // the opening quote
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != '"') {
      if (std::size_t end = LineEnd(pos_)) {
        field.push_back('\n');  // CR LF inside quotes reads as LF
        pos_ += end;
        ++line_;
      } else {
        field.push_back(c);
        ++pos_;
      }
      continue;
    }
    if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
      field.push_back('"');
      pos_ += 2;
      continue;
    }
    ++pos_;  // the closing quote
    if (pos_ >= text_.size()) {
      *last = true;
    } else if (text_[pos_] == ',') {
      ++pos_;
    } else if (std::size_t end = LineEnd(pos_)) {
      pos_ += end;
      ++line_;
      *last = true;
    } else {
      return Error(line_, "text after the closing quote of a quoted field");
    }
    return field;
  }
  return Error(record_line, "a quoted field is not closed before the end of the file");
}

Result<std::string> CsvReader::Unquoted(int record_line, bool* last) {
  const std::size_t start = pos_;
  while (pos_ < text_.size() && text_[pos_] != ',' && LineEnd(pos_) == 0) {
    if (text_[pos_] == '"') {
      return Error(record_line,
                   "a quote inside a field that does not start with one (quote the whole field, "
                   "with no space before the opening quote)");
    }
    ++pos_;
  }
  std::string field(text_.substr(start, pos_ - start));
  if (pos_ < text_.size() && text_[pos_] == ',') {
    ++pos_;
  } else {
    if (std::size_t end = LineEnd(pos_)) {
      pos_ += end;
      ++line_;
    }
    *last = true;
  }
  return field;
}

Result<bool> CsvReader::Next(CsvRecord* record) {
  while (pos_ < text_.size()) {
    if (std::size_t end = LineEnd(pos_)) {  // an empty line
      pos_ += end;
      ++line_;
      continue;
    }
    if (text_[pos_] == '#') {  // a comment: '#' in the first column only
      std::size_t lf = text_.find('\n', pos_);
      pos_ = lf == std::string_view::npos ? text_.size() : lf + 1;
      ++line_;
      continue;
    }
    record->fields.clear();
    record->line = line_;
    bool last = false;
    while (!last) {
      Result<std::string> field = pos_ < text_.size() && text_[pos_] == '"'
                                      ? Quoted(record->line, &last)
                                      : Unquoted(record->line, &last);
      if (!field.ok()) return field.status();
      record->fields.push_back(std::move(field).value());
    }
    return true;
  }
  return false;
}

}  // namespace

Result<std::vector<CsvRecord>> ReadCsvRecords(std::string_view text, std::string_view filename) {
  CsvReader reader(text, filename);
  std::vector<CsvRecord> records;
  while (true) {
    CsvRecord record;
    Result<bool> more = reader.Next(&record);
    if (!more.ok()) return more.status();
    if (!*more) return records;
    records.push_back(std::move(record));
  }
}

}  // namespace gpuscope::prom
