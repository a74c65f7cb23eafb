// The phases of the access benchmark (test/bench/access.bench.ts): token checks in this process, appends
// through a running service at 32 connections, and appends while one node's live-reader cap is full.
import { setMaxListeners } from "node:events";
import { Pool } from "undici";
import { decideAccess } from "../../../src/core/auth/access.ts";
import { mintClaims } from "../../../src/core/auth/claims.ts";
import { signToken, verifyToken } from "../../../src/auth/token-codec.ts";
import { summarize, type LatencySummary } from "../service-bench/stats.ts";

const REQUEST_TIMEOUT_MS = 15_000;

/** CPU µs (user + system of this process) per token check: verify the signature, read the claims, decide. */
export async function tokenCheckCpuMicros(secret: string, checks: number, valid: boolean): Promise<number> {
  const claims = mintClaims({ prefixes: ["bench/"], ops: ["read", "append"], ttlSeconds: 3600 }, "bench", Date.now());
  const token = valid ? await signToken(claims, secret) : await signToken(claims, `${secret}-other`);
  const needs = [{ op: "append" as const, stream: "bench/s" }];
  for (let i = 0; i < 1000; i++) await verifyToken(token, secret); // warm-up
  const before = process.cpuUsage();
  for (let i = 0; i < checks; i++) {
    const presented = await verifyToken(token, secret);
    const decision = decideAccess({ token: presented, needs, nowMs: Date.now(), isRevoked: () => false });
    if (decision.ok !== valid) throw new Error("the benchmark's token was decided wrongly");
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / checks;
}

export interface AppendLoad {
  readonly acknowledged: number;
  readonly failed: number;
  readonly appendsPerSecond: number;
  readonly latency: LatencySummary;
}

/** `connections` workers appending back to back to their own stream (created first) for `durationMs`. */
export async function appendLoad(
  baseUrl: string,
  names: readonly string[],
  headers: Record<string, string>,
  durationMs: number,
): Promise<AppendLoad> {
  const pool = new Pool(baseUrl, { connections: names.length, pipelining: 1, headersTimeout: REQUEST_TIMEOUT_MS });
  try {
    for (const name of names) {
      const created = await pool.request({ path: `/v1/stream/${name}`, method: "PUT", headers: { ...headers, "content-type": "text/plain" } });
      await created.body.text();
      if (created.statusCode !== 201 && created.statusCode !== 200) throw new Error(`PUT ${name}: ${created.statusCode}`);
    }
    const samples: number[] = [];
    let failed = 0;
    const started = performance.now();
    await Promise.all(
      names.map(async (name, worker) => {
        for (let i = 0; performance.now() - started < durationMs; i++) {
          const sent = performance.now();
          const response = await pool.request({
            path: `/v1/stream/${name}`,
            method: "POST",
            headers: { ...headers, "content-type": "text/plain" },
            body: `w${worker}-${i};`.padEnd(100, "x"),
          });
          await response.body.text();
          if (response.statusCode >= 200 && response.statusCode < 300) samples.push(performance.now() - sent);
          else failed++;
        }
      }),
    );
    const elapsedMs = performance.now() - started;
    return { acknowledged: samples.length, failed, appendsPerSecond: (samples.length / elapsedMs) * 1000, latency: summarize(samples) };
  } finally {
    await pool.destroy();
  }
}

export interface HeldReaders {
  /** Long-polls in flight (the node holds them until data or its timeout, or answers 429 at once). */
  readonly held: () => number;
  /** Answered 429 at once (over the cap). */
  readonly refused: () => number;
  readonly stop: () => Promise<void>;
}

/** `count` long-polls at the tail of `name`, each renewed as soon as it is answered, until stopped. */
export function holdLongPolls(baseUrl: string, name: string, count: number, headers: Record<string, string>): HeldReaders {
  const pool = new Pool(baseUrl, { connections: count, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const controller = new AbortController();
  setMaxListeners(count + 16, controller.signal); // one listener per held request
  let held = 0;
  let refused = 0;
  let stopping = false;
  const loops = Array.from({ length: count }, async () => {
    while (!stopping) {
      let retryAfterMs = 0;
      held++;
      try {
        const response = await pool.request({ path: `/v1/stream/${name}?offset=now&live=long-poll`, method: "GET", headers, signal: controller.signal });
        await response.body.text();
        if (response.statusCode === 429) {
          refused++;
          retryAfterMs = Number(response.headers["retry-after"] ?? "1") * 1000;
        }
      } catch {
        // Aborted on stop.
      } finally {
        held--;
      }
      // Over the cap: the server said when to come back; the load generator honours it.
      if (retryAfterMs > 0 && !stopping) await new Promise((resolve) => setTimeout(resolve, retryAfterMs));
    }
  });
  return {
    held: () => held,
    refused: () => refused,
    stop: async () => {
      stopping = true;
      controller.abort();
      await Promise.allSettled(loops);
      await pool.destroy();
    },
  };
}
