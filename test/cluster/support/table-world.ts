// The three-node world of the table tests in the node tier (tables.test.ts, table-partitions.test.ts):
// nodes a, b and c over the in-memory store and the real MetaLogService, a clock the test moves, short
// leases, every structured log line kept, and the table "t" set up by the caller at node a (the coordinator).
import { expect } from "vitest";
import type { JsonValue } from "../../../src/core/meta/json.ts";
import { definitionJson, parseTableDefinition, type TableDefinition } from "../../../src/core/tables/definition.ts";
import type { MemoryStore } from "../../../src/storage/memory-store.ts";
import { TestCluster, type TestNode } from "./test-cluster.ts";

/** The lease of the table worlds: a test fails a node over by moving the clock past it. */
export const TABLE_WORLD_LEASE_TTL_MS = 1_000;

export type LogLine = Record<string, unknown>;

export interface TableWorld {
  readonly cluster: TestCluster;
  readonly nodes: Map<string, TestNode>;
  readonly clock: { ms: number };
  readonly definition: TableDefinition;
  advance(ms: number, beating: readonly TestNode[]): Promise<void>;
}

export interface TableWorldOptions {
  /** The table's definition as a PUT would send it. */
  readonly definition: unknown;
  /** Creates table "t" (and whatever else) at node a, given the canonical definition as the router passes it on. */
  readonly setUp: (coordinator: TestNode, recorded: JsonValue, cluster: TestCluster) => Promise<void>;
  readonly store?: MemoryStore;
  readonly lines?: LogLine[];
  readonly walBatchDeadlineMs?: number;
}

export async function tableWorld(options: TableWorldOptions): Promise<TableWorld> {
  const definition = parseTableDefinition(options.definition);
  if (!definition.ok) throw new Error(`definition: ${definition.error.message}`);
  const lines = options.lines ?? [];
  const clock = { ms: 1_700_000_000_000 };
  const cluster = new TestCluster({
    now: () => clock.ms,
    settings: {
      LEASE_TTL_MS: String(TABLE_WORLD_LEASE_TTL_MS),
      HEARTBEAT_MS: "100",
      COORDINATOR_TICK_MS: "100",
      WAL_BATCH_DEADLINE_MS: String(options.walBatchDeadlineMs ?? 10_000),
    },
    logSink: (line) => lines.push(JSON.parse(line) as LogLine),
    ...(options.store === undefined ? {} : { store: options.store }),
  });
  cluster.meta.service.timings.leaseTtlMs = TABLE_WORLD_LEASE_TTL_MS;
  const nodes = new Map<string, TestNode>();
  for (const id of ["a", "b", "c"]) nodes.set(id, await cluster.start(id));
  for (const node of nodes.values()) expect(await node.runtime.beat()).toBe("ok");
  await options.setUp(nodes.get("a")!, definitionJson(definition.value) as JsonValue, cluster);
  return {
    cluster,
    nodes,
    clock,
    definition: definition.value,
    advance: async (ms, beating) => {
      clock.ms += ms;
      for (const node of beating) await node.runtime.beat();
    },
  };
}
