#include "kgym/service/openapi.hpp"

#include "kgym/check/options.hpp"

namespace kgym::service {

using nlohmann::json;

namespace {

json ref(const char* name) { return {{"$ref", std::string("#/components/schemas/") + name}}; }

json json_content(const json& schema) { return {{"application/json", {{"schema", schema}}}}; }

json error_responses(std::initializer_list<const char*> codes) {
  json out = json::object();
  for (const char* code : codes) {
    out[code] = {{"description", "error"}, {"content", json_content(ref("Error"))}};
  }
  return out;
}

json merged(json a, const json& b) {
  a.update(b);
  return a;
}

json wait_parameter() {
  return {{"name", "wait"},
          {"in", "query"},
          {"required", false},
          {"description", "seconds to hold the answer for the job(s) to finish (at most 600)"},
          {"schema", {{"type", "number"}, {"minimum", 0}}}};
}

}  // namespace

json openapi_document() {
  json schemas = {
      {"Error",
       {{"type", "object"},
        {"required", {"error"}},
        {"properties",
         {{"error",
           {{"type", "object"},
            {"required", {"code", "message"}},
            {"properties",
             {{"code", {{"type", "string"}}}, {"message", {{"type", "string"}}}}}}}}}}},
      {"Options",
       {{"type", "object"},
        {"additionalProperties", false},
        {"properties", check::options_schema(true)}}},
      {"EvaluateRequest",
       {{"type", "object"},
        {"additionalProperties", false},
        {"required", {"task", "candidate"}},
        {"properties",
         {{"task",
           {{"type", "object"},
            {"additionalProperties", false},
            {"properties", {{"id", {{"type", "string"}}}, {"source", {{"type", "string"}}}}}}},
          {"candidate",
           {{"type", "object"},
            {"additionalProperties", false},
            {"properties",
             {{"source", {{"type", "string"}}}, {"completion", {{"type", "string"}}}}}}},
          {"options", ref("Options")},
          {"reward",
           {{"description", "a built-in reward spec name or a spec object (docs/rl-maths.md)"},
            {"oneOf", {{{"type", "string"}}, {{"type", "object"}}}}}}}}}},
      {"Job",
       {{"type", "object"},
        {"required", {"id", "status"}},
        {"properties",
         {{"id", {{"type", "string"}}},
          {"status", {{"enum", {"queued", "running", "done", "cancelled", "failed"}}}},
          {"task_id", {{"type", "string"}}},
          {"priority", {{"type", "integer"}}},
          {"cached", {{"type", "boolean"}}},
          {"attempts", {{"type", "integer"}}},
          {"created_at", {{"type", "number"}}},
          {"started_at", {{"type", {"number", "null"}}}},
          {"finished_at", {{"type", {"number", "null"}}}},
          {"result", {{"description", "the Result (docs/result-schema.md)"}}},
          {"reward", {{"type", {"number", "null"}}}},
          {"reward_detail", {{"type", {"object", "null"}}}},
          {"feedback", {{"type", {"string", "null"}}}},
          {"request", {{"type", "object"}}},
          {"error", {{"type", "object"}}}}}}},
      {"Health",
       {{"type", "object"},
        {"required", {"status", "workers", "queue_depth", "running", "devices"}},
        {"properties",
         {{"status",
           {{"enum", {"ok", "degraded", "stopping"}},
            {"description",
             "degraded (answered 503): a full disk or a database that cannot be "
             "written; `problems` says what"}}},
          {"problems", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"retention",
           {{"type", {"object", "null"}},
            {"description", "the last retention pass (POST /v1/admin/retention answers one)"}}},
          {"workers",
           {{"type", "integer"},
            {"description", "concurrent jobs: this host's slots, or the pool's live workers'"}}},
          {"queue_depth", {{"type", "integer"}}},
          {"running", {{"type", "integer"}, {"description", "jobs started and not answered"}}},
          {"ending",
           {{"type", "integer"},
            {"description",
             "jobs answered at their judge's report whose slot is still ending them (the "
             "runners' teardown, the judge's exit, the clean-up); absent on a pool's front door"}}},
          {"devices",
           {{"type", "array"},
            {"items", {{"type", "string"}}},
            {"description", "this host's workers, or the pool's as host/gpuN"}}},
          {"gpu_keepers",
           {{"type", "object"},
            {"additionalProperties", {{"type", "string"}}},
            {"description",
             "per GPU of this host (gpuN): whether its keeper holds a CUDA context (`holding`, "
             "`starting`, or `not holding: why`); absent on a CPU or a pool's front door"}}},
          {"pool",
           {{"description", "present only on a pool's front door (docs/scale.md)"},
            {"type", "object"},
            {"required", {"redis", "reachable"}},
            {"properties",
             {{"redis", {{"type", "string"}, {"description", "the Redis address and pool name"}}},
              {"reachable", {{"type", "boolean"}}},
              {"error", {{"type", "string"}, {"description", "why Redis is not reachable"}}},
              {"workers",
               {{"type", "array"},
                {"description", "live workers, from their heartbeats"},
                {"items",
                 {{"type", "object"},
                  {"properties",
                   {{"name", {{"type", "string"}}},
                    {"host", {{"type", "string"}}},
                    {"pid", {{"type", "integer"}}},
                    {"device", {{"type", "string"}}},
                    {"slots", {{"type", "integer"}}},
                    {"busy", {{"type", "integer"}}},
                    {"devices", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                    {"software", {{"type", "object"}}},
                    {"lease_s", {{"type", "number"}}}}}}}}}}}}}}}}},
  };
  json paths = {
      {"/v1/evaluate",
       {{"post",
         {{"summary", "Queue one evaluation"},
          {"parameters", {wait_parameter()}},
          {"requestBody", {{"required", true}, {"content", json_content(ref("EvaluateRequest"))}}},
          {"responses",
           merged(json{{"200",
                        {{"description", "finished job"}, {"content", json_content(ref("Job"))}}},
                       {"202",
                        {{"description", "queued or running job"},
                         {"content", json_content(ref("Job"))}}}},
                  error_responses({"400", "401", "403", "404", "413", "429", "503"}))}}}}},
      {"/v1/evaluate:batch",
       {{"post",
         {{"summary", "Queue several evaluations, all or none"},
          {"parameters", {wait_parameter()}},
          {"requestBody",
           {{"required", true},
            {"content", json_content({{"type", "object"},
                                      {"required", {"requests"}},
                                      {"properties",
                                       {{"requests",
                                         {{"type", "array"},
                                          {"maxItems", 1024},
                                          {"items", ref("EvaluateRequest")}}}}}})}}},
          {"responses",
           merged(
               json{{"200",
                     {{"description", "all finished"},
                      {"content",
                       json_content({{"type", "object"},
                                     {"properties",
                                      {{"jobs", {{"type", "array"}, {"items", ref("Job")}}}}}})}}},
                    {"202", {{"description", "some not finished yet"}}}},
               error_responses({"400", "401", "403", "404", "413", "429", "503"}))}}}}},
      {"/v1/jobs/{id}",
       {{"parameters",
         {{{"name", "id"}, {"in", "path"}, {"required", true}, {"schema", {{"type", "string"}}}}}},
        {"get",
         {{"summary", "A job"},
          {"parameters", {wait_parameter()}},
          {"responses",
           merged(
               json{{"200", {{"description", "the job"}, {"content", json_content(ref("Job"))}}}},
               error_responses({"401", "404"}))}}},
        {"delete",
         {{"summary", "Cancel a job (its own with the submit scope, any job as admin)"},
          {"responses",
           merged(
               json{{"200", {{"description", "the job"}, {"content", json_content(ref("Job"))}}}},
               error_responses({"401", "403", "404"}))}}}}},
      {"/v1/tasks",
       {{"get",
         {{"summary", "The loaded task suite"},
          {"responses", {{"200", {{"description", "tasks"}}}}}}}}},
      {"/healthz",
       {{"get",
         {{"summary", "Liveness and load (no token needed)"},
          {"responses",
           {{"200", {{"description", "ok"}, {"content", json_content(ref("Health"))}}},
            {"503",
             {{"description", "degraded (or stopping)"},
              {"content", json_content(ref("Health"))}}}}}}}}},
      {"/metrics",
       {{"get",
         {{"summary", "Prometheus metrics (read_all or admin scope)"},
          {"responses", merged(json{{"200", {{"description", "text/plain; version=0.0.4"}}}},
                               error_responses({"401", "403"}))}}}}},
      {"/v1/admin/retention",
       {{"post",
         {{"summary", "Run a retention pass now (admin scope)"},
          {"parameters",
           {{{"name", "force"},
             {"in", "query"},
             {"required", false},
             {"description",
              "delete by age even a share above --retain-max-share (after a clock that "
              "jumped, or a long stop, was checked)"},
             {"schema", {{"type", "boolean"}}}}}},
          {"responses", merged(json{{"200",
                                     {{"description", "what the pass did"},
                                      {"content", json_content({{"type", "object"}})}}}},
                               error_responses({"401", "403"}))}}}}},
      {"/openapi.json",
       {{"get",
         {{"summary", "This document"}, {"responses", {{"200", {{"description", "ok"}}}}}}}}},
  };
  return {{"openapi", "3.1.0"},
          {"info",
           {{"title", "kgym gym service"},
            {"version", "1"},
            {"description", "Evaluates Triton kernel candidates; see docs/service-api.md"}}},
          {"components",
           {{"schemas", schemas},
            {"securitySchemes", {{"bearer", {{"type", "http"}, {"scheme", "bearer"}}}}}}},
          {"security", json::array({json::object(), {{"bearer", json::array()}}})},
          {"paths", paths}};
}

}  // namespace kgym::service
