// The restore phase of the tables benchmark: what a new leader of a big primary-key bucket costs. A fresh
// three-node mink with FAULTS_ENABLED=1, the setting's lease, heartbeat and tick, and
// TABLE_SNAPSHOT_BYTES=1 GiB / TABLE_SNAPSHOT_INTERVAL_MS=1 h so that no snapshot but the forced one exists:
//  1. a 3-bucket table; the bucket led by a node that is not the coordinator (tables-failover.ts's
//     pickVictim) gets `rows` rows of new keys, 500-row batches from `loadInFlight` producers at its leader;
//  2. POST /admin/tables/<t>/snapshot, timed (every bucket; the other two are empty, opened by a lookup);
//  3. `afterRows` more rows, so the new leader has a changelog to replay after the snapshot;
//  4. a writer keeps writing 500-row batches to the bucket (one in flight, the same seq retried 50 ms after
//     any failure, looking the leader up again); after a few acknowledgements the leader is crashed
//     (POST /admin/faults) and the phase waits for the first acknowledgement by another node.
// Figures: the load rate, the snapshot's duration, crash to the new leader showing in GET /v1/table/<t>,
// crash to the first acknowledgement, and the new leader's `table.load` line from the Worker's log (its
// duration covers the snapshot's restore and the replay together; the line does not split them), and the
// dead node's takeover (`takeover.end`, failover-bench/takeover-cost.ts), which comes before the bucket opens.
import { startService, type Service } from "../../e2e/service.ts";
import { allLive, describeTable, expectStatus, fault, loggedLoads, type LoggedLoad } from "../../e2e/tables-clients.ts";
import { pickVictim, snapshotAll } from "../../e2e/tables-failover.ts";
import { eventually, NotYet } from "../../support/eventually.ts";
import { Admin } from "../failover-bench/admin.ts";
import { loggedTakeovers, type LoggedTakeover } from "../failover-bench/takeover-cost.ts";
import { errorText } from "../service-bench/stats.ts";
import { BucketProducer, Failures, LeaderAddress, timedLookup, type Ack } from "./requests.ts";
import { BucketKeys, parsedDefinition, rowOf, tableBody } from "./rows.ts";

const NODES = 3;
const TABLE = "restore";
const WRITE_GIVE_UP_MS = 60_000;
/** Bound on the snapshot request: a million rows took 8 s on 2 cores. */
const SNAPSHOT_TIMEOUT_MS = 300_000;
/** Acknowledgements of the crash writer before the crash. */
const ACKS_BEFORE_CRASH = 3;
/** What 1 GiB of changelog and an hour mean here: never, within the phase. */
const SNAPSHOT_NEVER_BYTES = 1024 * 1024 * 1024;
const SNAPSHOT_NEVER_MS = 3_600_000;

export interface LeaseSetting {
  readonly label: string;
  readonly leaseTtlMs: number;
  readonly heartbeatMs: number;
  readonly coordinatorTickMs: number;
}

export interface RestoreOptions {
  readonly rows: number;
  readonly batchRows: number;
  readonly loadInFlight: number;
  readonly afterRows: number;
  readonly setting: LeaseSetting;
}

export interface RestoreResult {
  readonly options: RestoreOptions;
  bucket: number | null;
  victim: string | null;
  epochBefore: number | null;
  loadedRows: number;
  loadMs: number | null;
  loadAcks: Ack[];
  snapshotMs: number | null;
  /** The bucket's rows and snapshot offset as GET /v1/table/<t> showed them after the snapshot. */
  snapshotRows: number | null;
  snapshotOffset: string | null;
  /** Rows of the crash writer acknowledged before the crash (also replayed). */
  writerRowsBeforeCrash: number;
  crashToViewMs: number | null;
  crashToFirstAckMs: number | null;
  newLeader: string | null;
  epochAfter: number | null;
  load: LoggedLoad | null;
  /** The crashed incarnation's takeover (`takeover.end`): the new leader replays the dead node's WAL before it opens the bucket. */
  takeover: LoggedTakeover | null;
  failures: Failures;
  error: string | null;
  logTail: string;
}

type Progress = (text: string) => void;

export async function runRestore(options: RestoreOptions, progress: Progress): Promise<RestoreResult> {
  const result: RestoreResult = {
    options, bucket: null, victim: null, epochBefore: null, loadedRows: 0, loadMs: null, loadAcks: [], snapshotMs: null, snapshotRows: null, snapshotOffset: null,
    writerRowsBeforeCrash: 0, crashToViewMs: null, crashToFirstAckMs: null, newLeader: null, epochAfter: null, load: null, takeover: null, failures: new Failures(), error: null, logTail: "",
  };
  const { setting } = options;
  let service: Service | undefined;
  try {
    progress(`restore: starting mink (${NODES} nodes, LEASE_TTL_MS=${setting.leaseTtlMs} HEARTBEAT_MS=${setting.heartbeatMs} COORDINATOR_TICK_MS=${setting.coordinatorTickMs} ` +
      `TABLE_SNAPSHOT_BYTES=${SNAPSHOT_NEVER_BYTES} TABLE_SNAPSHOT_INTERVAL_MS=${SNAPSHOT_NEVER_MS} FAULTS_ENABLED=1)`);
    service = await startService({
      nodes: NODES,
      longPollTimeoutMs: 1_000,
      vars: {
        LEASE_TTL_MS: String(setting.leaseTtlMs),
        HEARTBEAT_MS: String(setting.heartbeatMs),
        COORDINATOR_TICK_MS: String(setting.coordinatorTickMs),
        TABLE_SNAPSHOT_BYTES: String(SNAPSHOT_NEVER_BYTES),
        TABLE_SNAPSHOT_INTERVAL_MS: String(SNAPSHOT_NEVER_MS),
        FAULTS_ENABLED: "1",
      },
    });
    await allLive(service, NODES, 2 * setting.leaseTtlMs + 60_000);
    await expectStatus(service, 201, "PUT", `/v1/table/${TABLE}`, tableBody(NODES));
    const { bucket, victim, epochBefore } = await pickVictim(service, TABLE);
    Object.assign(result, { bucket, victim, epochBefore });
    const keys = new BucketKeys(parsedDefinition(NODES), bucket);
    const leader = await LeaderAddress.of(service, TABLE, bucket);

    progress(`restore: loading ${options.rows} rows into bucket ${bucket} of ${TABLE} at ${victim} (${options.loadInFlight} batches in flight)`);
    const loadStartedMs = performance.now();
    await load(leader, keys, options, result, progress);
    result.loadMs = performance.now() - loadStartedMs;

    // A bucket never asked for is not open at its leader, and the snapshot of the table answers not_loaded for it.
    const definition = parsedDefinition(NODES);
    await timedLookup(`${service.baseUrl}/v1/table/${TABLE}/lookup`, Array.from({ length: NODES }, (_, b) => new BucketKeys(definition, b).take(1)[0]!));
    progress(`restore: snapshot of ${TABLE}`);
    const snapshotStartedMs = performance.now();
    await snapshotAll(service, TABLE, SNAPSHOT_TIMEOUT_MS);
    result.snapshotMs = performance.now() - snapshotStartedMs;
    const view = (await describeTable(service, TABLE)).buckets[bucket]!;
    result.snapshotRows = view.rows;
    result.snapshotOffset = view.snapshotOffset;

    progress(`restore: ${options.afterRows} rows after the snapshot, then a writer and the crash of ${victim}`);
    const after = new BucketProducer(leader, "bench-after", result.failures);
    for (let written = 0; written < options.afterRows; written += options.batchRows) {
      await after.write(keys.take(Math.min(options.batchRows, options.afterRows - written)).map((id) => ({ upsert: rowOf(id) })), Date.now() + WRITE_GIVE_UP_MS);
    }
    await crashWhileWriting(service, keys, victim, options, result, progress);
  } catch (error) {
    result.error = errorText(error);
    progress(`restore: FAILED: ${result.error}`);
    if (service !== undefined) result.logTail = service.logTail(30);
  } finally {
    await service?.stop().catch((error: unknown) => progress(`stopping mink: ${errorText(error)}`));
  }
  return result;
}

/** `rows` rows in batches, `loadInFlight` producers side by side, progress every 100,000 rows. */
async function load(leader: LeaderAddress, keys: BucketKeys, options: RestoreOptions, result: RestoreResult, progress: Progress): Promise<void> {
  let left = options.rows;
  const startedMs = performance.now();
  await Promise.all(
    Array.from({ length: options.loadInFlight }, async (_, lane) => {
      const producer = new BucketProducer(leader, `bench-load-p${lane}`, result.failures);
      while (left > 0) {
        const count = Math.min(options.batchRows, left);
        left -= count;
        const ack = await producer.write(keys.take(count).map((id) => ({ upsert: rowOf(id) })), Date.now() + WRITE_GIVE_UP_MS);
        result.loadAcks.push(ack);
        const before = result.loadedRows;
        result.loadedRows += count;
        if (Math.floor(result.loadedRows / 100_000) > Math.floor(before / 100_000)) {
          progress(`restore: ${result.loadedRows} rows, ${((result.loadedRows * 1000) / (performance.now() - startedMs)).toFixed(0)} rows/s`);
        }
      }
    }),
  );
}

async function crashWhileWriting(service: Service, keys: BucketKeys, victim: string, options: RestoreOptions, result: RestoreResult, progress: Progress): Promise<void> {
  const leader = await LeaderAddress.of(service, TABLE, keys.bucket);
  const producer = new BucketProducer(leader, "bench-crash-writer", result.failures);
  const acks: Ack[] = [];
  let running = true;
  const writing = (async () => {
    while (running) acks.push(await producer.write(keys.take(options.batchRows).map((id) => ({ upsert: rowOf(id) })), Date.now() + 3 * options.setting.leaseTtlMs + 120_000));
  })();
  const waitFor = (check: () => boolean, what: string, timeoutMs: number) =>
    Promise.race([
      eventually(() => {
        if (!check()) throw new NotYet(`${acks.length} acks, failed attempts: ${result.failures.describe()}`);
        return true;
      }, { timeoutMs, what }),
      writing.then(() => true), // a writer that gave up ends the wait with its error
    ]);
  let crashAtMs = 0;
  let nodeEpoch: number | null = null;
  try {
    await waitFor(() => acks.length >= ACKS_BEFORE_CRASH, "the crash writer's first acknowledgements", 60_000);
    nodeEpoch = (await new Admin(service).nodes()).nodes.find((node) => node.id === victim)?.epoch ?? null;
    crashAtMs = Date.now();
    await fault(service, victim, "crash");
    result.writerRowsBeforeCrash = acks.filter((ack) => ack.atMs < crashAtMs).length * options.batchRows;
    progress(`restore: crashed ${victim}; waiting for the first acknowledgement by another node`);
    const byNewLeader = () => acks.find((ack) => ack.atMs > crashAtMs && ack.node !== victim);
    await waitFor(() => byNewLeader() !== undefined, "the first acknowledgement by a new leader", 3 * options.setting.leaseTtlMs + 120_000);
    const first = byNewLeader()!;
    result.crashToFirstAckMs = first.atMs - crashAtMs;
    result.crashToViewMs = leader.movedAtMs === null ? null : leader.movedAtMs - crashAtMs;
    result.newLeader = first.node;
  } finally {
    running = false;
    await writing;
  }
  result.epochAfter = (await describeTable(service, TABLE)).buckets[keys.bucket]?.leaderEpoch ?? null;
  // The log reaches the file through the child's pipe: the line may land a moment after the answer.
  result.load = await eventually(() => loggedLoads(service.logFile, TABLE, keys.bucket).filter((line) => line.node === result.newLeader).at(-1), {
    timeoutMs: 15_000,
    what: `the table.load line of ${result.newLeader}`,
  }).catch(() => null);
  if (nodeEpoch !== null) {
    const epoch = nodeEpoch;
    result.takeover = await eventually(() => loggedTakeovers(service.logFile, victim, epoch).at(-1), { timeoutMs: 15_000, what: `the takeover.end line of ${victim}` }).catch(() => null);
  }
  progress(`restore: ${result.newLeader} acknowledged ${result.crashToFirstAckMs} ms after the crash; its load: ${JSON.stringify(result.load)}`);
}
