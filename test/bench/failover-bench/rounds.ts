// One setting of the failover benchmark: a fresh three-node mink with the setting's lease, heartbeat and
// coordinator tick, and R rounds on it. A round: create S streams through the router (placement spreads
// them), start an idempotent writer on each (test/e2e/failover-clients.ts), wait for 5 acknowledgements on
// every stream, crash a non-coordinator node that owns some of them (POST /admin/faults), and time, per
// stream it owned, the crash to the first acknowledgement by another node. Then heal it, wait until it is
// live at a new epoch and all three nodes are live, wait for 3 more acknowledgements on every stream, read
// /metrics again and stop the round's writers. At the end every stream of every round is read back whole
// and checked against its writer.
import { checkContent, IdempotentWriter, readWhole } from "../../e2e/failover-clients.ts";
import { startService, type Service } from "../../e2e/service.ts";
import { eventually, NotYet } from "../../support/eventually.ts";
import { errorText } from "../service-bench/stats.ts";
import { Admin } from "./admin.ts";
import { diffTakeoverMetrics, loggedTakeovers, readMetrics, type LoggedTakeover, type MetricDelta } from "./takeover-cost.ts";

const NODES = 3;

export interface Setting {
  label: string;
  leaseTtlMs: number;
  heartbeatMs: number;
  coordinatorTickMs: number;
  rounds: number;
  streams: number;
}

export interface RoundResult {
  victim: string;
  /** Streams of this round on each node just before the crash. */
  spread: Map<string, number>;
  moved: number;
  /** Crash to the first acknowledgement by a new owner, per moved stream. */
  delaysMs: number[];
  /** The moved streams' owners once every one was acknowledged again (the admin API), by node. */
  newOwners: Map<string, number>;
  /** Crash to the victim live again after its heal (which is sent once every moved stream was acknowledged). */
  backAfterMs: number;
  metrics: MetricDelta | string;
  logged: LoggedTakeover[];
}

export interface SettingResult {
  setting: Setting;
  rounds: RoundResult[];
  /** The first failure that ended the setting early, if any. */
  error: string | null;
  streamsChecked: number;
  mismatches: string[];
  acknowledged: number;
  /** Failed attempts the writers retried (503, reset, timeout), by kind. */
  writerFailures: Map<string, number>;
  logTail: string;
}

type Progress = (text: string) => void;

export async function runSetting(setting: Setting, progress: Progress): Promise<SettingResult> {
  const result: SettingResult = { setting, rounds: [], error: null, streamsChecked: 0, mismatches: [], acknowledged: 0, writerFailures: new Map(), logTail: "" };
  const run = Date.now().toString(36);
  const wake = `wake-${run}`;
  const allWriters: IdempotentWriter[] = [];
  let service: Service | undefined;
  try {
    progress(`${setting.label}: starting mink (${NODES} nodes, LEASE_TTL_MS=${setting.leaseTtlMs} HEARTBEAT_MS=${setting.heartbeatMs} COORDINATOR_TICK_MS=${setting.coordinatorTickMs} FAULTS_ENABLED=1)`);
    service = await startService({
      nodes: NODES,
      longPollTimeoutMs: 1_000,
      vars: {
        LEASE_TTL_MS: String(setting.leaseTtlMs),
        HEARTBEAT_MS: String(setting.heartbeatMs),
        COORDINATOR_TICK_MS: String(setting.coordinatorTickMs),
        FAULTS_ENABLED: "1",
      },
    });
    const admin = new Admin(service);
    const liveTimeoutMs = 2 * setting.leaseTtlMs + 60_000;
    await admin.allLive(NODES, wake, liveTimeoutMs);
    for (let round = 0; round < setting.rounds; round++) {
      const writers = await startRound(service, `fo-${setting.label}-${run}-r${round}`, setting.streams);
      allWriters.push(...writers);
      try {
        result.rounds.push(await crashAndHeal(service, admin, writers, round, setting, wake, progress));
      } finally {
        await Promise.all(writers.map((writer) => writer.stop()));
      }
    }
  } catch (error) {
    result.error = errorText(error);
    progress(`${setting.label}: FAILED: ${result.error}`);
  }
  try {
    await Promise.all(allWriters.map((writer) => writer.stop()));
    if (service !== undefined) {
      progress(`${setting.label}: reading ${allWriters.length} streams back`);
      for (const writer of allWriters) {
        result.acknowledged += writer.acks.length;
        for (const [kind, count] of writer.failures) result.writerFailures.set(kind, (result.writerFailures.get(kind) ?? 0) + count);
        try {
          const problem = checkContent(writer.name, await readWhole(service, writer.name), writer);
          if (problem !== null) result.mismatches.push(problem);
        } catch (error) {
          result.mismatches.push(`${writer.name}: read failed: ${errorText(error)}`);
        }
        result.streamsChecked++;
      }
      if (result.error !== null || result.mismatches.length > 0) result.logTail = service.logTail(30);
    }
  } finally {
    await service?.stop().catch((error: unknown) => progress(`stopping mink: ${errorText(error)}`));
  }
  return result;
}

async function startRound(service: Service, prefix: string, count: number): Promise<IdempotentWriter[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const name of names) {
    const response = await fetch(`${service.baseUrl}/v1/stream/${name}`, { method: "PUT", headers: { "content-type": "text/plain" }, signal: AbortSignal.timeout(15_000) });
    await response.arrayBuffer();
    if (response.status !== 201) throw new Error(`create ${name}: ${response.status}`);
  }
  const writers = names.map((name) => new IdempotentWriter(service, name));
  for (const writer of writers) writer.start();
  return writers;
}

async function acksBeyond(writers: readonly IdempotentWriter[], count: number, timeoutMs: number): Promise<void> {
  const marks = new Map(writers.map((writer) => [writer, writer.acks.length + count]));
  await eventually(
    () => {
      const behind = writers.filter((writer) => writer.acks.length < marks.get(writer)!);
      if (behind.length > 0) throw new NotYet(`${behind.length} writers behind: ${behind.slice(0, 3).map((w) => `${w.name} ${JSON.stringify([...w.failures])}`).join("; ")}`);
      return true;
    },
    { timeoutMs, what: `${count} more acknowledgements on every stream` },
  );
}

async function crashAndHeal(
  service: Service,
  admin: Admin,
  writers: readonly IdempotentWriter[],
  round: number,
  setting: Setting,
  wake: string,
  progress: Progress,
): Promise<RoundResult> {
  const label = `${setting.label} round ${round + 1}/${setting.rounds}`;
  await acksBeyond(writers, 5, 60_000);
  const view = await admin.nodes();
  const owners = new Map<string, string[]>();
  for (const writer of writers) {
    const owner = await admin.ownerOf(writer.name);
    owners.set(owner, [...(owners.get(owner) ?? []), writer.name]);
  }
  const candidates = [...owners.keys()].filter((id) => id !== view.coordinator?.holder).sort();
  const victim = candidates[round % Math.max(1, candidates.length)];
  if (victim === undefined) throw new Error(`${label}: no non-coordinator node owns a stream: ${JSON.stringify([...owners])}`);
  const owned = owners.get(victim)!;
  const epoch = view.nodes.find((node) => node.id === victim)?.epoch ?? 0;
  const before = await readMetrics(service.baseUrl, service.adminToken);

  progress(`${label}: crashing ${victim} (owns ${owned.length} of ${writers.length} streams; coordinator ${view.coordinator?.holder ?? "none"})`);
  const crashAtMs = Date.now();
  await admin.fault(victim, "crash");
  const moved = writers.filter((writer) => owned.includes(writer.name));
  const firstAckAfter = (writer: IdempotentWriter) => writer.acks.find((ack) => ack.atMs > crashAtMs && ack.node !== victim);
  await eventually(
    () => {
      const waiting = moved.filter((writer) => firstAckAfter(writer) === undefined);
      if (waiting.length > 0) throw new NotYet(`${waiting.length} streams not acknowledged by a new owner yet: ${JSON.stringify([...(waiting[0]?.failures ?? [])])}`);
      return true;
    },
    { timeoutMs: 3 * setting.leaseTtlMs + 60_000, what: `${label}: the first acknowledgement on the new owner of every stream of ${victim}` },
  );
  const delaysMs = moved.map((writer) => firstAckAfter(writer)!.atMs - crashAtMs);
  const newOwners = new Map<string, number>();
  for (const writer of moved) {
    const node = await admin.ownerOf(writer.name);
    newOwners.set(node, (newOwners.get(node) ?? 0) + 1);
  }
  progress(`${label}: every moved stream acknowledged by a new owner after ${Math.min(...delaysMs)} to ${Math.max(...delaysMs)} ms; healing ${victim}`);

  await admin.fault(victim, "heal");
  const liveTimeoutMs = 2 * setting.leaseTtlMs + 60_000;
  await admin.healed(victim, epoch, owned[0]!, liveTimeoutMs);
  const backAfterMs = Date.now() - crashAtMs;
  await admin.allLive(NODES, wake, liveTimeoutMs);
  await acksBeyond(writers, 3, 60_000);
  let metrics: MetricDelta | string;
  try {
    metrics = diffTakeoverMetrics(before, await readMetrics(service.baseUrl, service.adminToken));
  } catch (error) {
    metrics = errorText(error);
  }
  const logged = loggedTakeovers(service.logFile, victim, epoch);
  progress(`${label}: ${victim} live again ${backAfterMs} ms after the crash`);
  return {
    victim,
    spread: new Map([...owners].map(([node, names]) => [node, names.length])),
    moved: moved.length,
    delaysMs,
    newOwners,
    backAfterMs,
    metrics,
    logged,
  };
}
