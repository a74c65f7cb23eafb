// The metadata log for the node tier and the simulation: the same MetaLogService the Durable Object runs
// (the real `apply`, watches, duties, drain, liveness) over an in-memory journal, behind the node's port.
// No subscriptions exist here: a node that watches the subscription set is told there are none, so it
// reports no appends. `restart()` replays the journal into a new service, as a MetaLog restart would.
import { emptyState, replay } from "../../../src/core/meta/index.ts";
import { MemoryJournal } from "../../../src/metadata/memory-journal.ts";
import { MetaLogService } from "../../../src/metadata/meta-log-service.ts";
import type { NodeMetaPort } from "../../../src/node/node-runtime.ts";
import type { SubscriptionSet } from "../../../src/ports/meta-log-client.ts";

export class MemoryMetaLog {
  readonly journal = new MemoryJournal();
  service: MetaLogService;
  /** Every call the nodes made, by method (tests count round trips). */
  readonly calls = new Map<string, number>();

  constructor(private readonly now: () => number = () => Date.now()) {
    this.service = new MetaLogService(emptyState(), this.journal, { now });
  }

  /** A MetaLog restart: the state replayed from the journal alone; liveness starts afresh. */
  restart(): void {
    this.service = new MetaLogService(replay(emptyState(), this.journal.entries), this.journal, { now: this.now });
  }

  /** The port a node uses. Each call is answered asynchronously, like an RPC. */
  port(): NodeMetaPort {
    const call = <T>(method: string, answer: () => T | Promise<T>): Promise<T> => {
      this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
      return Promise.resolve().then(answer);
    };
    const none = (since: number): SubscriptionSet => ({ version: Math.max(since, 0), subscriptions: 0 });
    return {
      propose: (command) => call("propose", () => this.service.propose(command)) as never,
      lookupStream: (query) => call("lookupStream", () => this.service.lookupStream(query)),
      watchDuties: (nodeId, since, timeoutMs) => call("watchDuties", () => this.service.watchDuties(nodeId, since, timeoutMs)),
      heartbeat: (nodeId, nodeEpoch) => call("heartbeat", () => this.service.heartbeat(nodeId, nodeEpoch)),
      onStreamAppended: () => call("onStreamAppended", () => ({ effects: [], subscriptions: 0 })),
      onWebhookReply: () => call("onWebhookReply", () => []),
      watchSubscriptions: (_nodeId, since, timeoutMs) =>
        call("watchSubscriptions", async () => {
          // Nothing ever changes: the first watch answers at once, the next ones wait their whole timeout.
          if (since >= 0) await new Promise((resolve) => setTimeout(resolve, this.service.boundedWaitMs(timeoutMs)));
          return none(since);
        }),
    };
  }
}
