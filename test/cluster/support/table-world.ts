// The three-node world of the table tests in the node tier (tables.test.ts, table-partitions.test.ts):
// nodes a, b and c over the in-memory store and the real MetaLogService, a clock the test moves, short
// leases, every structured log line kept, and the table "t" set up by the caller at node a (the coordinator).
import type { JsonValue } from "../../../src/core/meta/json.ts";
import { definitionJson, parseTableDefinition, type TableDefinition } from "../../../src/core/tables/definition.ts";
import type { MemoryStore } from "../../../src/storage/memory-store.ts";
import type { SettingsVars } from "../../../src/node/settings.ts";
import { nodeWorld, NODE_WORLD_LEASE_TTL_MS } from "./node-world.ts";
import type { TestCluster, TestNode } from "./test-cluster.ts";

/** The lease of the table worlds: a test fails a node over by moving the clock past it. */
export const TABLE_WORLD_LEASE_TTL_MS = NODE_WORLD_LEASE_TTL_MS;

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
  /** More settings (e.g. TIERING_INTERVAL_MS). */
  readonly settings?: SettingsVars;
}

export async function tableWorld(options: TableWorldOptions): Promise<TableWorld> {
  const definition = parseTableDefinition(options.definition);
  if (!definition.ok) throw new Error(`definition: ${definition.error.message}`);
  const lines = options.lines ?? [];
  const world = await nodeWorld({
    settings: { WAL_BATCH_DEADLINE_MS: String(options.walBatchDeadlineMs ?? 10_000), ...options.settings },
    logSink: (line) => lines.push(JSON.parse(line) as LogLine),
    ...(options.store === undefined ? {} : { store: options.store }),
  });
  await options.setUp(world.nodes.get("a")!, definitionJson(definition.value) as JsonValue, world.cluster);
  return { ...world, definition: definition.value };
}
