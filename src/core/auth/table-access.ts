// Access to the table API (docs/access.md, table AT): what a table request needs of a token. A table is
// covered by a token prefix as its bucket streams' names are: `__ds/table/<name>/` (so "" covers every
// table, `__ds/table/orders/` the table orders, `__ds/table/` all tables and nothing else). Decided on the
// request's target (src/core/protocol/request-target.ts), the same value the table API acts on.
//
// | #   | the request                                                   | needs                                  |
// |-----|---------------------------------------------------------------|----------------------------------------|
// | AT1 | GET /v1/table (the list)                                      | read on `__ds/table/`                  |
// | AT2 | PUT /v1/table/<name>                                          | create on the table                    |
// | AT3 | DELETE /v1/table/<name>                                       | delete on the table                    |
// | AT4 | POST .../write, POST .../bucket/<i>/write, POST .../partitions (a write adds partitions too) | append on the table |
// | AT5 | GET /v1/table/<name>, lookup, prefix, a bucket's changelog    | read on the table                      |
// | AT6 | anything else under /v1/table (an unknown target)             | a valid token (the route answers 404)  |
import { RESERVED_SEGMENT } from "../protocol/headers.ts";
import type { RequestTarget } from "../protocol/request-target.ts";
import type { AccessNeed } from "./access.ts";

const TABLE_RESOURCE_PREFIX = `${RESERVED_SEGMENT}/table/`;

/** The name a token prefix must cover for table `name`. */
function tableResource(name: string): string {
  return `${TABLE_RESOURCE_PREFIX}${name}/`;
}

type TableTarget = Extract<RequestTarget, { kind: "table_list" | "table" | "bucket" }>;

/** Table AT on a table request's target. */
export function tableRequestNeeds(method: string, target: TableTarget): AccessNeed[] {
  if (target.kind === "table_list") return [{ op: "read", stream: TABLE_RESOURCE_PREFIX }];
  const stream = tableResource(target.table);
  if (target.kind === "table" && target.action === "definition") {
    if (method === "PUT") return [{ op: "create", stream }];
    if (method === "DELETE") return [{ op: "delete", stream }];
  }
  const action = target.kind === "table" ? target.action : target.op;
  if (method === "POST" && (action === "write" || action === "partitions")) return [{ op: "append", stream }];
  return [{ op: "read", stream }];
}
