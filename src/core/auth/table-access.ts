// Access to the table API (docs/access.md, table AT): what a table request needs of a token. A table is
// covered by a token prefix as its bucket streams' names are: `__ds/table/<name>/` (so "" covers every
// table, `__ds/table/orders/` the table orders, `__ds/table/` all tables and nothing else).
//
// | #   | the request                                                   | needs                                  |
// |-----|---------------------------------------------------------------|----------------------------------------|
// | AT1 | GET /v1/table (the list)                                      | read on `__ds/table/`                  |
// | AT2 | PUT /v1/table/<name>                                          | create on the table                    |
// | AT3 | DELETE /v1/table/<name>                                       | delete on the table                    |
// | AT4 | POST .../write, POST .../bucket/<i>/write, POST .../partitions (a write adds partitions too) | append on the table |
// | AT5 | GET /v1/table/<name>, lookup, prefix, a bucket's changelog    | read on the table                      |
// | AT6 | anything else under /v1/table                                 | read on the table (the route answers 404) |
import { RESERVED_SEGMENT } from "../protocol/headers.ts";
import type { AccessNeed } from "./access.ts";

const TABLE_RESOURCE_PREFIX = `${RESERVED_SEGMENT}/table/`;

/** The name a token prefix must cover for table `name`. */
function tableResource(name: string): string {
  return `${TABLE_RESOURCE_PREFIX}${name}/`;
}

/** Table AT: `rest` is the path after `/v1/table` ("" or "/<name>..."), undecoded. */
export function tableRequestNeeds(method: string, rest: string): AccessNeed[] {
  const segments = rest.split("/").filter((segment) => segment !== "");
  if (segments.length === 0) return [{ op: "read", stream: TABLE_RESOURCE_PREFIX }];
  let name: string;
  try {
    name = decodeURIComponent(segments[0]!);
  } catch {
    name = segments[0]!;
  }
  const stream = tableResource(name);
  const last = segments.at(-1);
  if (segments.length === 1 && method === "PUT") return [{ op: "create", stream }];
  if (segments.length === 1 && method === "DELETE") return [{ op: "delete", stream }];
  const writes = (last === "write" && segments.length > 1) || (last === "partitions" && segments.length === 2);
  if (method === "POST" && writes) return [{ op: "append", stream }];
  return [{ op: "read", stream }];
}
