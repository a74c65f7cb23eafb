// The three-node world of the node-tier tests that fail nodes over: nodes a, b and c over the in-memory
// store and the real MetaLogService, on a clock the test moves, with short leases (a test fails a node over
// by moving the clock past LEASE_TTL_MS), heartbeats driven by the test (NodeRuntime.beat, what the Durable
// Object's alarm calls). Node a beats first, so it holds the coordinator lease.
import { expect } from "vitest";
import type { LogSink } from "../../../src/log/logger.ts";
import type { SettingsVars } from "../../../src/node/settings.ts";
import type { MemoryStore } from "../../../src/storage/memory-store.ts";
import { TestCluster, type TestNode } from "./test-cluster.ts";

/** The lease of these worlds. */
export const NODE_WORLD_LEASE_TTL_MS = 1_000;

export interface NodeWorld {
  readonly cluster: TestCluster;
  readonly nodes: Map<string, TestNode>;
  readonly clock: { ms: number };
  /** Moves the clock and lets the given nodes heartbeat (the coordinator ticks in its beat). */
  advance(ms: number, beating: readonly TestNode[]): Promise<void>;
}

export interface NodeWorldOptions {
  /** Settings over the world's own (the lease, 100 ms heartbeats and coordinator ticks). */
  readonly settings?: SettingsVars;
  readonly logSink?: LogSink;
  readonly store?: MemoryStore;
}

export async function nodeWorld(options: NodeWorldOptions = {}): Promise<NodeWorld> {
  const clock = { ms: 1_700_000_000_000 };
  const cluster = new TestCluster({
    now: () => clock.ms,
    settings: { LEASE_TTL_MS: String(NODE_WORLD_LEASE_TTL_MS), HEARTBEAT_MS: "100", COORDINATOR_TICK_MS: "100", ...options.settings },
    ...(options.logSink === undefined ? {} : { logSink: options.logSink }),
    ...(options.store === undefined ? {} : { store: options.store }),
  });
  cluster.meta.service.timings.leaseTtlMs = NODE_WORLD_LEASE_TTL_MS;
  const nodes = new Map<string, TestNode>();
  for (const id of ["a", "b", "c"]) nodes.set(id, await cluster.start(id));
  for (const node of nodes.values()) expect(await node.runtime.beat()).toBe("ok");
  return {
    cluster,
    nodes,
    clock,
    advance: async (ms, beating) => {
      clock.ms += ms;
      for (const node of beating) await node.runtime.beat();
    },
  };
}
