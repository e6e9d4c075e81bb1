#include "traces/trace_sink.h"

#include <algorithm>
#include <cctype>

#include "traces/chrome_json_writer.h"
#include "traces/perfetto_writer.h"
#include "traces/trace_output.h"

namespace tpusim::traces {

TraceFormat TraceFormatForPath(std::string_view path) {
  constexpr std::string_view kJsonSuffix = ".json";
  if (path.size() < kJsonSuffix.size()) return TraceFormat::kPerfetto;
  const std::string_view suffix = path.substr(path.size() - kJsonSuffix.size());
  const bool is_json =
      std::equal(suffix.begin(), suffix.end(), kJsonSuffix.begin(),
                 [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  return is_json ? TraceFormat::kChromeJson : TraceFormat::kPerfetto;
}

std::unique_ptr<TraceSink> OpenTraceFile(const std::string& path) {
  return OpenTraceFile(path, TraceFormatForPath(path));
}

std::unique_ptr<TraceSink> OpenTraceFile(const std::string& path, TraceFormat format) {
  std::unique_ptr<std::ostream> file = internal::OpenOutputFile(path);
  const std::string destination = "\"" + path + "\"";
  switch (format) {
    case TraceFormat::kChromeJson:
      return std::make_unique<ChromeJsonWriter>(std::move(file), destination);
    case TraceFormat::kPerfetto:
      break;
  }
  return std::make_unique<PerfettoWriter>(std::move(file), destination);
}

}  // namespace tpusim::traces
