// Compaction: acknowledged WAL records of one stream become one stream object, and the manifest takes it in
// one compare-and-swap. Gaps and overlaps are refused (never merged), a stale owner writes nothing, and a
// repeated compaction changes nothing.
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import { streamObjectKey } from "../../src/storage/keys.ts";
import { StaleEpochError, openManifest, readManifest, updateManifest } from "../../src/storage/manifest.ts";
import { RECORD_FLAG_EOF, type WalRecord } from "../../src/storage/record-codec.ts";
import { NonContiguousRecordsError, readStreamObject } from "../../src/storage/stream-object.ts";
import { readChain } from "../../src/storage/wal-chain.ts";
import { sealChain } from "../../src/storage/wal-seal.ts";
import { WalWriter } from "../../src/storage/wal-writer.ts";
import { compactStream } from "../../src/storage/compaction.ts";

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

function rec(streamId: string, firstOffset: number, data: string, flags = 0, streamEpoch = 1): WalRecord {
  return { streamId, streamEpoch, firstOffset, flags, meta: text(`p${firstOffset}`), data: text(data) };
}

describe("compaction", () => {
  it("turns one stream's records from several WAL objects into one stream object and updates the manifest", async () => {
    const store = new MemoryStore();
    await openManifest(store, "a", 1);
    await updateManifest(store, "a", 1, (m) => ({ ...m, walRanges: [{ nodeId: "n1", fromSeq: 0, toSeq: 10 }, { nodeId: "n0", fromSeq: 3, toSeq: 4 }] }));
    const writer = new WalWriter(store, "n1", 1, 0);
    await writer.append([rec("a", 0, "hello "), rec("b", 0, "other")]);
    await writer.append([rec("a", 6, "world")]);
    await writer.append([rec("a", 11, "!", RECORD_FLAG_EOF)]);
    const { sealSeq } = await sealChain(store, { nodeId: "n1", fromSeq: 0, sealedBy: "n1", sealEpoch: 2 });
    const records = (await readChain(store, { nodeId: "n1", fromSeq: 0, toSeq: sealSeq })).flatMap((o) => o.records).filter((r) => r.streamId === "a");

    const { object, snapshot } = await compactStream(store, { streamId: "a", writerEpoch: 1, records, walCovered: [{ nodeId: "n1", toSeq: 3 }] });
    expect(object).toMatchObject({ key: streamObjectKey("a", 0, 12), firstOffset: 0, endOffset: 12 });
    expect(snapshot.manifest).toMatchObject({
      objects: [object],
      walRanges: [{ nodeId: "n1", fromSeq: 3, toSeq: 10 }, { nodeId: "n0", fromSeq: 3, toSeq: 4 }],
      endOffset: 12,
      eof: true,
    });
    expect(await readManifest(store, "a")).toEqual(snapshot);
    const stored = await readStreamObject(store, object.key);
    expect(stored.records.map((r) => new TextDecoder().decode(r.data)).join("")).toBe("hello world!");
  });

  it("continues where the last stream object ends, drops WAL ranges it covers, and is idempotent", async () => {
    const store = new MemoryStore();
    await openManifest(store, "a", 2, { startOffset: 100 });
    await updateManifest(store, "a", 2, (m) => ({ ...m, walRanges: [{ nodeId: "n1", fromSeq: 5, toSeq: 8 }] }));
    const first = [rec("a", 100, "abc"), rec("a", 103, "de", 0, 2)];
    await compactStream(store, { streamId: "a", writerEpoch: 2, records: first });
    const second = [rec("a", 105, "fgh", 0, 2)];
    const input = { streamId: "a", writerEpoch: 2, records: second, walCovered: [{ nodeId: "n1", toSeq: 8 }] };
    const { snapshot } = await compactStream(store, input);
    expect(snapshot.manifest.objects.map((o) => [o.firstOffset, o.endOffset])).toEqual([[100, 105], [105, 108]]);
    expect(snapshot.manifest.walRanges).toEqual([]);
    expect(snapshot.manifest.endOffset).toBe(108);

    const puts = store.counts.put;
    const again = await compactStream(store, input);
    expect(again.snapshot).toEqual(snapshot);
    expect(store.counts.put).toBe(puts + 1); // the object's create answered 412 (identical bytes); no manifest write
  });

  it("refuses gaps and overlaps, within the records or against the manifest, writing nothing", async () => {
    const store = new MemoryStore();
    await openManifest(store, "a", 1);
    await compactStream(store, { streamId: "a", writerEpoch: 1, records: [rec("a", 0, "abcd")] });
    const keys = store.keys();
    const bad: WalRecord[][] = [
      [rec("a", 4, "ef"), rec("a", 7, "g")], // gap inside
      [rec("a", 4, "ef"), rec("a", 5, "g")], // overlap inside
      [rec("a", 5, "ef")], // gap after the last object
      [rec("a", 3, "ef")], // overlap with the last object
      [rec("a", 0, "abcdef")], // overlap: recompacting a different range
      [rec("b", 4, "ef")], // another stream
      [rec("a", 4, "ef", 0, 2)], // an epoch above the writer's
      [],
    ];
    for (const records of bad) {
      await expect(compactStream(store, { streamId: "a", writerEpoch: 1, records })).rejects.toBeInstanceOf(NonContiguousRecordsError);
    }
    expect(store.keys()).toEqual(keys);
  });

  it("a stale owner compacts nothing", async () => {
    const store = new MemoryStore();
    await openManifest(store, "a", 1);
    await openManifest(store, "a", 2);
    const keys = store.keys();
    await expect(compactStream(store, { streamId: "a", writerEpoch: 1, records: [rec("a", 0, "x")] })).rejects.toBeInstanceOf(StaleEpochError);
    expect(store.keys()).toEqual(keys);
  });
});
