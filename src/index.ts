// The mink Worker: the router in front of the metadata log and the stream nodes.
import type { Env } from "./env.ts";

export { MetaLog } from "../durable-objects/meta-log.ts";
export { StreamNode } from "../durable-objects/stream-node.ts";

export default {
  async fetch(_request: Request, _env: Env): Promise<Response> {
    return Response.json({ error: { code: "not_found", message: "no such route" } }, { status: 404 });
  },
} satisfies ExportedHandler<Env>;
