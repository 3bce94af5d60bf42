// The OpenAPI 3.0 document of the /v1/ cache API, served at
// GET /v1/openapi.json. service_test.cc checks that every route the service
// answers is described here and that the document is valid JSON.
#include "src/serve/service.h"

namespace toolcache::serve {

std::string_view OpenApiJson() {
  static constexpr std::string_view kDoc = R"JSON({
  "openapi": "3.0.3",
  "info": {
    "title": "toolcache serve: cache API",
    "version": "1",
    "description": "JSON over HTTP for frameworks that run their own tools. Every cache decision is made by the toolcache engine (classifier, TTLs, policy, invalidation). With tenants configured, every /v1/ request needs 'Authorization: Bearer <token>'; the tenant is the cache scope. Errors are {\"error\": {\"code\", \"message\"}} with a 4xx status."
  },
  "components": {
    "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
    "schemas": {
      "Call": {
        "type": "object",
        "required": ["server", "tool"],
        "properties": {
          "server": {"type": "string", "description": "server identity (config servers.<name> applies)"},
          "tool": {"type": "string"},
          "arguments": {"type": "object", "description": "tool arguments; default {}"},
          "user": {"type": "string", "description": "caller identity: the policy's grouping; under scope: user also part of the key (required for cacheable calls)"}
        }
      },
      "Result": {
        "type": "object",
        "properties": {
          "result": {"description": "the tool's result: a JSON object (an MCP tool result); any JSON value when isError"},
          "isError": {"type": "boolean", "default": false},
          "complete": {"type": "boolean", "default": true},
          "latencySeconds": {"type": "number", "minimum": 0},
          "cost": {"type": "number", "minimum": 0}
        }
      },
      "Verdict": {
        "type": "object",
        "properties": {
          "cacheable": {"type": "boolean"},
          "reason": {"type": "string", "enum": ["cacheable", "hard_excluded", "operator_excluded", "command", "ttl_too_short", "open_world_needs_ttl", "error_result", "incomplete_result", "invalid_arguments", "user_required", "declared_by_server", "reserved_tool_name"]},
          "requestType": {"type": "string", "enum": ["INFORMATIONAL", "COMMAND"]},
          "ttlSeconds": {"type": "number"},
          "source": {"type": "string"},
          "detail": {"type": "string"},
          "parameterCategory": {"type": "string"}
        }
      },
      "Error": {
        "type": "object",
        "properties": {"error": {"type": "object", "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}
      }
    },
    "responses": {
      "BadRequest": {"description": "malformed body or field", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
      "Unauthorized": {"description": "missing or unknown bearer token", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    }
  },
  "security": [{"bearer": []}],
  "paths": {
    "/v1/lookup": {
      "post": {
        "summary": "Is this call cached? (no flight is opened; pair with /v1/record)",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Call"}}}},
        "responses": {
          "200": {"description": "hit: {hit: true, result, ageSeconds}; miss: {hit: false, cacheable, reason, verdict}"},
          "400": {"$ref": "#/components/responses/BadRequest"},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/v1/record": {
      "post": {
        "summary": "A call completed by the caller: offered to the policy (a COMMAND invalidates)",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"allOf": [{"$ref": "#/components/schemas/Call"}, {"$ref": "#/components/schemas/Result"}]}}}},
        "responses": {
          "200": {"description": "{admitted, alreadyCached, stale, cacheable, reason, verdict}"},
          "400": {"$ref": "#/components/responses/BadRequest"},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/v1/begin": {
      "post": {
        "summary": "Single-flight start: a hit, a ticket to run the tool and complete, or (an identical call in flight) the leader's result when it completes",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"allOf": [{"$ref": "#/components/schemas/Call"}, {"type": "object", "properties": {"waitSeconds": {"type": "number"}}}]}}}},
        "responses": {
          "200": {"description": "{action: hit, result, ageSeconds} | {action: forward, ticket, cacheable, reason, leaseSeconds, verdict} | {action: coalesced, result} | {action: forward, reason: wait_timeout|leader_failed|open_ticket_limit} (no ticket: run the tool yourself)"},
          "400": {"$ref": "#/components/responses/BadRequest"},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/v1/complete": {
      "post": {
        "summary": "Ends a ticket from /v1/begin with the tool's result; answers coalesced waiters",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"allOf": [{"type": "object", "required": ["ticket"], "properties": {"ticket": {"type": "string"}}}, {"$ref": "#/components/schemas/Result"}]}}}},
        "responses": {
          "200": {"description": "{admitted, reason, waitersAnswered}"},
          "400": {"$ref": "#/components/responses/BadRequest"},
          "401": {"$ref": "#/components/responses/Unauthorized"},
          "404": {"description": "unknown, completed, expired or another tenant's ticket"}
        }
      }
    },
    "/v1/invalidate": {
      "post": {
        "summary": "Drops a server's entries (all tenants: invalidation is never narrowed), or those naming a resource",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["server"], "properties": {"server": {"type": "string"}, "resource": {"type": "string"}}}}}},
        "responses": {
          "200": {"description": "{invalidated: true, entriesDropped}: every tenant's entries of the server or resource are dropped; entriesDropped counts the caller's own tenant's only (its users' too under scope: user), from this process's memory"},
          "400": {"$ref": "#/components/responses/BadRequest"},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/v1/explain": {
      "post": {
        "summary": "Why a call is or is not cacheable, its TTL, whether it is cached now",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Call"}}}},
        "responses": {
          "200": {"description": "{cacheable, reason, ttlSeconds, cached, ageSeconds?, valueScore (the policy score of the cached entry; null when not cached or the policy has none), verdict}"},
          "400": {"$ref": "#/components/responses/BadRequest"},
          "401": {"$ref": "#/components/responses/Unauthorized"}
        }
      }
    },
    "/v1/stats": {
      "get": {
        "summary": "The caller's tenant counters by outcome",
        "responses": {"200": {"description": "{tenant, calls: {hit, miss, coalesced, bypass}}"}, "401": {"$ref": "#/components/responses/Unauthorized"}}
      }
    }
  }
}
)JSON";
  return kDoc;
}

}  // namespace toolcache::serve
