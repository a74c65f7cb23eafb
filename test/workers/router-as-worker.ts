// The router's entry points as the Worker calls them: after its entry and access check (test/support/from-worker.ts),
// so the requests the router sends on carry what was authorized, as in production.
import { routeRequest as route, toNodeAddress as toNode, type RouterDeps } from "../../src/router/router.ts";
import type { Env } from "../../src/env.ts";
import { fromWorker } from "../support/from-worker.ts";

export type { RouterDeps };

export function routeRequest(env: Env, request: Request, deps?: RouterDeps): Promise<Response> {
  return route(env, fromWorker(request), deps);
}

export function toNodeAddress(env: Env, nodeId: string, request: Request): Promise<Response> {
  return toNode(env, nodeId, fromWorker(request));
}
