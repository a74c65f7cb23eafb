// Responses of streams of active types (src/core/protocol/active-content.ts, table ACT) leave every entry
// of the Worker sandboxed and as attachments, whichever node served them and whatever the auth mode.
import type { MiddlewareHandler } from "hono";
import { ACTIVE_CONTENT_HEADERS, isActiveContentType } from "../core/protocol/active-content.ts";

export const activeContentGuard: MiddlewareHandler = async (c, next) => {
  await next();
  const contentType = c.res.headers.get("content-type");
  if (contentType === null || !isActiveContentType(contentType)) return;
  c.res = new Response(c.res.body, c.res);
  for (const [name, value] of Object.entries(ACTIVE_CONTENT_HEADERS)) c.res.headers.set(name, value);
};
