// Fault injection for tests (POST /admin/faults; the Worker offers it only with FAULTS_ENABLED=1), as the
// StreamNode shell applies it. crash: this incarnation acknowledges nothing more, drops its memory and
// answers 503 until healed, then a new incarnation starts at a new epoch. zombie: no heartbeat or lease
// renewal, serving goes on. pause: no heartbeat for `ms`. heal: ends any of them (a zombie's next heartbeat
// learns whether it was declared dead). The shell lends what only it has: a crash flag that survives an
// eviction, and a restart.
import type { FaultRequest, FaultState } from "../../ports/stream-node-client.ts";
import type { NodeRuntime } from "./node-runtime.ts";

export interface FaultHost {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  /** Crashed by fault injection: no heartbeat, no memory, no answer but 503 until healed. */
  crashed(): boolean;
  setCrashed(crashed: boolean): void;
  /** Ends this incarnation soon, and has the next one start even if no request comes. */
  restartSoon(): Promise<void>;
}

/** The fault a node is under (GET /admin/faults). */
export function faultStateOf(host: FaultHost, runtime: NodeRuntime | null): FaultState {
  const base = { nodeId: host.nodeId, nodeEpoch: host.nodeEpoch };
  if (host.crashed()) return { ...base, mode: "crash" };
  const fault = runtime?.fault ?? null;
  if (fault === null) return { ...base, mode: "none" };
  return fault.mode === "zombie" ? { ...base, mode: "zombie" } : { ...base, mode: "pause", untilMs: fault.untilMs };
}

/** Applies a fault; the incarnation that goes on serving (null once crashed). */
export async function applyFault(host: FaultHost, runtime: NodeRuntime | null, request: FaultRequest, nowMs: number): Promise<NodeRuntime | null> {
  switch (request.mode) {
    case "crash":
      host.setCrashed(true);
      runtime?.halt();
      return null;
    case "zombie":
      if (runtime !== null) runtime.fault = { mode: "zombie" };
      return runtime;
    case "pause":
      if (runtime !== null) runtime.fault = { mode: "pause", untilMs: nowMs + (request.ms ?? 0) };
      return runtime;
    case "heal":
      if (host.crashed()) {
        host.setCrashed(false);
        await host.restartSoon();
      } else if (runtime !== null) {
        runtime.fault = null;
      }
      return runtime;
  }
}
