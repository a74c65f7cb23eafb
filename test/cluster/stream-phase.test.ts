// The stream phase table (src/node/state/stream-registry.ts, StreamPhase): every legal move is allowed, every
// other move throws, and the final phases free the name.
import { describe, expect, it } from "vitest";
import type { StreamConfig } from "../../src/core/protocol/stream-config.ts";
import { isGone, moveTo, newStreamState, type StreamPhase, type StreamState } from "../../src/node/state/stream-registry.ts";

type Kind = StreamPhase["kind"];
const KINDS: readonly Kind[] = ["held", "opened", "handing-off", "moved-away", "removed", "evicted"];
const LEGAL: ReadonlySet<string> = new Set([
  "held->opened",
  "held->handing-off",
  "held->moved-away",
  "held->removed",
  "held->evicted",
  "opened->handing-off",
  "opened->removed",
  "opened->evicted",
  "handing-off->held",
  "handing-off->moved-away",
  "handing-off->removed",
]);

function phase(kind: Kind): StreamPhase {
  return kind === "handing-off" ? { kind, done: Promise.resolve() } : { kind };
}

function streamIn(kind: Kind): StreamState {
  const config: StreamConfig = { contentType: "text/plain", ttlSeconds: null, expiresAtMs: null, fork: null };
  const stream = newStreamState({ id: "s", name: "a", config, createdAtMs: 0, epoch: 1, opened: false });
  stream.phase = phase(kind);
  return stream;
}

describe("stream phases", () => {
  for (const from of KINDS) {
    for (const to of KINDS) {
      const legal = LEGAL.has(`${from}->${to}`);
      it(`${from} -> ${to} is ${legal ? "legal" : "refused"}`, () => {
        const stream = streamIn(from);
        if (legal) {
          moveTo(stream, phase(to));
          expect(stream.phase.kind).toBe(to);
        } else {
          expect(() => moveTo(stream, phase(to))).toThrow(/illegal phase move/);
          expect(stream.phase.kind).toBe(from);
        }
      });
    }
  }

  it("a new stream is held, or opened when this incarnation opened it; moved-away, removed and an evicted copy are gone", () => {
    const config: StreamConfig = { contentType: "text/plain", ttlSeconds: null, expiresAtMs: null, fork: null };
    const made = (opened: boolean): StreamState => newStreamState({ id: "s", name: "a", config, createdAtMs: 0, epoch: 1, opened });
    expect(made(false).phase.kind).toBe("held");
    expect(made(true).phase.kind).toBe("opened");
    expect(KINDS.filter((kind) => isGone(streamIn(kind)))).toEqual(["moved-away", "removed", "evicted"]);
  });
});
