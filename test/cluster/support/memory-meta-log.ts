// The metadata log for the node tier and the simulation: the same MetaLogService the Durable Object runs
// (the real `apply`, watches, duties, drain, liveness) over an in-memory journal, behind the node's port.
// No subscriptions exist here: a node that watches the subscription set is told there are none, so it
// reports no appends.
import { emptyState } from "../../../src/core/meta/index.ts";
import { MemoryJournal } from "../../../src/metadata/memory-journal.ts";
import { MetaLogService } from "../../../src/metadata/meta-log-service.ts";
import type { NodeMetaPort } from "../../../src/node/runtime/wiring.ts";
import type { SubscriptionSet } from "../../../src/ports/meta-log-client.ts";

export class MemoryMetaLog {
  readonly journal = new MemoryJournal();
  readonly service: MetaLogService;

  constructor(now: () => number = () => Date.now()) {
    this.service = new MetaLogService(emptyState(), this.journal, { now });
  }

  /** The port a node uses. Each call is answered asynchronously, like an RPC. */
  port(): NodeMetaPort {
    const call = <T>(answer: () => T | Promise<T>): Promise<T> => Promise.resolve().then(answer);
    const none = (since: number): SubscriptionSet => ({ version: Math.max(since, 0), subscriptions: 0 });
    return {
      propose: (command) => call(() => this.service.propose(command)) as never,
      lookupStream: (query) => call(() => this.service.lookupStream(query)),
      lookupTable: (name) => call(() => this.service.lookupTable(name)),
      listTables: () => call(() => this.service.listTables()),
      createTable: (coordinator, name, definition, buckets, streamConfig) => call(() => this.service.createTable(coordinator, name, definition, buckets, streamConfig)),
      addPartition: (coordinator, table, value, streamConfig) => call(() => this.service.addPartition(coordinator, table, value, streamConfig)),
      watchDuties: (nodeId, since, timeoutMs, nodeEpoch) => call(() => this.service.watchDuties(nodeId, since, timeoutMs, nodeEpoch)),
      heartbeat: (nodeId, nodeEpoch) => call(() => this.service.heartbeat(nodeId, nodeEpoch)),
      coordinatorTick: (coordinator, maxMoves) => call(() => this.service.coordinatorTick(coordinator, maxMoves)),
      collectable: (coordinator, ids) => call(() => this.service.collectable(coordinator, ids)),
      onStreamAppended: () => call(() => ({ effects: [], subscriptions: 0 })),
      onWebhookReply: () => call(() => []),
      watchSubscriptions: (_nodeId, since, timeoutMs) =>
        call(async () => {
          // Nothing ever changes: the first watch answers at once, the next ones wait their whole timeout.
          if (since >= 0) await new Promise((resolve) => setTimeout(resolve, this.service.boundedWaitMs(timeoutMs)));
          return none(since);
        }),
    };
  }
}
