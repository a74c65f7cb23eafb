// One seed, end to end: draw the run's shape from the seed (swarm testing: how many nodes, streams and
// clients, which faults how often, how eager each kind of move is), build the cluster over virtual time,
// then three phases:
// 1. active: up to `activeSteps` steps of everything (clients, faults, crashes, transfers, drains), not
//    counting the steps of a residency lull;
// 2. settle: no new client actions, no faults, no crashes; down nodes restart, drains end, in-flight work
//    finishes and transfers complete;
// 3. final: every stream is read back from its owner (and every table bucket from its leader).
// Some seeds add the table workload (table-workload.ts: the table clients and the tiering actor), drawn from
// generators of its own so that a seed without tables runs exactly as it did before there were tables;
// so do the subscription workload, the
// guard scenarios and the residency scenario (residency-scenario.ts: lulls, and a node that holds evicted
// streams held down past the lease).
// The checker then reads the history. The real timers, Date.now and Math.random are restored however the
// run ends.
import { nodeSettings, type SettingsVars } from "../../src/node/settings.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { Chaos } from "./chaos.ts";
import { check } from "./checker.ts";
import { INVARIANT, type CheckResult, type Violation } from "./violations.ts";
import { FinalReader, Producer, Reader, Tailer, World, Writer, type Client, type ClientDeps } from "./clients.ts";
import { SimCluster } from "./cluster.ts";
import { drawFaultProfile, FaultPlan, type FaultProfile } from "./faults.ts";
import { describeGuardShape, drawGuardShape, GuardScenarios, LATE_WEIGHTS, type GuardShape } from "./guard-scenarios.ts";
import { EPOCH_BASE_MS, History } from "./history.ts";
import { Network } from "./network.ts";
import { Operator } from "./operator.ts";
import { Prng } from "./prng.ts";
import { describeResidencyShape, drawResidencyShape, ResidencyScenario, type ResidencyShape } from "./residency-scenario.ts";
import { Scheduler, type Actor, type Phase, type Weights } from "./scheduler.ts";
import { SimMetaLog } from "./sim-meta.ts";
import { drawSubscriptionShape, startSubscriptions, type SubscriptionShape } from "./subscription-consumers.ts";
import { describeTableShape, drawTableShape, tableGenerators, tableWeights, tieringOf, TableWorkload, type TableShape } from "./table-workload.ts";
import { captureConsole, Trace } from "./trace.ts";
import { drainMicrotasks, VirtualClock } from "./virtual-time.ts";

/** Virtual time starts here (node epochs are wall-clock milliseconds). */
const START_MS = EPOCH_BASE_MS;
const SETTLE_STEPS = 6_000;
const FINAL_STEPS = 8_000;
/** The share of seeds that run the subscription workload, drawn from a generator of its own (the seed mixed with this). */
const SUBSCRIPTION_SEEDS = 0.5;
const SUBSCRIPTION_STREAM = 0x5ab5c000;
/** Steps after the final read for the consumers to catch up. */
const CATCH_UP_STEPS = 4_000;
/** Mixed into the seed for the guard scenarios' own generator (guard-scenarios.ts). */
const GUARD_STREAM = 0x6a4d0000;
/** Mixed into the seed for the residency scenario's own generator (residency-scenario.ts). */
const RESIDENCY_STREAM = 0x7e51d000;

/** Failover settings short enough that leases run out within a seed (as the end-to-end tests set them). */
const LEASE_TTL_MS = 1_000;

const SETTINGS: SettingsVars = {
  LONG_POLL_TIMEOUT_MS: "2000",
  LEASE_TTL_MS: String(LEASE_TTL_MS),
  HEARTBEAT_MS: "200",
  COORDINATOR_TICK_MS: "200",
  // Compaction early and often, so it runs in most seeds (the heartbeat checks every 5 s).
  COMPACT_AFTER_WAL_OBJECTS: "6",
  // Idle streams evicted early and often, and at most a few resident, so streams are evicted and reloaded
  // under every fault: crashes mid-reload, transfers and takeovers of evicted streams (docs/node.md).
  STREAM_IDLE_EVICT_MS: "500",
  MAX_RESIDENT_STREAMS: "1",
};

/** Table seeds snapshot their buckets early and often, so new leaders restore snapshots within a seed. */
const TABLE_SETTINGS: SettingsVars = { TABLE_SNAPSHOT_BYTES: "512", TABLE_SNAPSHOT_INTERVAL_MS: "1000" };

export interface SeedShape {
  readonly nodes: number;
  readonly streams: number;
  readonly writers: number;
  readonly producers: number;
  readonly readers: number;
  readonly tailers: number;
  readonly activeSteps: number;
  readonly crashes: number;
  readonly zombieRouting: number;
  readonly faults: FaultProfile;
  readonly weights: Weights;
  readonly tables: TableShape | null;
  readonly subscriptions: SubscriptionShape | null;
  readonly guards: GuardShape | null;
  readonly residency: ResidencyShape | null;
}

function drawShape(
  prng: Prng,
  maxSteps: number,
  tables: TableShape | null,
  subscriptions: SubscriptionShape | null,
  guards: GuardShape | null,
  residency: ResidencyShape | null,
): SeedShape {
  const shape = drawStreamShape(prng, maxSteps);
  const weights = {
    ...shape.weights,
    ...(tables === null ? {} : tableWeights(tables)),
    ...(subscriptions === null ? {} : { consumer: subscriptions.weight }),
    ...(guards === null ? {} : guards.weights),
    ...(residency === null ? {} : residency.weights),
  };
  return { ...shape, tables, subscriptions, guards, residency, weights };
}

function drawStreamShape(prng: Prng, maxSteps: number): Omit<SeedShape, "tables" | "subscriptions" | "guards" | "residency"> {
  return {
    nodes: prng.between(2, 4),
    streams: prng.between(1, 4),
    writers: prng.between(1, 3),
    producers: prng.between(0, 3),
    readers: prng.between(0, 2),
    tailers: prng.between(0, 2),
    activeSteps: prng.between(Math.floor(maxSteps / 2), maxSteps),
    crashes: prng.pick([0, 1, 2, 4, 8]),
    zombieRouting: prng.pick([0, 0.2, 0.5]),
    faults: drawFaultProfile(prng),
    weights: {
      store: 10,
      meta: 8,
      net: 6,
      reply: 5,
      timer: prng.pick([1, 2, 4]),
      client: prng.pick([2, 4, 8]),
      crash: prng.pick([0.1, 0.3, 1]),
      zombie: prng.pick([0, 0.1, 0.3]),
      hold: prng.pick([0, 0.1, 0.3]),
      freeze: prng.pick([0, 0.1, 0.3]),
      coordinator: prng.pick([0, 0.05, 0.2]),
      restart: prng.pick([0.5, 2, 5]),
      transfer: prng.pick([0, 0.3, 1, 2]),
      drain: prng.pick([0, 0.1, 0.3]),
      undrain: 0.5,
    },
  };
}

const SETTLE_WEIGHTS: Weights = { store: 10, meta: 10, net: 10, reply: 10, timer: 4, restart: 30, consumer: 8 };
const FINAL_WEIGHTS: Weights = { ...SETTLE_WEIGHTS, final: 100 };

export interface SeedOptions {
  /** Print every trace line as it is written. */
  readonly verbose?: boolean;
  /** Upper bound of the active phase's steps (the seed draws between half and all of it). */
  readonly maxSteps?: number;
}

export interface SeedResult {
  readonly seed: number;
  readonly steps: number;
  readonly hash: string;
  readonly shape: SeedShape;
  readonly result: CheckResult;
  readonly trace: Trace;
  readonly history: History;
}

export async function runSeed(seed: number, options: SeedOptions = {}): Promise<SeedResult> {
  const { checkAfter, ...run } = await runInVirtualTime(seed, options);
  // Outside virtual time (icebird reads the store with real promises and fetch): tiering's exactly-once rule.
  run.result.violations.push(...(await checkAfter()));
  return run;
}

async function runInVirtualTime(seed: number, options: SeedOptions): Promise<SeedResult & { readonly checkAfter: () => Promise<Violation[]> }> {
  const prng = new Prng(seed);
  const tables = tableGenerators(seed);
  const subscriptionPrng = new Prng((seed ^ SUBSCRIPTION_STREAM) >>> 0);
  const tableShape = drawTableShape(tables);
  const guardPrng = new Prng((seed ^ GUARD_STREAM) >>> 0);
  const residencyPrng = new Prng((seed ^ RESIDENCY_STREAM) >>> 0);
  const shape = drawShape(
    prng,
    options.maxSteps ?? 900,
    tableShape,
    drawSubscriptionShape(subscriptionPrng, SUBSCRIPTION_SEEDS),
    drawGuardShape(guardPrng),
    drawResidencyShape(residencyPrng),
  );
  const clock = new VirtualClock(START_MS);
  const trace = new Trace(START_MS, options.verbose === true);
  const history = new History();
  const restoreTime = clock.install(prng.fork());
  const restoreConsole = captureConsole(trace);
  // A promise mink leaves rejected with no handler is a finding, not a reason to stop the whole run.
  const unhandled: string[] = [];
  const onUnhandled = (reason: unknown): void => {
    const text = reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason);
    unhandled.push(text);
    trace.write(`  unhandled rejection: ${text}`);
  };
  process.on("unhandledRejection", onUnhandled);
  let closeSubscriptions = (): void => {};
  try {
    trace.write(`seed ${seed}: ${describeShape(shape)}`);
    const scheduler = new Scheduler(prng.fork(), clock, trace, shape.weights);
    const faults = new FaultPlan(prng.fork(), shape.faults);
    const meta = new SimMetaLog(clock, scheduler.io, faults, trace, history, LEASE_TTL_MS);
    const store = new MemoryStore();
    const settings = {
      ...SETTINGS,
      ...(shape.tables === null ? {} : TABLE_SETTINGS),
      ...(shape.guards?.walDeadlineMs == null ? {} : { WAL_BATCH_DEADLINE_MS: String(shape.guards.walDeadlineMs) }),
      ...(shape.residency === null ? {} : { COMPACT_AFTER_WAL_OBJECTS: String(shape.residency.compactAfterWalObjects) }),
    };
    const nodeIds = Array.from({ length: shape.nodes }, (_, i) => `n${i + 1}`);
    const cluster: SimCluster = new SimCluster(
      {
        ...{ clock, prng: prng.fork(), io: scheduler.io, faults, trace, history, store, meta, settings, zombieRouting: shape.zombieRouting },
        ...(shape.tables === null ? {} : { tiering: tieringOf(tables, scheduler.io, trace, shape.zombieRouting, () => cluster) }),
      },
      nodeIds,
    );
    const world = new World(Array.from({ length: shape.streams }, (_, i) => `sim/s${i + 1}`));
    const net = new Network(scheduler.io, cluster, clock, trace, prng.fork());
    const clientDeps: ClientDeps = {
      net,
      prng: prng.fork(),
      clock,
      trace,
      history,
      meta,
      world,
      longPollTimeoutMs: nodeSettings(SETTINGS).longPollTimeoutMs,
    };
    const clients: Client[] = [
      ...Array.from({ length: shape.writers }, (_, i) => new Writer(`w${i + 1}`, clientDeps)),
      ...Array.from({ length: shape.producers }, (_, i) => new Producer(`p${i + 1}`, clientDeps)),
      ...Array.from({ length: shape.readers }, (_, i) => new Reader(`r${i + 1}`, clientDeps)),
      ...Array.from({ length: shape.tailers }, (_, i) => new Tailer(`t${i + 1}`, clientDeps)),
    ];
    for (const client of clients) scheduler.addActor(client);
    const operator = new Operator(meta, prng.fork(), trace, nodeIds);
    scheduler.addActor(operator);
    const chaos = new Chaos(cluster, prng.fork(), { crashes: shape.crashes, leaseTtlMs: LEASE_TTL_MS }, () => clock.now());
    scheduler.addActor(chaos);
    if (shape.guards !== null) {
      const guards = new GuardScenarios({ cluster, meta, history, trace, prng: guardPrng.fork(), now: () => clock.now(), leaseTtlMs: LEASE_TTL_MS });
      faults.targeted = guards;
      scheduler.addActor(guards);
    }
    let residency: ResidencyScenario | null = null;
    if (shape.residency !== null) {
      residency = new ResidencyScenario({ cluster, meta, world, chaos, operator, history, trace, prng: residencyPrng.fork(), now: () => clock.now(), leaseTtlMs: LEASE_TTL_MS }, shape.residency);
      scheduler.addActor(residency);
    }
    const finalReader = new FinalReader(clientDeps);
    scheduler.addActor(finalReader);
    const workloadDeps = { cluster, net, clock, trace, history, meta, faults, store, leaseTtlMs: LEASE_TTL_MS, addActor: (actor: Actor) => scheduler.addActor(actor) };
    const tableWorkload = shape.tables === null ? null : new TableWorkload(shape.tables, tables, workloadDeps);
    const tableActors = tableWorkload?.actors ?? [];
    const finalDone = (): boolean => finalReader.done && (tableWorkload?.finalDone ?? true);
    closeSubscriptions = () => meta.subscriptions.close();
    const consumers =
      shape.subscriptions === null
        ? null
        : await startSubscriptions({ meta, net, prng: subscriptionPrng.fork(), trace, history, clock }, world.streams, shape.subscriptions, (actor) => scheduler.addActor(actor));

    for (const nodeId of nodeIds) cluster.start(nodeId);
    const run = async (phase: Phase, steps: number | (() => number), done: () => boolean): Promise<boolean> => {
      for (let i = 0; i < (typeof steps === "number" ? steps : steps()); i++) {
        if (done()) return true;
        // A corrupt object found (cluster.ts): nothing after it can be trusted, and the seed has failed.
        if (history.fatal !== null) return false;
        if (!(await scheduler.takeStep(phase))) return done();
      }
      return done();
    };

    // A lull's steps do not count against the active phase: the seed's clients still take as many.
    await run("active", () => shape.activeSteps + (residency?.lullSteps ?? 0), () => false);

    trace.write("settle: faults healed, no new client actions, no crashes");
    faults.heal();
    operator.undrainAll();
    scheduler.weights = { ...SETTLE_WEIGHTS, ...LATE_WEIGHTS };
    const settled = (): boolean =>
      nodeIds.every((id) => {
        const live = cluster.live(id);
        return live.length === 1 && live[0]!.state === "running";
      }) &&
      clients.every((client) => client.idle) &&
      tableActors.every((actor) => actor.idle) &&
      meta.service.state.transfers.size === 0 &&
      scheduler.io.ofKind("net").length === 0;
    const calm = await run("settle", SETTLE_STEPS, settled);

    trace.write("final: reading every stream back");
    scheduler.weights = { ...FINAL_WEIGHTS, ...LATE_WEIGHTS };
    await run("final", FINAL_STEPS, finalDone);
    if (consumers !== null) {
      trace.write("subscriptions: the consumers catch up");
      history.subscriptions.caughtUp = await run("final", CATCH_UP_STEPS, () => consumers.caughtUp());
    }

    cluster.countAllResidency();
    const result = check(history, { longPollTimeoutMs: clientDeps.longPollTimeoutMs, msAt: (step) => trace.msAt(step) });
    for (const text of unhandled) result.notices.push({ invariant: INVARIANT.unhandled, message: text, focus: ["unhandled rejection"] });
    if (!calm && history.fatal === null) {
      const busy = [...clients, ...tableActors];
      result.violations.push({ invariant: INVARIANT.liveness, message: `the run did not settle in ${SETTLE_STEPS} steps: ${unsettled(cluster, busy, meta)}`, focus: [] });
    }
    if (!finalDone() && history.fatal === null) {
      result.violations.push({ invariant: INVARIANT.liveness, message: `the final read did not finish in ${FINAL_STEPS} steps`, focus: ["final"] });
    }
    trace.write(`end: ${scheduler.step} steps, ${result.violations.length} violations, ${result.notices.length} notices`);
    const checkAfter = async (): Promise<Violation[]> => (tableWorkload === null ? [] : tableWorkload.checkAfter());
    return { seed, steps: scheduler.step, hash: trace.digest(), shape, result, trace, history, checkAfter };
  } finally {
    // Webhooks still on their way fail, and their senders' bookkeeping runs before the globals come back.
    closeSubscriptions();
    await drainMicrotasks();
    process.off("unhandledRejection", onUnhandled);
    restoreConsole();
    restoreTime();
  }
}

function unsettled(cluster: SimCluster, clients: readonly { readonly name: string; readonly idle: boolean }[], meta: SimMetaLog): string {
  const parts: string[] = [];
  for (const id of cluster.nodeIds) {
    const live = cluster.live(id);
    if (live.length !== 1 || live[0]!.state !== "running") parts.push(`${id}: ${live.map((inc) => `${inc.label} ${inc.state}`).join(", ") || "down"}`);
  }
  const busy = clients.filter((client) => !client.idle).map((client) => client.name);
  if (busy.length > 0) parts.push(`busy clients ${busy.join(", ")}`);
  const transfers = [...meta.service.state.transfers.entries()].map(([id, t]) => `${id} ${t.source}->${t.target}`);
  if (transfers.length > 0) parts.push(`pending transfers ${transfers.join(", ")}`);
  return parts.join("; ");
}

export function describeShape(shape: SeedShape): string {
  const f = shape.faults;
  const pct = (x: number): string => `${(100 * x).toFixed(1)}%`;
  const w = shape.weights;
  return (
    `${shape.nodes} nodes, ${shape.streams} streams, clients w${shape.writers} p${shape.producers} r${shape.readers} t${shape.tailers}, ` +
    `${shape.activeSteps} active steps, ${shape.crashes} crashes, zombie routing ${shape.zombieRouting}; ` +
    `store fail ${pct(f.storeFail)} lost ${pct(f.storeLost)} delay ${pct(f.storeDelay)}, meta fail ${pct(f.metaFail)} lost ${pct(f.metaLost)}, split ${pct(f.split)}; ` +
    `weights timer ${w["timer"]} client ${w["client"]} crash ${w["crash"]} zombie ${w["zombie"]} transfer ${w["transfer"]} drain ${w["drain"]}` +
    (shape.tables === null ? "" : `; ${describeTableShape(shape.tables)}`) +
    (shape.subscriptions === null ? "" : `; subscriptions lease ${shape.subscriptions.leaseTtlMs} ms, consumer weight ${shape.subscriptions.weight}`) +
    (shape.guards === null ? "" : `; guard scenarios ${describeGuardShape(shape.guards)}`) +
    (shape.residency === null ? "" : `; residency scenario ${describeResidencyShape(shape.residency)}`)
  );
}
