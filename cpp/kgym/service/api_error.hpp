// An error the API answers with: an HTTP status, a stable snake_case code and a message that
// says what was wrong and why (docs/service-api.md).
#pragma once

#include <stdexcept>
#include <string>

namespace kgym::service {

struct ApiError : std::runtime_error {
  int status;
  std::string code;
  ApiError(int http_status, std::string error_code, const std::string& message)
      : std::runtime_error(message), status(http_status), code(std::move(error_code)) {}
};

}  // namespace kgym::service
