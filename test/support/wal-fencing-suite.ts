// The WAL's fencing guarantees checked against a real S3 API (the embedded endpoint, radosgw): the same
// rules the fast-check schedules prove against the in-memory store, here with real network timing,
// real conditional PUTs and real listing.
import { describe, expect, it } from "vitest";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import type { WalRecord } from "../../src/storage/record-codec.ts";
import { readChain } from "../../src/storage/wal-chain.ts";
import { WAL_IN_FLIGHT_CAP } from "../../src/storage/wal-format.ts";
import { sealChain } from "../../src/storage/wal-seal.ts";
import { WalWriter } from "../../src/storage/wal-writer.ts";
import { WalFencedError } from "../../src/storage/wal-writer-bounds.ts";

const record = (i: number): WalRecord => ({
  streamId: `s${i % 3}`,
  streamEpoch: 1,
  firstOffset: i,
  flags: 0,
  meta: new Uint8Array(0),
  data: new TextEncoder().encode(`append-${i}`),
});

/**
 * How many appends the burst keeps unanswered: after each append it waits until the writer has answered
 * the one made this many appends earlier. So the burst is paced by the writer's own WAL PUTs (a backlog
 * queues behind the PUT in flight) rather than by a clock: it spans many PUTs, the seal races them, and the
 * loop sees the writer fenced soon after, on a fast store and a slow one alike.
 */
const UNANSWERED = 32;

export function walFencingSuite(storeName: string, makeStore: () => ObjectStore): void {
  describe(`WAL fencing on ${storeName}`, () => {
    it("a fenced old writer can never acknowledge after the seal, and replay yields exactly the acknowledged records", { timeout: 60_000 }, async () => {
      const store = makeStore();
      const nodeId = `fence-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
      const old = new WalWriter(store, nodeId, 1, 0);
      const acked: { i: number; seq: number }[] = [];
      const rejected: unknown[] = [];
      const appends: Promise<void>[] = [];
      let seal: Promise<{ sealSeq: number }> | undefined;
      // Appends keep coming while the seal races them; once the seal lands, the next WAL PUT collides
      // with it and the writer is fenced. Bounded: the loop stops at 2,000 appends whatever happens.
      for (let i = 0; i < 2_000 && old.state === "open"; i++) {
        appends.push(old.append([record(i)]).then(({ seq }) => void acked.push({ i, seq }), (e: unknown) => void rejected.push(e)));
        if (i === 40) seal = sealChain(store, { nodeId, fromSeq: 0, sealedBy: "takeover", sealEpoch: 2 });
        if (i >= UNANSWERED) await appends[i - UNANSWERED];
      }
      const { sealSeq } = await seal!;
      await Promise.all(appends);

      // Whether the seal landed mid-burst or after it, once it has landed the old writer is done.
      await expect(old.append([record(999)])).rejects.toBeInstanceOf(WalFencedError);
      expect(old.state).toBe("fenced");
      expect(acked.length).toBeGreaterThan(0);
      expect(rejected.every((e) => e instanceof WalFencedError)).toBe(true);
      expect(acked.every(({ seq }) => seq < sealSeq)).toBe(true);

      const replayed = (await readChain(store, { nodeId, fromSeq: 0, toSeq: sealSeq })).flatMap((o) => o.records);
      const ackedInOrder = [...acked].sort((a, b) => a.seq - b.seq || a.i - b.i).map(({ i }) => `append-${i}`);
      expect(replayed.map((r) => new TextDecoder().decode(r.data))).toEqual(ackedInOrder);

      // The next incarnation continues the chain above the seal, and a later seal replays across both.
      const next = new WalWriter(store, nodeId, 2, sealSeq + 1);
      const { seq } = await next.append([record(1000)]);
      const second = await sealChain(store, { nodeId, fromSeq: 0, sealedBy: nodeId, sealEpoch: 3 });
      // The seal claims WAL_IN_FLIGHT_CAP seqs from the lowest missing one, seq + 1, and its top one is the seal.
      expect(second.sealSeq).toBe(seq + WAL_IN_FLIGHT_CAP);
      const all = (await readChain(store, { nodeId, fromSeq: 0, toSeq: second.sealSeq })).flatMap((o) => o.records);
      expect(all.map((r) => new TextDecoder().decode(r.data))).toEqual([...ackedInOrder, "append-1000"]);
    });
  });
}
