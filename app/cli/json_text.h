#pragma once
// The JSON literals every `uot` command prints with --json.
//
// Why not nlohmann-json (Debian nlohmann-json3-dev 3.11.2, evaluated
// 2026-11-24): the commands only write flat JSON objects, never read JSON, and
// these two functions produce the same text nlohmann's dump() does for them
// (shortest round-trip numbers, null for NaN/Inf, \u00XX escapes). The library
// is not on the GPU machine where `uot solve|bench|devices` and `uot-mpi` are
// built, and its header cost 5.2 s of compile time per translation unit here.
// The tests read the --json output of solve, bench, recolor, devices and
// uot-mpi with Python's json module, so a malformed object fails them.

#include <string>

namespace uot::cli {

// A JSON string literal: quotes, with ", \ and control characters escaped. The
// result is valid UTF-8 whatever the bytes: each byte that is not part of a
// valid UTF-8 sequence (e.g. a Latin-1 file name) becomes \ufffd, the
// replacement character (docs/SAFETY.md, "Checks before any work").
std::string jsonString(const std::string& text);

// A JSON number in the shortest form that reads back exactly; null when not finite.
std::string jsonNumber(double value);

}  // namespace uot::cli
