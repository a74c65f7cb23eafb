// How the simulation tells which guard refused something (guards.ts), on answers shaped as the rule tables
// give them (transfer-rules.ts CT5, node-rules.ts P3 and RN2, failover-rules.ts C2) and on WAL objects as the
// writer and the sealer encode them. `npm run sim` then shows every guard firing on the real answers.
import { describe, expect, it } from "vitest";
import { encodeWalObject } from "../../src/storage/wal-format.ts";
import { metaGuard, storeGuard } from "./guards.ts";

const refused = (code: string, details: Record<string, unknown>): unknown => ({ ok: false, error: { code, message: "refused", details } });

describe("metaGuard", () => {
  it("tells a stale completion (CT5) from a stale proposer (P3)", () => {
    const label = 'propose CompleteTransfer streamId="s1" closedEpoch=2 by=n1@3';
    expect(metaGuard(label, refused("stale_epoch", { streamId: "s1", currentEpoch: 3 }))).toBe("stale completion");
    expect(metaGuard(label, refused("stale_epoch", { nodeId: "n1", currentEpoch: 9 }))).toBe("stale proposer");
    expect(metaGuard(label, { ok: true, value: {} })).toBeNull();
  });

  it("names a stale registration and a stale heartbeat", () => {
    expect(metaGuard('propose RegisterNode nodeId="n1" nodeEpoch=4', refused("stale_epoch", { nodeId: "n1", currentEpoch: 5 }))).toBe("stale registration");
    expect(metaGuard("heartbeat", refused("stale_epoch", { nodeId: "n1", currentEpoch: 5 }))).toBe("stale heartbeat");
  });

  it("tells a coordinator fenced by its own newer lease (the coordinator epoch alone) from one fenced by another holder", () => {
    const coordinator = { nodeId: "n2", nodeEpoch: 7, coordinatorEpoch: 3 };
    expect(metaGuard("coordinatorTick", refused("fenced", { holder: "n2", coordinatorEpoch: 4 }), coordinator)).toBe("stale coordinator epoch");
    expect(metaGuard("coordinatorTick", refused("fenced", { holder: "n1", coordinatorEpoch: 4 }), coordinator)).toBe("fenced coordinator");
  });

  it("sees a superseded incarnation's duties", () => {
    expect(metaGuard("watchDuties since 4", { version: 5, transfers: [], handedTo: [], superseded: true })).toBe("superseded duties");
  });
});

describe("storeGuard", () => {
  const data = encodeWalObject({
    kind: "records",
    nodeId: "n1",
    nodeEpoch: 5,
    seq: 7,
    records: [{ streamId: "s1", streamEpoch: 1, firstOffset: 0, flags: 0, meta: new Uint8Array(0), data: new TextEncoder().encode("x") }],
  });
  const seal = (sealedBy: string): Uint8Array => encodeWalObject({ kind: "seal", nodeId: "n1", seq: 7, sealedBy, sealEpoch: 6 });

  it("names who sealed the seq a data PUT lost", () => {
    expect(storeGuard("wal/n1/00000000000000000007", data, seal("n2"))).toBe("sealed writer (takeover)");
    expect(storeGuard("wal/n1/00000000000000000007", data, seal("n1"))).toBe("sealed writer (restart)");
  });

  it("counts nothing for a seal that lost to a writer, or a key outside the WAL", () => {
    expect(storeGuard("wal/n1/00000000000000000007", seal("n2"), data)).toBeNull();
    expect(storeGuard("streams/s1/manifest", data, data)).toBeNull();
  });

  it("names a tiered version PUT refused because a newer coordinator epoch wrote that version first; not one lost to its own epoch", () => {
    const version = (epoch: number): Uint8Array => new TextEncoder().encode(JSON.stringify({ properties: { "mink.coordinator-epoch": String(epoch) } }));
    expect(storeGuard("tiered/simt/metadata/v3.metadata.json", version(2), version(3))).toBe("stale tiered commit");
    expect(storeGuard("tiered/simt/metadata/v3.metadata.json", version(3), version(3))).toBeNull();
    expect(storeGuard("tiered/simt/metadata/version-hint.text", version(2), version(3))).toBeNull();
  });
});
