// The durability test (docs/testing-e2e.md): "A test kills the running service with SIGKILL in the middle of concurrent appends, restarts it,
// and finds every acknowledged append at its offset and nothing unacknowledged half-visible; repeated for
// 20 kills." The rounds and the checks are in kill-rounds.ts; this file starts mink (the local runtime, its whole
// process group SIGKILLed by service.kill()) and restarts it on the same port and persist dir.
//
//   npm run test:e2e -- test/e2e/kill-restart.e2e.test.ts
//   knobs: MINK_E2E_KILL_ROUNDS (20), MINK_E2E_KILL_NODES (3), MINK_E2E_KILL_APPENDERS (16),
//          MINK_E2E_KILL_STREAMS (4), MINK_E2E_KILL_S3=external (MINK_TEST_S3_*, radosgw),
//          MINK_E2E_KILL_SEED (the kill points; a fresh one is printed), MINK_E2E_KILL_AFTER_ACKS_MAX (200)

import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ClientHistory } from "./client-history.ts";
import { runKillRounds } from "./kill-rounds.ts";
import { startService, type Service } from "./service.ts";

function intFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name}: not a positive integer: ${raw}`);
  return value;
}

const ROUNDS = intFromEnv("MINK_E2E_KILL_ROUNDS", 20);
const NODES = intFromEnv("MINK_E2E_KILL_NODES", 3);
const APPENDERS = intFromEnv("MINK_E2E_KILL_APPENDERS", 16);
const STREAMS = intFromEnv("MINK_E2E_KILL_STREAMS", 4);
/** Each round kills after 1..this many acknowledged appends (once every appender has one). */
const KILL_AFTER_ACKS_MAX = intFromEnv("MINK_E2E_KILL_AFTER_ACKS_MAX", 200);
/** The seed of the kill points: printed, and MINK_E2E_KILL_SEED repeats them. */
const SEED = intFromEnv("MINK_E2E_KILL_SEED", 1 + Math.floor(Math.random() * 2_147_483_646));

describe("SIGKILL in the middle of concurrent appends", () => {
  let service: Service | undefined;

  beforeAll(async () => {
    // No persistDir: the service makes a temporary one (removed by stop() or at exit) and every restart()
    // reuses it, so Durable Object state survives each kill. The embedded S3 endpoint is never killed.
    service = await startService({
      nodes: NODES,
      longPollTimeoutMs: 500,
      s3: process.env.MINK_E2E_KILL_S3 === "external" ? "external" : "embedded",
    });
  });

  afterAll(async () => {
    await service?.stop();
  });

  test(`every acknowledged append survives ${ROUNDS} kills, and no append is half-visible`, async () => {
    const running = service;
    if (running === undefined) throw new Error("service not started");
    console.log(`[kill-restart] seed ${SEED} (MINK_E2E_KILL_SEED=${SEED} repeats the kill points)`);
    const report = await runKillRounds(running, {
      rounds: ROUNDS,
      streams: STREAMS,
      appenders: APPENDERS,
      killAfterAcks: { min: 1, max: KILL_AFTER_ACKS_MAX },
      seed: SEED,
      offsetSamplesPerStream: 8,
      namePrefix: `kill-${Date.now().toString(36)}`,
      log: (line) => console.log(`[kill-restart] ${line}`),
      history: new ClientHistory(),
    });
    console.log(`[kill-restart] ${JSON.stringify(report)}`);
    expect(report.rounds).toBe(ROUNDS);
    expect(report.acknowledged).toBeGreaterThan(0);
    // Every append and read of every round, with when it was sent and answered, and a final read of each
    // stream: the history is linearizable against the stream model (test/support/linearizability.ts).
    expect(report.linearizability.startsWith("linearizable"), report.linearizability).toBe(true);
  }, 30 * 60_000);
});
