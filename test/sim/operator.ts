// The operator: transfers, drains and undrains, proposed straight to the metadata log as the admin API
// does (docs/transfers.md). It picks among the streams the log holds and the nodes registered, so it also
// proposes moves the log refuses (a target draining, a transfer already pending), which must change
// nothing.
import type { Prng } from "./prng.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import type { SimMetaLog } from "./sim-meta.ts";
import type { Trace } from "./trace.ts";

export class Operator implements Actor {
  readonly name = "operator";
  /** While true the operator begins nothing (a lull of the residency scenario, residency-scenario.ts). */
  paused = false;

  constructor(
    private readonly meta: SimMetaLog,
    private readonly prng: Prng,
    private readonly trace: Trace,
    private readonly nodeIds: readonly string[],
  ) {}

  choices(phase: Phase): readonly Choice[] {
    if (phase !== "active" || this.paused) return [];
    const state = this.meta.service.state;
    const moves: Choice[] = [];
    const streams = [...state.streams.values()].filter((stream) => stream.owner !== null);
    if (streams.length > 0) {
      moves.push({ category: "transfer", label: "operator begins a transfer", run: () => this.beginTransfer(streams.map((s) => s.id)) });
    }
    const draining = this.nodeIds.filter((id) => state.nodes.get(id)?.draining === true);
    const registered = this.nodeIds.filter((id) => state.nodes.has(id));
    // Keep at least two nodes taking streams, so a drain has somewhere to go.
    if (draining.length === 0 && registered.length >= 3) {
      moves.push({ category: "drain", label: "operator drains a node", run: () => this.drain(this.prng.pick(registered)) });
    }
    if (draining.length > 0) moves.push({ category: "undrain", label: "operator undrains a node", run: () => this.undrain(this.prng.pick(draining)) });
    return moves;
  }

  /** The settle phase: every node takes streams again. */
  undrainAll(): void {
    for (const id of this.nodeIds) if (this.meta.service.state.nodes.get(id)?.draining === true) this.undrain(id);
  }

  private beginTransfer(streamIds: readonly string[]): void {
    const streamId = this.prng.pick(streamIds);
    const target = this.prng.pick(this.nodeIds);
    const result = this.meta.service.propose({ type: "BeginTransfer", streamId, target });
    this.trace.write(`  operator BeginTransfer ${streamId} -> ${target}: ${result.ok ? (result.changed ? "begun" : "no-op") : `refused ${result.error.code}`}`);
  }

  private drain(nodeId: string): void {
    const answer = this.meta.service.drain(nodeId);
    this.trace.write(`  operator drain ${nodeId}: ${answer.ok ? `${answer.begun} transfers begun, ${answer.unplaceable} unplaceable` : `refused ${answer.error.code}`}`);
  }

  private undrain(nodeId: string): void {
    const answer = this.meta.service.undrain(nodeId);
    this.trace.write(`  operator undrain ${nodeId}: ${answer.ok ? "ok" : `refused ${answer.error.code}`}`);
  }
}
