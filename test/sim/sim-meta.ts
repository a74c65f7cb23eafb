// The metadata log of the simulation: the real MetaLogService (the real `apply`, watches, duties, drain,
// liveness) over an in-memory journal that records every accepted entry with the state it was applied
// to, and per incarnation a port whose every call is a pending operation: the MetaLog receives it (and
// applies a proposal) only when the scheduler picks it, possibly with a fault, and the answer may be
// held back for a later step. A crashed incarnation's calls already sent may still arrive; their answers
// are dropped, and it sends nothing new. Subscriptions are the real SubscriptionService (subscription-meta.ts).
// On guard-scenario seeds a targeted fault may hold a call back (its caller times out, it arrives later);
// every answer is looked at for a guard that fired (guards.ts), counted as `guard <name>`.
import type { LogEntry, MetaState, Proposer, Touched } from "../../src/core/meta/index.ts";
import { emptyState } from "../../src/core/meta/index.ts";
import { MemoryJournal } from "../../src/metadata/memory-journal.ts";
import { DEFAULT_TIMINGS, MetaLogService } from "../../src/metadata/meta-log-service.ts";
import type { NodeMetaPort } from "../../src/node/runtime/wiring.ts";
import type { FaultPlan } from "./faults.ts";
import { guardCounter, metaGuard } from "./guards.ts";
import { EPOCH_BASE_MS, incarnationLabel, type History, type IncarnationId, type Ownership } from "./history.ts";
import type { IoQueue } from "./scheduler.ts";
import { SimSubscriptions } from "./subscription-meta.ts";
import { offsetBytes } from "./subscription-history.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

/** Whether an incarnation is dead: its calls never answer. */
export interface Gate {
  crashed: boolean;
}

export const never = <T>(): Promise<T> => new Promise<T>(() => {});

class RecordingJournal extends MemoryJournal {
  service: MetaLogService | null = null;
  /** The latest OpenStream per stream id: the incarnation allowed to acknowledge appends. */
  readonly openers = new Map<string, IncarnationId>();

  constructor(
    private readonly history: History,
    private readonly trace: Trace,
  ) {
    super();
  }

  override append(entry: LogEntry, touched: Touched, next: MetaState): MetaState {
    super.append(entry, touched, next);
    if (this.service === null) throw new Error("journal used before its service was attached");
    // MetaLogService journals before it makes the new state current: `state` is still the one before.
    this.history.journal.push({ step: this.trace.currentStep, entry, before: this.service.state });
    const command = entry.command;
    if (command.type === "OpenStream") this.openers.set(command.streamId, { nodeId: command.nodeId, epoch: command.nodeEpoch });
    if (command.type === "ClaimStream") this.noteClaimOpener(touched.streams?.[0] ?? "", command.by, next);
    this.trace.write(`log #${entry.index} ${describeCommand(command)}`);
    return next;
  }

  /** A journaled claim that left its stream opened by the proposer opened it (table CM): its opener. */
  private noteClaimOpener(streamId: string, by: Proposer, state: MetaState): void {
    const stream = state.streams.get(streamId);
    if (stream?.ownership === "opened" && stream.owner === by.nodeId) this.openers.set(streamId, { nodeId: by.nodeId, epoch: by.nodeEpoch });
  }
}

export class SimMetaLog {
  readonly service: MetaLogService;
  readonly subscriptions: SimSubscriptions;
  private readonly journal: RecordingJournal;

  constructor(
    clock: VirtualClock,
    private readonly io: IoQueue,
    private readonly faults: FaultPlan,
    private readonly trace: Trace,
    private readonly history: History,
    leaseTtlMs: number,
  ) {
    this.journal = new RecordingJournal(history, trace);
    this.service = new MetaLogService(emptyState(), this.journal, { now: () => clock.now(), timings: { ...DEFAULT_TIMINGS, leaseTtlMs } });
    this.journal.service = this.service;
    this.subscriptions = new SimSubscriptions({ clock, io, faults, trace, history });
  }

  /** What the log says about the stream named `name` now. */
  ownershipOf(name: string): Ownership {
    return this.ownershipById(this.service.state.streams.idByName(name) ?? null);
  }

  /** What the log says about the stream `streamId` now (for the one-writer check when a WAL object lands). */
  ownershipById(streamId: string | null): Ownership {
    const stream = streamId === null ? undefined : this.service.state.streams.get(streamId);
    return {
      streamId,
      name: stream?.name ?? null,
      ownership: stream?.ownership ?? null,
      owner: stream?.owner ?? null,
      epoch: stream?.epoch ?? null,
      opener: streamId === null ? null : (this.journal.openers.get(streamId) ?? null),
      orphanOf: stream?.orphanOf ?? null,
    };
  }

  /**
   * One call to the MetaLog from `owner` as a pending operation: it arrives when the scheduler picks it,
   * maybe failed (not applied) or lost (applied, the answer lost), and its answer may be held back.
   */
  call<T>(owner: string, gate: Gate, label: string, invoke: () => T | Promise<T>, subject?: object): Promise<T> {
    if (gate.crashed) return never<T>();
    return new Promise<T>((resolve, reject) => {
      const deliver = (settle: () => void, outcome: string): void => {
        if (gate.crashed) return;
        if (this.faults.split()) {
          this.io.add({ kind: "reply", owner, label: `meta ${label} ${outcome}`, run: () => (gate.crashed ? undefined : settle()) });
        } else {
          settle();
        }
      };
      this.io.add({
        kind: "meta",
        owner,
        label,
        run: () => {
          const targeted = this.faults.targeted?.meta(owner, label, subject, () => this.deliverLate(owner, label, invoke, subject)) ?? null;
          if (targeted === "late") {
            this.trace.write(`  meta ${owner} ${label} HELD BACK: the caller times out, the request arrives later`);
            deliver(() => reject(new Error(`sim: metadata call ${label} timed out (held back)`)), "timed out");
            return;
          }
          const fault = targeted ?? this.faults.meta();
          if (fault === "fail") {
            this.trace.write(`  meta ${owner} ${label} FAILED (injected, not applied)`);
            deliver(() => reject(new Error(`sim: metadata call ${label} failed (injected)`)), "failed");
            return;
          }
          Promise.resolve()
            .then(invoke)
            .then(
              (value) => {
                if (fault === "lost") {
                  this.observe(label, value, subject);
                  this.trace.write(`  meta ${owner} ${label} applied, answer LOST: ${summarize(value)}`);
                  deliver(() => reject(new Error(`sim: metadata answer to ${label} lost (injected)`)), "lost");
                  return;
                }
                this.trace.write(`  meta ${owner} ${label} -> ${summarize(value)}`);
                this.observe(label, value, subject);
                deliver(() => resolve(value), summarize(value));
              },
              (error: unknown) => {
                this.trace.write(`  meta ${owner} ${label} threw ${String(error)}`);
                deliver(() => reject(error instanceof Error ? error : new Error(String(error))), "threw");
              },
            );
        },
      });
    });
  }

  /** A call held back (TargetedFaults.meta `late`) arriving now: applied, its answer traced and going nowhere. */
  private deliverLate(owner: string, label: string, invoke: () => unknown, subject: object | undefined): void {
    Promise.resolve()
      .then(invoke)
      .then(
        (value) => {
          this.trace.write(`  meta ${owner} ${label} (late) -> ${summarize(value)}`);
          this.observe(label, value, subject);
        },
        (error: unknown) => this.trace.write(`  meta ${owner} ${label} (late) threw ${String(error)}`),
      );
  }

  /** Counts a guard the answer shows firing (guards.ts); a lost answer's refusal is counted too. */
  private observe(label: string, value: unknown, subject: object | undefined): void {
    const guard = metaGuard(label, value, subject);
    if (guard !== null) this.history.count(guardCounter(guard));
  }

  /** The port one incarnation uses; `owner` names it in the trace. */
  port(owner: string, gate: Gate): NodeMetaPort {
    const call = <T>(label: string, invoke: () => T | Promise<T>, subject?: object): Promise<T> => this.call(owner, gate, label, invoke, subject);
    const service = this.service;
    const subscriptions = this.subscriptions.service;
    return {
      propose: (command) => call(`propose ${describeCommand(command)}`, () => service.propose(command), command) as never,
      lookupStream: (query) => call(`lookup ${"name" in query ? query.name : query.id}`, () => service.lookupStream(query)),
      lookupTable: (name) => call(`lookupTable ${name}`, () => service.lookupTable(name)),
      listTables: () => call("listTables", () => service.listTables()),
      createTable: (coordinator, name, definition, buckets, config) =>
        call(`createTable ${name}`, () => service.createTable(coordinator, name, definition, buckets, config)),
      addPartition: (coordinator, table, value, config) =>
        call(`addPartition ${table} ${value}`, () => service.addPartition(coordinator, table, value, config)),
      watchDuties: (nodeId, since, timeoutMs, nodeEpoch) =>
        call(`watchDuties since ${since}`, () => service.watchDuties(nodeId, since, timeoutMs, nodeEpoch)),
      heartbeat: (nodeId, nodeEpoch) => call("heartbeat", () => service.heartbeat(nodeId, nodeEpoch)),
      coordinatorTick: (coordinator, maxMoves) => call("coordinatorTick", () => service.coordinatorTick(coordinator, maxMoves), coordinator),
      collectable: (coordinator, ids) => call(`collectable ${ids.length} ids`, () => service.collectable(coordinator, ids)),
      onStreamAppended: (tails) =>
        call(`onStreamAppended ${tails.map((t) => `${t.path}@${offsetBytes(t.tailOffset)}`).join(" ")}`, async () => {
          const effects = await subscriptions.streamsAppended(tails);
          return { effects, subscriptions: subscriptions.size };
        }),
      // Guarded: the node's delivery counts in-flight webhooks per host until this answers (see SimSubscriptions.close).
      onWebhookReply: (id, ref, done) =>
        this.subscriptions.guard(call(`onWebhookReply ${id} g${ref.generation}`, async () => (await subscriptions.webhookReplied(id, ref, done)).effects)),
      watchSubscriptions: (nodeId, since, timeoutMs) =>
        call(`watchSubscriptions`, () => subscriptions.watch(nodeId, since, service.boundedWaitMs(timeoutMs))),
    };
  }
}

/** A command in one line: its type and the fields that matter for reading a trace. */
export function describeCommand(command: object): string {
  const { type, config: _config, addr: _addr, ...rest } = command as { readonly type: string } & Record<string, unknown>;
  const by = rest["by"] as { nodeId: string; nodeEpoch: number } | undefined;
  delete rest["by"];
  const fields = Object.entries(rest)
    .map(([key, value]) => `${key}=${key === "nodeEpoch" ? Number(value) - EPOCH_BASE_MS : JSON.stringify(value)}`)
    .join(" ");
  return `${type}${fields === "" ? "" : ` ${fields}`}${by === undefined ? "" : ` by=${incarnationLabel({ nodeId: by.nodeId, epoch: by.nodeEpoch })}`}`;
}

/** A short form of an answer for the trace. */
function summarize(value: unknown): string {
  if (typeof value !== "object" || value === null) return String(value);
  const v = value as Record<string, unknown>;
  if ("ok" in v) {
    if (v["ok"] === false) {
      const error = v["error"] as { code: string; message: string };
      return `refused ${error.code}: ${error.message}`;
    }
    const inner = v["value"] as Record<string, unknown> | undefined;
    const stream = inner?.["stream"] as { id: string; ownership: string; owner: string | null; epoch: number } | undefined;
    const changed = v["changed"] === false ? " (no-op)" : "";
    if (stream !== undefined) return `ok${changed} ${stream.id} ${stream.ownership} by ${stream.owner ?? "-"} at ${stream.epoch}`;
    return `ok${changed}`;
  }
  if ("transfers" in v) {
    const transfers = v["transfers"] as unknown[];
    const handedTo = v["handedTo"] as unknown[];
    return `duties v${String(v["version"])} transfers=${transfers.length} handedTo=${handedTo.length}`;
  }
  if ("stream" in v && "version" in v) {
    const stream = v["stream"] as { id: string; ownership: string; owner: string | null; epoch: number; transfer?: { target: string } } | null;
    if (stream === null) return `v${String(v["version"])} none`;
    const transfer = stream.transfer === undefined ? "" : ` transfer->${stream.transfer.target}`;
    return `v${String(v["version"])} ${stream.id} ${stream.ownership} by ${stream.owner ?? "-"} at ${stream.epoch}${transfer}`;
  }
  return "answered";
}
