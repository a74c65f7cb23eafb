// The control run of the failover tests (docs/failover.md; KAFKA-15019: an overloaded controller fenced live
// brokers): three nodes with the short leases of failover.e2e.test.ts, 60 s of appends and reads under load,
// no fault injected: no node may be declared dead, no node restart, the coordinator epoch never moves, and
// every acknowledged append is there.
//
//   npm run test:e2e -- test/e2e/failover-control.e2e.test.ts      knob: MINK_E2E_CONTROL_SECONDS (60)
import { afterAll, beforeAll, expect, test } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { checkContent, IdempotentWriter, readWhole } from "./failover-clients.ts";
import { startService, type Service } from "./service.ts";

const SECONDS = Number(process.env["MINK_E2E_CONTROL_SECONDS"] ?? "60");
const STREAMS = 30;
const READERS = 6;

let service: Service;

async function metric(name: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/metrics`, { headers: { authorization: `Bearer ${service.adminToken}` } });
  const text = await response.text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`${name} not in /metrics:\n${text}`);
  return Number(line.split(" ")[1]);
}

async function nodeEpochs(): Promise<Map<string, number>> {
  const response = await fetch(`${service.baseUrl}/admin/nodes`, { headers: { authorization: `Bearer ${service.adminToken}` } });
  const view = (await response.json()) as { nodes: { id: string; epoch: number; live: boolean }[] };
  return new Map(view.nodes.map((node) => [node.id, node.epoch]));
}

beforeAll(async () => {
  service = await startService({
    nodes: 3,
    longPollTimeoutMs: 1_000,
    vars: { LEASE_TTL_MS: "3000", HEARTBEAT_MS: "500", COORDINATOR_TICK_MS: "500" },
  });
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

test(`a loaded cluster with no fault sees zero failovers (${SECONDS} s of appends and reads)`, async () => {
  const run = Date.now().toString(36);
  const names = Array.from({ length: STREAMS }, (_, i) => `control-${run}-${i}`);
  for (const name of names) {
    const response = await fetch(`${service.baseUrl}/v1/stream/${name}`, { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(response.status).toBe(201);
  }
  // The figures compared at the end are taken once the cluster has settled: three live nodes and a
  // coordinator holding its lease (the first acquisition, coordinator epoch 0 to 1, is not a failover).
  await eventually(
    async () => {
      const response = await fetch(`${service.baseUrl}/admin/nodes`, { headers: { authorization: `Bearer ${service.adminToken}` } });
      const view = (await response.json()) as { coordinator: { expired: boolean } | null; nodes: { live: boolean }[] };
      if (view.nodes.length !== 3 || !view.nodes.every((node) => node.live) || view.coordinator?.expired !== false) throw new NotYet(JSON.stringify(view));
      return true;
    },
    { timeoutMs: 30_000, what: "three live nodes and a coordinator" },
  );
  const epochsBefore = await nodeEpochs();
  const coordinatorBefore = await metric("mink_coordinator_epoch");
  expect(epochsBefore.size).toBe(3);
  expect(coordinatorBefore).toBeGreaterThan(0);
  const writers = names.map((name) => new IdempotentWriter(service, name));
  for (const writer of writers) writer.start();
  const endAtMs = Date.now() + SECONDS * 1_000;
  let reads = 0;
  await Promise.all(
    Array.from({ length: READERS }, async (_, r) => {
      for (let i = r; Date.now() < endAtMs; i += READERS) {
        await readWhole(service, names[i % names.length]!);
        reads++;
      }
    }),
  );
  await Promise.all(writers.map((writer) => writer.stop()));
  const appends = writers.reduce((sum, writer) => sum + writer.acks.length, 0);
  const failures = writers.reduce((sum, writer) => sum + [...writer.failures.values()].reduce((a, b) => a + b, 0), 0);
  console.log(`[control] ${SECONDS} s: ${appends} appends acknowledged, ${failures} attempts failed, ${reads} whole-stream reads`);
  expect(await metric("mink_failovers_total")).toBe(0);
  expect(await metric("mink_coordinator_epoch")).toBe(coordinatorBefore);
  expect(await nodeEpochs()).toEqual(epochsBefore);
  for (const writer of writers) expect(checkContent(writer.name, await readWhole(service, writer.name), writer)).toBeNull();
}, (SECONDS + 120) * 1_000);
