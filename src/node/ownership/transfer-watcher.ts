// The watcher loop every node runs (docs/transfers.md: no node calls another node): it follows the metadata log's
// duties for this node (pending transfers it is the source or target of, streams just handed to it) and
// takes the next step of table T (src/core/transfer-steps.ts) for each. The log answers at once on a
// change and otherwise after `watchMs`, so a step runs as soon as the record appears and is retried about
// once a second until the log shows it done; nothing is remembered that a crash could lose: a restarted
// node asks for its duties from scratch.
import type { StreamView } from "../../core/meta/view.ts";
import { transferStep, type TransferStep } from "../../core/transfer-steps.ts";
import type { MetaLogClient } from "../../ports/meta-log-client.ts";
import { adoptStream } from "./adopt.ts";
import { complete, handOff } from "./hand-off.ts";
import { forgetStale, heldCopyIsStale } from "../streams/release.ts";
import type { NodeContext } from "../context.ts";
import { isGone } from "../state/stream-registry.ts";

export interface WatcherOptions {
  /** How long one watch waits for a change before the loop retries what is still pending. */
  readonly watchMs?: number;
  /** Streams stepped at once. */
  readonly concurrency?: number;
}

export interface WatcherStats {
  handOffs: number;
  completions: number;
  adoptions: number;
  failures: number;
}

export class TransferWatcher {
  private stopped = false;
  /** While set, rounds take no step (operators and tests hold transfers where they are). */
  paused = false;
  /** Streams handed to this node whose open failed: retried on every round until they open. */
  private readonly toOpen = new Map<string, StreamView>();
  readonly stats: WatcherStats = { handOffs: 0, completions: 0, adoptions: 0, failures: 0 };
  private readonly watchMs: number;
  private readonly concurrency: number;

  constructor(
    private readonly ctx: NodeContext,
    private readonly meta: Pick<MetaLogClient, "watchDuties">,
    options: WatcherOptions = {},
  ) {
    this.watchMs = options.watchMs ?? 1_000;
    this.concurrency = options.concurrency ?? 16;
  }

  stop(): void {
    this.stopped = true;
  }

  /** Runs until `stop` (or the node stops serving). Never throws. */
  async run(): Promise<void> {
    let since = 0;
    while (!this.stopped && this.ctx.stopped === null) {
      try {
        const duties = await this.meta.watchDuties(this.ctx.nodeId, since, since === 0 ? 0 : this.watchMs, this.ctx.nodeEpoch);
        if (duties.superseded === true) {
          this.ctx.log.log("node.superseded", { during: "transfer_watch" });
          break;
        }
        since = duties.version;
        if (this.stopped) break;
        if (this.paused) continue;
        for (const stream of duties.handedTo) this.toOpen.set(stream.id, stream);
        await this.stepAll([...duties.transfers, ...this.toOpen.values()]);
      } catch (error) {
        this.stats.failures++;
        this.ctx.log.log("node.error", { during: "transfer_watch" }, error);
        await new Promise((resolve) => setTimeout(resolve, this.watchMs));
      }
    }
  }

  private async stepAll(streams: readonly StreamView[]): Promise<void> {
    const queue = [...streams];
    const worker = async (): Promise<void> => {
      for (let stream = queue.shift(); stream !== undefined; stream = queue.shift()) await this.stepOne(stream);
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, queue.length) }, worker));
  }

  /** One step for one stream; failures are logged and retried next round. */
  async stepOne(stream: StreamView): Promise<TransferStep> {
    let held = this.ctx.registry.get(stream.id);
    if (held !== undefined && held.phase.kind === "held" && heldCopyIsStale(stream, this.ctx.nodeId, held)) {
      // A copy from before another node's ownership (a release record lost in a crash): adopt instead (T5).
      try {
        await forgetStale(this.ctx, stream.id);
      } catch (error) {
        this.stats.failures++;
        this.ctx.log.log("transfer.failed", { stream: stream.name, streamId: stream.id, step: "forget_stale" }, error);
      }
      held = this.ctx.registry.get(stream.id);
    }
    const step = transferStep({ nodeId: this.ctx.nodeId, stream, holds: held !== undefined && !isGone(held) });
    try {
      switch (step.kind) {
        case "hand_off":
        case "close_and_complete":
          await handOff(this.ctx, stream.id, stream.name, step.epoch);
          this.stats.handOffs++;
          this.ctx.log.log("transfer.hand_off", { stream: stream.name, streamId: stream.id, epoch: step.epoch, rule: step.rule });
          break;
        case "complete":
          await complete(this.ctx, stream.id, step.closedEpoch);
          this.stats.completions++;
          this.ctx.log.log("transfer.complete", { stream: stream.name, streamId: stream.id, epoch: step.closedEpoch, rule: step.rule });
          break;
        case "open": {
          const error = await adoptStream(this.ctx, stream);
          // Opened, or no longer this node's to open (deleted, or someone else opened it): done either way.
          if (error === null || error.code === "not_found" || error.code === "held_by") {
            this.toOpen.delete(stream.id);
            if (error === null) {
              this.stats.adoptions++;
              this.ctx.log.log("transfer.open", { stream: stream.name, streamId: stream.id, rule: step.rule });
            }
          } else {
            this.ctx.log.log("transfer.failed", { stream: stream.name, streamId: stream.id, step: "open", rule: step.rule, code: error.code }, error.message);
          }
          break;
        }
        case "wait":
          break;
        case "none":
          this.toOpen.delete(stream.id);
          break;
      }
    } catch (error) {
      this.stats.failures++;
      this.ctx.log.log("transfer.failed", { stream: stream.name, streamId: stream.id, step: step.kind, rule: step.rule }, error);
    }
    return step;
  }
}
