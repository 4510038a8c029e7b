// Text inside SVG files Ridge writes: the three characters XML reserves in text, escaped.
#pragma once

#include <string>

namespace ridge::workloads {

inline std::string svg_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

}  // namespace ridge::workloads
