// Failover end to end (docs/failover.md): three nodes under the local runtime with
// short leases (LEASE_TTL_MS=3000, HEARTBEAT_MS=500, COORDINATOR_TICK_MS=500) and the fault switch on.
// Idempotent writers append to 30 streams through the router the whole time; faults are injected with
// POST /admin/faults. Each test names the seed rule it proves.
//
//   npm run test:e2e -- test/e2e/failover.e2e.test.ts
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { eventually, NotYet } from "../support/eventually.ts";
import { checkContent, IdempotentWriter, nodeOf, percentiles, readWhole } from "./failover-clients.ts";
import { startService, type Service } from "./service.ts";

const LEASE_TTL_MS = 3_000;
const HEARTBEAT_MS = 500;
const COORDINATOR_TICK_MS = 500;
const STREAMS = 30;

interface AdminNode {
  id: string;
  epoch: number;
  live: boolean;
  coordinator: boolean;
  declaredDead: { epoch: number } | null;
  streams: number;
}
interface AdminNodes {
  coordinator: { holder: string; coordinatorEpoch: number; expired: boolean } | null;
  nodes: AdminNode[];
}

let service: Service;
const run = Date.now().toString(36);

async function admin<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

const nodes = (): Promise<AdminNodes> => admin<AdminNodes>("GET", "/admin/nodes");
const ownerOf = async (name: string): Promise<string> => (await admin<{ owner: string }>("GET", `/admin/streams/${name}`)).owner;
const fault = (node: string, mode: string, ms?: number): Promise<unknown> => admin("POST", "/admin/faults", { node, mode, ...(ms === undefined ? {} : { ms }) });

async function allLive(): Promise<AdminNodes> {
  return eventually(
    async () => {
      // Any stream request makes the router start every node (a node registers when it starts).
      await (await fetch(`${service.baseUrl}/v1/stream/wake-${run}?offset=-1`)).arrayBuffer();
      const view = await nodes();
      if (view.nodes.length !== 3 || !view.nodes.every((node) => node.live && node.declaredDead === null) || view.coordinator?.expired !== false) {
        throw new NotYet(JSON.stringify(view));
      }
      return view;
    },
    { timeoutMs: 30_000, what: "three live nodes and a coordinator" },
  );
}

async function createStreams(prefix: string, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${run}-${i}`);
  for (const name of names) {
    const response = await fetch(`${service.baseUrl}/v1/stream/${name}`, { method: "PUT", headers: { "content-type": "text/plain" } });
    expect(response.status, `create ${name}`).toBe(201);
  }
  return names;
}

function startWriters(names: readonly string[]): IdempotentWriter[] {
  const writers = names.map((name) => new IdempotentWriter(service, name));
  for (const writer of writers) writer.start();
  return writers;
}

async function acksBeyond(writers: readonly IdempotentWriter[], count: number, timeoutMs = 30_000): Promise<void> {
  const marks = new Map(writers.map((writer) => [writer, writer.acks.length + count]));
  await eventually(
    () => {
      const behind = writers.filter((writer) => writer.acks.length < marks.get(writer)!);
      if (behind.length > 0) throw new NotYet(`${behind.length} writers behind: ${behind.map((w) => `${w.name} ${JSON.stringify([...w.failures])}`).join("; ")}`);
      return true;
    },
    { timeoutMs, what: `${count} more acknowledgements on every stream` },
  );
}

/**
 * Stops the writers, then reads each stream back: its content matches what its writer sent, and the writer's
 * history (every append from its first attempt to its answer, and this final read) is linearizable.
 */
async function stopAndCheck(writers: readonly IdempotentWriter[]): Promise<void> {
  await Promise.all(writers.map((writer) => writer.stop()));
  for (const writer of writers) {
    const problem = checkContent(writer.name, await readWhole(service, writer.name, writer.history), writer);
    expect(problem, writer.name).toBeNull();
    const verdict = writer.history.verdict();
    expect(verdict.startsWith("linearizable"), verdict).toBe(true);
  }
}

/** A node that owns streams of `names` and is not the coordinator. */
async function victimAmong(names: readonly string[]): Promise<{ victim: string; owned: string[]; epoch: number }> {
  const view = await nodes();
  const owners = new Map<string, string[]>();
  for (const name of names) {
    const owner = await ownerOf(name);
    owners.set(owner, [...(owners.get(owner) ?? []), name]);
  }
  const victim = [...owners.keys()].sort().find((id) => id !== view.coordinator?.holder);
  if (victim === undefined) throw new Error(`no victim: owners ${JSON.stringify([...owners])}`);
  return { victim, owned: owners.get(victim)!, epoch: view.nodes.find((node) => node.id === victim)!.epoch };
}

beforeAll(async () => {
  service = await startService({
    nodes: 3,
    longPollTimeoutMs: 1_000,
    vars: {
      LEASE_TTL_MS: String(LEASE_TTL_MS),
      HEARTBEAT_MS: String(HEARTBEAT_MS),
      COORDINATOR_TICK_MS: String(COORDINATOR_TICK_MS),
      FAULTS_ENABLED: "1",
    },
  });
  await allLive();
}, 120_000);

afterAll(async () => {
  await service?.stop();
});

describe("failover with three nodes and short leases", () => {
  let crashed: { victim: string; owned: string[]; epoch: number } | null = null;

  test("takeover: a crashed node's streams are taken over, every acknowledged append is there once and in order, and the writers go on", async () => {
    const names = await createStreams("fo", STREAMS);
    const writers = startWriters(names);
    await acksBeyond(writers, 5);
    crashed = await victimAmong(names);
    const { victim, owned } = crashed;
    expect(owned.length).toBeGreaterThan(0);
    const crashAtMs = Date.now();
    await fault(victim, "crash");

    // Every stream of the victim is acknowledged by a new owner; the others never stop.
    const moved = writers.filter((writer) => owned.includes(writer.name));
    const firstAckAfter = (writer: IdempotentWriter) => writer.acks.find((ack) => ack.atMs > crashAtMs && ack.node !== victim);
    await eventually(
      () => {
        const waiting = moved.filter((writer) => firstAckAfter(writer) === undefined);
        if (waiting.length > 0) throw new NotYet(`${waiting.length} streams not acknowledged by a new owner yet`);
        return true;
      },
      { timeoutMs: 60_000, what: "the first acknowledgement on the new owner of every stream of the crashed node" },
    );
    const delays = moved.map((writer) => firstAckAfter(writer)!.atMs - crashAtMs);
    const figures = percentiles(delays);
    console.log(
      `[failover] ${victim} crashed owning ${owned.length} of ${STREAMS} streams; crash to first acknowledgement on the new owner: ` +
        `p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms (LEASE_TTL_MS ${LEASE_TTL_MS}, COORDINATOR_TICK_MS ${COORDINATOR_TICK_MS})`,
    );
    for (const name of owned) expect(await ownerOf(name)).not.toBe(victim);
    await acksBeyond(writers, 3);
    await stopAndCheck(writers);
  }, 180_000);

  test("the admin API while a node is crashed: every endpoint answers, 2xx or 503 with Retry-After, and none drops the connection", async () => {
    if (crashed === null) throw new Error("the crash test did not run");
    const { victim, owned } = crashed;
    const endpoints: [string, string, unknown?][] = [
      ["GET", "/admin/nodes"],
      ["GET", "/admin/streams"],
      ["GET", `/admin/streams/${owned[0]}`],
      ["GET", "/admin/tables"],
      ["GET", "/admin/series"],
      ["GET", "/metrics"],
      ["GET", "/admin/transfers"],
      ["GET", `/admin/nodes/${victim}/drain`],
      ["POST", "/admin/rebalance", { dryRun: true }],
      ["GET", "/admin/faults"],
      ["GET", "/admin/health"],
      ["GET", "/admin/tokens"],
    ];
    for (const [method, path, body] of endpoints) {
      // A dropped connection makes fetch reject: the test fails there, naming the endpoint.
      const response = await fetch(`${service.baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${service.adminToken}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(20_000),
      }).catch((error: unknown) => {
        throw new Error(`${method} ${path} while ${victim} is crashed: no answer (${String(error)})`);
      });
      const text = await response.text();
      if (response.status === 503) expect(response.headers.get("retry-after"), `${method} ${path}: ${text}`).not.toBeNull();
      else expect(response.status, `${method} ${path}: ${text}`).toBeLessThan(300);
    }
  }, 60_000);

  test("a dead node that comes back: healed, it returns at a new epoch, owns nothing that moved, and redirects to the new owners", async () => {
    if (crashed === null) throw new Error("the crash test did not run");
    const { victim, owned, epoch } = crashed;
    await fault(victim, "heal");
    // Any request wakes it; the router's requests to its address do.
    await eventually(
      async () => {
        await fetch(`${service.baseUrl}/n/${victim}/v1/stream/${owned[0]}?offset=-1`, { redirect: "manual" });
        const node = (await nodes()).nodes.find((n) => n.id === victim);
        if (node === undefined || !node.live || node.epoch <= epoch + 1 || node.declaredDead !== null) throw new NotYet(JSON.stringify(node));
        return true;
      },
      { timeoutMs: 30_000, what: `${victim} live again at a new epoch` },
    );
    for (const name of owned) {
      const owner = await ownerOf(name);
      expect(owner).not.toBe(victim);
      const response = await fetch(`${service.baseUrl}/n/${victim}/v1/stream/${name}?offset=-1`, { redirect: "manual" });
      await response.arrayBuffer();
      expect(response.status, name).toBe(307);
      expect(nodeOf(response.headers.get("location") ?? "")).toBe(owner);
    }
    await allLive();
  }, 60_000);

  test("the seal is the arbiter: a zombie acknowledges nothing after its chain is sealed, and nothing it acknowledged is lost", async () => {
    await allLive();
    const names = await createStreams("zo", 9);
    const writers = startWriters(names);
    await acksBeyond(writers, 3);
    const { victim, owned } = await victimAmong(names);
    await fault(victim, "zombie");
    await eventually(
      async () => {
        for (const name of owned) if ((await ownerOf(name)) === victim) throw new NotYet(`${name} still owned by ${victim}`);
        return true;
      },
      { timeoutMs: 30_000, what: `the zombie ${victim}'s streams re-led` },
    );
    await acksBeyond(writers, 3);
    // Straight to the zombie's address: it still believes it owns the stream, but its WAL chain is sealed.
    for (const name of owned) {
      const response = await fetch(`${service.baseUrl}/n/${victim}/v1/stream/${name}`, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "[zombie]",
        redirect: "manual",
      });
      await response.arrayBuffer();
      expect([200, 204], `${name}: the zombie acknowledged an append after the takeover`).not.toContain(response.status);
    }
    await stopAndCheck(writers);
    for (const name of owned) expect(await readWhole(service, name)).not.toContain("[zombie]");
    await fault(victim, "heal");
    await allLive();
  }, 120_000);

  test("coordinator failover: another node holds the lease at coordinator epoch + 1 within LEASE_TTL_MS + COORDINATOR_TICK_MS", async () => {
    const before = await allLive();
    const holder = before.coordinator!.holder;
    const epochBefore = before.coordinator!.coordinatorEpoch;
    const crashAtMs = Date.now();
    await fault(holder, "crash");
    const after = await eventually(
      async () => {
        const view = await nodes();
        const lease = view.coordinator;
        if (lease === null || lease.expired || lease.holder === holder) throw new NotYet(JSON.stringify(lease));
        return lease;
      },
      { timeoutMs: LEASE_TTL_MS + COORDINATOR_TICK_MS, what: "a new lease holder" },
    );
    console.log(`[failover] coordinator ${holder} crashed; ${after.holder} holds the lease at ${after.coordinatorEpoch} after ${Date.now() - crashAtMs} ms`);
    expect(after.coordinatorEpoch).toBe(epochBefore + 1);
    await fault(holder, "heal");
    await eventually(async () => {
      await fetch(`${service.baseUrl}/n/${holder}/health`).catch(() => undefined);
      return (await nodes()).nodes.every((node) => node.live);
    }, { timeoutMs: 30_000, what: `${holder} back` });
  }, 60_000);
});
