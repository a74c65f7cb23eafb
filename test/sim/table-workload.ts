// The table workload of a seed (docs/simulation.md, "Tables" and "Tiering"), drawn from generators of its
// own (the seed mixed with constants), so that a seed without tables runs exactly as it did before there
// were tables: its shape (how many table clients, how eager, a partitioned table or not, how eager the
// tiering actor is and whether its rounds stall), and its actors: the creator, the bucket writers, the
// tiering actor and the tiering stall, the final table reader; and, once the run is over, the tiering check.
import type { MemoryStore } from "../../src/storage/memory-store.ts";
import type { Violation } from "./violations.ts";
import type { SimCluster } from "./cluster.ts";
import type { FaultPlan } from "./faults.ts";
import { LATE_WEIGHTS } from "./guard-scenarios.ts";
import type { History } from "./history.ts";
import type { Network } from "./network.ts";
import { Prng } from "./prng.ts";
import type { Actor, Weights } from "./scheduler.ts";
import type { SimMetaLog } from "./sim-meta.ts";
import { TableWorld, TableWriter, type TableDeps } from "./table-clients.ts";
import { TableCreator } from "./table-creator.ts";
import { FinalTableReader } from "./table-final.ts";
import { TieringActor } from "./tiering-actor.ts";
import { checkTiering } from "./tiering-checker.ts";
import { simTiering, type SimTiering } from "./tiering-peers.ts";
import { bothTargeted, TieringStall } from "./tiering-stall.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";
import type { Incarnation } from "./cluster.ts";
import type { IoQueue } from "./scheduler.ts";

/** The share of seeds that run the table workload beside the streams. */
const TABLE_SEEDS = 0.4;
/** Mixed into the seed for the table workload's own generator. */
const TABLE_STREAM = 0x7ab1e000;
/** The share of table seeds whose table is partitioned (two partitions of two buckets). */
const PARTITIONED_SEEDS = 0.5;
/** Mixed into the seed for that choice alone, so a table seed without partitions runs as it did before there were any. */
const PARTITION_STREAM = 0x9a471000;
/** Mixed into the seed for the tiering actor's, its peers' and the stall's generator. */
const TIERING_STREAM = 0x71e7b000;
/** The share of table seeds whose tiering rounds may stall (tiering-stall.ts); on those, the chance each request it can hold is held is one of these. */
const STALL_SEEDS = 0.6;
const STALL_CHANCES: readonly number[] = [0.5, 1];

/** The table workload of a seed: how many table clients, how eager they are (the `table` weight), whether its table is partitioned, how eager the tiering actor is and whether its rounds stall. */
export interface TableShape {
  readonly clients: number;
  readonly weight: number;
  readonly partitioned: boolean;
  /** The `tiering` weight. */
  readonly tiering: number;
  /** The chance a tiering request the stall can hold is held (0: no stall on this seed). */
  readonly stall: number;
}

/** The seed's table generators: the workload's (its shape, then its clients), the partition choice's, tiering's. */
export interface TableGenerators {
  readonly table: Prng;
  readonly partition: Prng;
  readonly tiering: Prng;
}

export function tableGenerators(seed: number): TableGenerators {
  return { table: new Prng((seed ^ TABLE_STREAM) >>> 0), partition: new Prng((seed ^ PARTITION_STREAM) >>> 0), tiering: new Prng((seed ^ TIERING_STREAM) >>> 0) };
}

export function drawTableShape(generators: TableGenerators): TableShape | null {
  const { table, partition, tiering } = generators;
  if (!table.chance(TABLE_SEEDS)) return null;
  return {
    clients: table.between(2, 4),
    weight: table.pick([2, 4, 8]),
    partitioned: partition.chance(PARTITIONED_SEEDS),
    tiering: tiering.pick([1, 2, 4]),
    stall: tiering.chance(STALL_SEEDS) ? tiering.pick(STALL_CHANCES) : 0,
  };
}

/** The table workload's categories: its clients and creator, the tiering actor, and the stall's deliveries. */
export function tableWeights(shape: TableShape): Weights {
  return { table: shape.weight, tiering: shape.tiering, ...(shape.stall > 0 ? LATE_WEIGHTS : {}) };
}

export function describeTableShape(shape: TableShape): string {
  return `${shape.partitioned ? "partitioned table" : "table"} clients ${shape.clients}, weight ${shape.weight}, tiering ${shape.tiering}${shape.stall > 0 ? `, stalls ${shape.stall}` : ""}`;
}

/** How each incarnation tiers: its location, and its RPC to the other nodes over the scheduler (tiering-peers.ts). */
export function tieringOf(generators: TableGenerators, io: IoQueue, trace: Trace, zombieRouting: number, cluster: () => SimCluster): (inc: Incarnation) => SimTiering {
  const peers = { io, trace, prng: generators.tiering.fork(), zombieRouting };
  return (inc) => simTiering(cluster(), inc, peers);
}

export interface TableWorkloadDeps {
  readonly cluster: SimCluster;
  readonly net: Network;
  readonly clock: VirtualClock;
  readonly trace: Trace;
  readonly history: History;
  readonly meta: SimMetaLog;
  readonly faults: FaultPlan;
  readonly store: MemoryStore;
  readonly leaseTtlMs: number;
  readonly addActor: (actor: Actor) => void;
}

export class TableWorkload {
  /** The actors the settle phase waits for (each idle). */
  readonly actors: readonly (Actor & { readonly idle: boolean })[];
  private readonly finalTables: FinalTableReader;
  private readonly tiering: TieringActor;
  private readonly world: TableWorld;
  private readonly stall: TieringStall | null = null;

  constructor(
    shape: TableShape,
    generators: TableGenerators,
    private readonly deps: TableWorkloadDeps,
  ) {
    const { cluster, net, clock, trace, history, meta } = deps;
    const tableDeps: TableDeps = { net, prng: generators.table.fork(), clock, trace, history, world: new TableWorld(shape.partitioned) };
    this.world = tableDeps.world;
    history.tables.partitioned = shape.partitioned;
    this.finalTables = new FinalTableReader(tableDeps, meta);
    const prng = generators.tiering;
    this.tiering = new TieringActor({ cluster, clock, trace, history, prng: prng.fork(), world: this.world, finalReadDone: () => this.finalTables.done });
    this.actors = [new TableCreator(cluster, tableDeps), ...Array.from({ length: shape.clients }, (_, i) => new TableWriter(`tw${i + 1}`, tableDeps)), this.tiering];
    for (const actor of this.actors) deps.addActor(actor);
    deps.addActor(this.finalTables);
    if (shape.stall > 0) {
      const stall = new TieringStall({ cluster, meta, history, trace, prng: prng.fork(), now: () => clock.now(), leaseTtlMs: deps.leaseTtlMs, chance: shape.stall });
      deps.faults.targeted = bothTargeted(deps.faults.targeted, stall);
      deps.addActor(stall);
      this.stall = stall;
    }
  }

  /** The final table read and the final tiering round after it are over, and the stalled requests whose moment came were delivered. */
  get finalDone(): boolean {
    return this.finalTables.done && this.tiering.done && (this.stall?.settled ?? true);
  }

  /** Tiering's exactly-once rule (tiering-checker.ts): after the run, outside virtual time. */
  checkAfter(): Promise<Violation[]> {
    return this.deps.history.fatal !== null ? Promise.resolve([]) : checkTiering(this.deps.history, this.deps.store, this.world);
  }
}
