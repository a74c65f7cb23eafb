// What the Worker does to a request before a node sees it (src/index.ts, src/http/access.ts): re-spelled
// canonically (enterRequest) and marked with what it was authorized for (the needs of its target) and, when
// the test names one in `x-mink-token-id`, the token the Worker verified. Tests that talk to a node directly
// send their requests through this, as the Worker would; the node refuses others.
import { requestNeeds } from "../../src/core/auth/request-needs.ts";
import { parseForkSourcePath } from "../../src/core/protocol/stream-name.ts";
import { enterRequest, FORWARDED_TOKEN_ID, markAuthorized, targetOf } from "../../src/http/request-target.ts";

export function fromWorker(request: Request): Request {
  const tokenId = request.headers.get(FORWARDED_TOKEN_ID);
  const entered = enterRequest(request);
  if (!entered.ok) return request;
  const canonical = entered.value;
  const fork = canonical.headers.get("stream-forked-from");
  const source = fork === null ? null : parseForkSourcePath(fork);
  markAuthorized(canonical, requestNeeds(canonical.method, targetOf(canonical), source?.ok === true ? source.value : null), tokenId);
  return canonical;
}
