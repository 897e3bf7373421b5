#pragma once
// The one exception type that crosses the boundaries of core/ and gpu/.
// Its message is written for a person: what is wrong, and what to do.

#include <stdexcept>
#include <string>

namespace uot {

enum class ErrorCode {
    InvalidArgument,  // bad parameters, sizes or values supplied by the caller
    Io,               // a file could not be read or written
    Numerical,        // the iteration under/overflowed and could not continue
    Unavailable,      // the requested backend is not built in or has no device
    Device,           // the GPU or its driver reported a failure
    OutOfMemory       // host or device memory could not be allocated
};

class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string& message) : std::runtime_error(message), m_code(code) {}
    ErrorCode code() const noexcept { return m_code; }

private:
    ErrorCode m_code;
};

}  // namespace uot
