// What a request needs of a token, from its target (src/core/protocol/request-target.ts): table AN for a
// stream, table AT for a table or bucket. The Worker decides on it (table AC) and the node checks its own
// reading of a forwarded request against what the Worker authorized, with the same function.
import type { RequestTarget } from "../protocol/request-target.ts";
import { checkStreamName } from "../protocol/stream-name.ts";
import { streamRequestNeeds, type AccessNeed } from "./access.ts";
import { tableRequestNeeds } from "./table-access.ts";

/**
 * The needs of a stream, table or bucket request; a stream name that does not parse needs only a valid token
 * (the node answers 400). The subscription API has its own table (AS, subscription-access.ts): nothing here.
 */
export function requestNeeds(method: string, target: RequestTarget, forkedFrom: string | null): AccessNeed[] {
  switch (target.kind) {
    case "stream": {
      const name = checkStreamName(target.name);
      return name.ok ? streamRequestNeeds(method, name.value, forkedFrom) : [];
    }
    case "table_list":
    case "table":
    case "bucket":
      return tableRequestNeeds(method, target);
    case "jwks":
    case "subscription":
    case "reserved":
    case "health":
    case "operator":
    case "unknown":
      return [];
  }
}
