// The service's OpenAPI 3.1 document, served at /openapi.json and printed by
// `kgym-gym openapi` (docs/openapi.json is that output; a test keeps the two equal).
#pragma once

#include <nlohmann/json.hpp>

namespace kgym::service {

nlohmann::json openapi_document();

}  // namespace kgym::service
