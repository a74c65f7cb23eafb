// The object store as one incarnation sees it in the simulation: every request is a pending operation
// that reaches the shared MemoryStore only when the scheduler picks it, with the fault decided at that
// moment. `fail` and `delay` are the MemoryStore's own injected faults (injected for exactly that request,
// just before it is sent); a lost answer is made here, after the store acted, so the history knows the
// write took effect. A crashed incarnation's requests already sent still land when picked (a zombie's
// in-flight write), but their answers are dropped, and it sends nothing new. On guard-scenario seeds a
// WAL PUT may be held back until its chain was recovered (guard-scenarios.ts); a refused conditional PUT is
// counted as the guard that refused it (guards.ts).
//
// Latency: the scheduler bounds each request's latency (scheduler.ts) but may complete it at once. With
// SIM_S3_LATENCY_MS set (faults.ts) a picked request first waits that long on a virtual timer, then reaches
// the store: R2's round trip as a floor, in virtual time. The fault is decided when it is picked; a crash
// during the wait drops the answer but not the request (it was sent). Unset, a picked request lands at once.
import { manifestKey } from "../../src/storage/keys.ts";
import type { MemoryStore, StoreOperation } from "../../src/storage/memory-store.ts";
import { ObjectStoreError, type ObjectStore } from "../../src/storage/object-store.ts";
import { decodeWalObject } from "../../src/storage/wal-format.ts";
import type { FaultPlan, StoreFault } from "./faults.ts";
import { guardCounter, storeGuard } from "./guards.ts";
import type { History, Ownership, WalDataRecord } from "./history.ts";
import type { IoQueue } from "./scheduler.ts";
import { never, type Gate, type SimMetaLog } from "./sim-meta.ts";
import type { Trace } from "./trace.ts";
import type { VirtualClock } from "./virtual-time.ts";

export interface StoreDeps {
  readonly clock: VirtualClock;
  readonly base: MemoryStore;
  readonly io: IoQueue;
  readonly faults: FaultPlan;
  readonly trace: Trace;
  readonly history: History;
  readonly meta: SimMetaLog;
}

const MANIFEST = /^streams\/([^/]+)\/manifest$/;
const decoder = new TextDecoder();

export function scheduledStore(deps: StoreDeps, owner: string, gate: Gate): ObjectStore {
  const { base, io, faults, trace, history } = deps;
  const call = <R>(op: StoreOperation, key: string, invoke: () => Promise<R>, onEffect?: () => void, body?: Uint8Array): Promise<R> => {
    if (gate.crashed) return never<R>();
    return new Promise<R>((resolve, reject) => {
      const deliver = (settle: () => void, outcome: string): void => {
        if (gate.crashed) return;
        if (faults.split()) {
          io.add({ kind: "reply", owner, label: `store ${op} ${key} ${outcome}`, run: () => (gate.crashed ? undefined : settle()) });
        } else {
          settle();
        }
      };
      const land = (fault: StoreFault): void => {
        const latencyMs = faults.storeLatencyMs();
        if (latencyMs === 0) reach(fault);
        else deps.clock.schedule(latencyMs, () => reach(fault), null, `store latency ${latencyMs}ms ${owner} ${op} ${key}`);
      };
      const reach = (fault: StoreFault): void => {
        if (fault.kind === "fail") base.inject({ op, keyPrefix: key, kind: "fail", times: 1 });
        if (fault.kind === "delay") base.inject({ op, keyPrefix: key, kind: "delay", delayMs: fault.delayMs, times: 1 });
        const note = fault.kind === "none" ? "" : fault.kind === "delay" ? ` [delay ${fault.delayMs}ms]` : ` [${fault.kind}]`;
        invoke().then(
          (value) => {
            onEffect?.();
            if (fault.kind === "lost") {
              trace.write(`  store ${owner} ${op} ${key}${note} took effect, answer lost`);
              deliver(() => reject(new ObjectStoreError("retryable", `sim: answer to ${op} ${key} lost (injected)`, key)), "lost");
              return;
            }
            trace.write(`  store ${owner} ${op} ${key}${note} -> ok`);
            deliver(() => resolve(value), "ok");
          },
          (error: unknown) => {
            const kind = error instanceof ObjectStoreError ? error.kind : String(error);
            trace.write(`  store ${owner} ${op} ${key}${note} -> ${kind}`);
            if (kind === "precondition_failed" && body !== undefined) countGuard(key, body);
            deliver(() => reject(error instanceof Error ? error : new Error(String(error))), kind);
          },
        );
      };
      io.add({
        kind: "store",
        owner,
        label: `${op} ${key}`,
        run: () => {
          if (faults.targeted?.store(owner, op, key, body, () => land({ kind: "none" })) === true) {
            trace.write(`  store ${owner} ${op} ${key} HELD BACK: it lands later`);
            return;
          }
          land(faults.store());
        },
      });
    });
  };
  /** A conditional PUT refused: which guard refused it (guards.ts), judged by the bytes that landed there first. */
  const countGuard = (key: string, body: Uint8Array): void => {
    const existing = history.writes.findLast((write) => write.key === key)?.body ?? null;
    const guard = storeGuard(key, body, existing);
    if (guard !== null) history.count(guardCounter(guard));
  };
  const recordPut = (key: string, body: Uint8Array) => (): void => {
    const manifest = MANIFEST.exec(key);
    let manifestOf: Ownership | null = null;
    if (manifest !== null) {
      const streamId = decodeURIComponent(manifest[1]!);
      if (manifestKey(streamId) === key) manifestOf = deps.meta.ownershipById(streamId);
    }
    const walData: WalDataRecord[] = [];
    if (key.startsWith("wal/")) {
      const object = decodeWalObject(body, key);
      if (object.kind === "records") {
        for (const record of object.records) {
          if (record.data.byteLength === 0) continue;
          walData.push({
            streamId: record.streamId,
            streamEpoch: record.streamEpoch,
            firstOffset: record.firstOffset,
            text: decoder.decode(record.data),
            ownership: deps.meta.ownershipById(record.streamId),
          });
        }
      }
    }
    history.writes.push({ step: trace.currentStep, owner, key, body: body.slice(), manifestOf, walData });
  };
  return {
    put: (key, body, options) => call("put", key, () => base.put(key, body, options), recordPut(key, body), body),
    get: (key, range) => call("get", key, () => base.get(key, range)),
    head: (key) => call("head", key, () => base.head(key)),
    list: (prefix, options) => call("list", prefix, () => base.list(prefix, options)),
    delete: (key) => call("delete", key, () => base.delete(key), () => history.deletes.push({ step: trace.currentStep, key })),
  };
}
