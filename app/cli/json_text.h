#pragma once
// The JSON literals every `uot` command prints with --json.

#include <string>

namespace uot::cli {

// A JSON string literal: quotes, with ", \ and control characters escaped.
std::string jsonString(const std::string& text);

// A JSON number in the shortest form that reads back exactly; null when not finite.
std::string jsonNumber(double value);

}  // namespace uot::cli
