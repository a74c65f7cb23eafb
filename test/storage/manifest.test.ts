// Manifests change only by compare-and-swap, and a writer whose epoch is below the recorded one can never
// change one, whatever the interleaving: the epochs of the writes that land never go down.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interceptStore, rejection, scheduledStore } from "../support/store-wrappers.ts";
import { MemoryStore } from "../../src/storage/memory-store.ts";
import type { ObjectStore } from "../../src/storage/object-store.ts";
import { manifestKey } from "../../src/storage/keys.ts";
import {
  InvalidManifestError,
  ManifestCorruptError,
  ManifestNotFoundError,
  StaleEpochError,
  decodeManifest,
  openManifest,
  readManifest,
  updateManifest,
  type Manifest,
} from "../../src/storage/manifest.ts";
import { propertyRuns } from "../support/property-runs.ts";

const S = "stream-1";
const addRange = (fromSeq: number) => (m: Manifest): Manifest =>
  m.walRanges.some((r) => r.fromSeq === fromSeq) ? m : { ...m, walRanges: [...m.walRanges, { nodeId: "n1", fromSeq, toSeq: fromSeq + 1 }] };


/** Scheduled store calls, and a log of the manifest writes that landed (their epochs, in store order). */
function manifestScheduledStore(s: fc.Scheduler, inner: ObjectStore, landedEpochs: number[]): ObjectStore {
  const recording: ObjectStore = {
    ...interceptStore(inner, (_op, _key, run) => run()),
    put: async (key, body, options) => {
      const result = await inner.put(key, body, options);
      landedEpochs.push(decodeManifest(body, key, S).epoch);
      return result;
    },
  };
  return scheduledStore(s, recording);
}

describe("manifest", () => {
  it("a stale epoch cannot update a manifest, and openManifest refuses an epoch not above the recorded one", async () => {
    const store = new MemoryStore();
    const opened = await openManifest(store, S, 1);
    expect(opened.previous).toBeNull();
    expect(opened.snapshot.manifest).toMatchObject({ streamId: S, epoch: 1, objects: [], walRanges: [], endOffset: 0, eof: false });
    await updateManifest(store, S, 1, addRange(0));
    const reopened = await openManifest(store, S, 2);
    expect(reopened.previous?.epoch).toBe(1);
    const before = (await store.get(manifestKey(S))).body;

    const stale = await rejection(updateManifest(store, S, 1, addRange(5)));
    expect(stale).toBeInstanceOf(StaleEpochError);
    expect((stale as StaleEpochError).currentEpoch).toBe(2);
    for (const epoch of [1, 2]) {
      const refused = await rejection(openManifest(store, S, epoch));
      expect(refused).toBeInstanceOf(StaleEpochError);
      expect((refused as StaleEpochError).currentEpoch).toBe(2);
    }
    expect((await store.get(manifestKey(S))).body).toEqual(before);
  });

  it("a stale epoch cannot update a manifest: the old owner read before the new owner's open and writes after it", async () => {
    const memory = new MemoryStore();
    await openManifest(memory, S, 1);
    // The old owner's store runs the new owner's whole open just before the old owner's write goes out.
    let openedBetween = false;
    const oldOwnerStore: ObjectStore = {
      get: (k, r) => memory.get(k, r),
      head: (k) => memory.head(k),
      list: (p, o) => memory.list(p, o),
      delete: (k) => memory.delete(k),
      put: async (k, b, o) => {
        if (!openedBetween) {
          openedBetween = true;
          await openManifest(memory, S, 2);
        }
        return memory.put(k, b, o);
      },
    };
    let mutateCalls = 0;
    const error = await rejection(
      updateManifest(oldOwnerStore, S, 1, (manifest) => {
        mutateCalls++;
        return addRange(9)(manifest);
      }),
    );
    expect(openedBetween).toBe(true);
    expect(error).toBeInstanceOf(StaleEpochError);
    expect((error as StaleEpochError).currentEpoch).toBe(2);
    expect(mutateCalls).toBe(1); // it read epoch 2 after losing the CAS and stopped, without mutating again
    const final = (await readManifest(memory, S))!.manifest;
    expect(final.epoch).toBe(2);
    expect(final.walRanges).toEqual([]);
  });

  it("a stale epoch cannot update a manifest, whatever the interleaving (property)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), fc.integer({ min: 1, max: 6 }), async (s, updates) => {
        const memory = new MemoryStore();
        await openManifest(memory, S, 1);
        const landed: number[] = [];
        const store = manifestScheduledStore(s, memory, landed);
        const succeeded: number[] = [];
        const failed: number[] = [];
        const oldOwner = Array.from({ length: updates }, async (_, i) => {
          await s.schedule(Promise.resolve(), `update ${i}`);
          try {
            await updateManifest(store, S, 1, addRange(i));
            succeeded.push(i);
          } catch (error) {
            expect(error).toBeInstanceOf(StaleEpochError);
            failed.push(i);
          }
        });
        const newOwner = (async () => {
          await s.schedule(Promise.resolve(), "open");
          return openManifest(store, S, 2);
        })();
        await s.waitFor(Promise.all([...oldOwner, newOwner]));
        // Writes that landed never go down in epoch: nothing at epoch 1 after the open.
        expect(landed).toEqual([...landed].sort((a, b) => a - b));
        expect(landed.filter((e) => e === 2)).toHaveLength(1);
        const final = (await readManifest(memory, S))!.manifest;
        expect(final.epoch).toBe(2);
        expect(final.walRanges.map((r) => r.fromSeq).sort()).toEqual([...succeeded].sort());
        expect(succeeded.length + failed.length).toBe(updates);
        // After the open, the old owner is fenced for good.
        await expect(updateManifest(memory, S, 1, addRange(99))).rejects.toBeInstanceOf(StaleEpochError);
      }),
      { numRuns: propertyRuns(200) },
    );
  });

  it("concurrent updates at the same epoch both land: a lost compare-and-swap re-reads and re-applies", async () => {
    const memory = new MemoryStore();
    await openManifest(memory, S, 1);
    let interleaved = false;
    const store: ObjectStore = {
      get: (k, r) => memory.get(k, r),
      head: (k) => memory.head(k),
      list: (p, o) => memory.list(p, o),
      delete: (k) => memory.delete(k),
      put: async (k, b, o) => {
        if (!interleaved) {
          interleaved = true;
          await updateManifest(memory, S, 1, addRange(2));
        }
        return memory.put(k, b, o);
      },
    };
    await updateManifest(store, S, 1, addRange(1));
    expect((await readManifest(memory, S))!.manifest.walRanges.map((r) => r.fromSeq)).toEqual([2, 1]);
  });

  it("a lost answer to a compare-and-swap is recognised by reading our bytes back: applied once", async () => {
    const store = new MemoryStore();
    await openManifest(store, S, 1);
    store.inject({ op: "put", keyPrefix: manifestKey(S), kind: "lost_answer" });
    let calls = 0;
    const snapshot = await updateManifest(store, S, 1, (m) => (calls++, { ...m, endOffset: m.endOffset + 10 }), {
      retry: { sleep: async () => {} },
    });
    expect(calls).toBe(1);
    expect(snapshot.manifest.endOffset).toBe(10);
    expect((await readManifest(store, S))!).toEqual(snapshot);
  });

  it("writes nothing for an unchanged manifest, and refuses illegal mutations", async () => {
    const store = new MemoryStore();
    await openManifest(store, S, 3, { startOffset: 100 });
    const puts = store.counts.put;
    await updateManifest(store, S, 3, (m) => m);
    expect(store.counts.put).toBe(puts);
    const illegal: ((m: Manifest) => Manifest)[] = [
      (m) => ({ ...m, epoch: 4 }),
      (m) => ({ ...m, streamId: "other" }),
      (m) => ({ ...m, startOffset: 0 }),
      (m) => ({ ...m, endOffset: 50 }),
      (m) => ({ ...m, objects: [{ key: "k", firstOffset: 101, endOffset: 120, bytes: 1 }], endOffset: 120 }),
      (m) => ({ ...m, closed: { atEpoch: 4, endOffset: 100 } }),
    ];
    for (const mutate of illegal) await expect(updateManifest(store, S, 3, mutate)).rejects.toBeInstanceOf(InvalidManifestError);
    expect(store.counts.put).toBe(puts);
    // A writer that never opened at its epoch may not write either.
    await expect(updateManifest(store, S, 4, addRange(1))).rejects.toBeInstanceOf(InvalidManifestError);
    await expect(updateManifest(store, "missing", 1, addRange(1))).rejects.toBeInstanceOf(ManifestNotFoundError);
  });

  it("open clears closed, keeps the data fields, and hands back the previous state", async () => {
    const store = new MemoryStore();
    await openManifest(store, S, 1);
    await updateManifest(store, S, 1, (m) => ({ ...m, endOffset: 42, eof: true, closed: { atEpoch: 1, endOffset: 42 } }));
    const { previous, snapshot } = await openManifest(store, S, 2);
    expect(previous?.closed).toEqual({ atEpoch: 1, endOffset: 42 });
    expect(snapshot.manifest).toEqual({ ...previous!, epoch: 2, closed: undefined });
    expect("closed" in snapshot.manifest).toBe(false);
  });

  it("a corrupt manifest is a typed error naming the key", async () => {
    const store = new MemoryStore();
    for (const body of ["{not json", '{"formatVersion":2}', '{"formatVersion":1,"streamId":"stream-1","epoch":-1}', "\xff"]) {
      await store.put(manifestKey(S), new TextEncoder().encode(body));
      const error = await rejection(readManifest(store, S));
      expect(error).toBeInstanceOf(ManifestCorruptError);
      expect((error as ManifestCorruptError).key).toBe(manifestKey(S));
    }
    const other = (await openManifest(new MemoryStore(), "other", 1)).snapshot.manifest;
    await store.put(manifestKey(S), new TextEncoder().encode(JSON.stringify({ formatVersion: 1, ...other })));
    await expect(readManifest(store, S)).rejects.toBeInstanceOf(ManifestCorruptError);
  });
});

describe("manifest validation: the same rules for what is read and what is written", () => {
  const key = manifestKey(S);
  const encode = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
  const valid = {
    formatVersion: 1,
    streamId: S,
    epoch: 2,
    startOffset: 0,
    objects: [{ key: "o1", firstOffset: 0, endOffset: 10, bytes: 5 }],
    walRanges: [{ nodeId: "n1", fromSeq: 0, toSeq: 2 }],
    endOffset: 12,
    closed: { atEpoch: 1, endOffset: 12 },
    eof: false,
    session: { producers: 1 },
  };
  // Every bound met with equality: zero counts, an empty object, an empty WAL range, closed at the epoch itself.
  const boundary = {
    formatVersion: 1,
    streamId: S,
    epoch: 0,
    startOffset: 5,
    objects: [{ key: "o1", firstOffset: 5, endOffset: 5, bytes: 0 }],
    walRanges: [{ nodeId: "n1", fromSeq: 3, toSeq: 3 }],
    endOffset: 5,
    closed: { atEpoch: 0, endOffset: 0 },
    eof: true,
  };

  it("a manifest that meets every rule, at its bounds too, decodes to its fields", () => {
    for (const manifest of [valid, boundary]) {
      const { formatVersion: _version, ...fields } = manifest;
      expect(decodeManifest(encode(manifest), key, S)).toEqual(fields);
    }
  });

  it("a manifest breaking one rule is refused, and the error names the rule", () => {
    const cases: [unknown, string][] = [
      [null, "not a manifest of format version 1"],
      [[], "not a manifest of format version 1"],
      [{ ...valid, extra: 1 }, "unknown field extra"],
      [{ ...valid, streamId: "" }, "streamId must be a non-empty string"],
      [{ ...valid, streamId: 7 }, "streamId must be a non-empty string"],
      [{ ...valid, epoch: -1 }, "epoch must be a safe non-negative integer"],
      [{ ...valid, epoch: 1.5 }, "epoch must be a safe non-negative integer"],
      [{ ...valid, epoch: "2" }, "epoch must be a safe non-negative integer"],
      [{ ...valid, epoch: 2 ** 53 }, "epoch must be a safe non-negative integer"],
      [{ ...valid, startOffset: -1 }, "start ≤ end"],
      [{ ...valid, endOffset: "12" }, "start ≤ end"],
      [{ ...valid, startOffset: 13, objects: [], walRanges: [] }, "start ≤ end"],
      [{ ...valid, eof: "false" }, "eof must be a boolean"],
      [{ ...valid, session: null }, "session must be an object"],
      [{ ...valid, session: [] }, "session must be an object"],
      [{ ...valid, session: "s" }, "session must be an object"],
      [{ ...valid, objects: {} }, "objects must be an array"],
      [{ ...valid, objects: [null] }, "an object entry is not an object"],
      [{ ...valid, objects: [7] }, "an object entry is not an object"],
      [{ ...valid, objects: [{ key: 1, firstOffset: 0, endOffset: 10, bytes: 5 }] }, "bad object entry"],
      [{ ...valid, objects: [{ key: "o1", firstOffset: -1, endOffset: 10, bytes: 5 }] }, "bad object entry"],
      [{ ...valid, objects: [{ key: "o1", firstOffset: 0, endOffset: 1.5, bytes: 5 }] }, "bad object entry"],
      [{ ...valid, objects: [{ key: "o1", firstOffset: 0, endOffset: 10, bytes: -5 }] }, "bad object entry"],
      [{ ...valid, startOffset: 4, objects: [{ key: "o1", firstOffset: 4, endOffset: 3, bytes: 5 }] }, "bad object entry"],
      [{ ...valid, objects: [{ key: "o1", firstOffset: 1, endOffset: 10, bytes: 5 }] }, "objects not contiguous from the start: one starts at 1, expected 0"],
      [
        { ...valid, objects: [{ key: "o1", firstOffset: 0, endOffset: 10, bytes: 5 }, { key: "o2", firstOffset: 11, endOffset: 12, bytes: 1 }] },
        "one starts at 11, expected 10",
      ],
      [{ ...valid, endOffset: 9, closed: undefined }, "endOffset 9 below the last object's end 10"],
      [{ ...valid, walRanges: {} }, "walRanges must be an array"],
      [{ ...valid, walRanges: [null] }, "a WAL range is not an object"],
      [{ ...valid, walRanges: ["r"] }, "a WAL range is not an object"],
      [{ ...valid, walRanges: [{ nodeId: 1, fromSeq: 0, toSeq: 2 }] }, "bad WAL range"],
      [{ ...valid, walRanges: [{ nodeId: "n1", fromSeq: -1, toSeq: 2 }] }, "bad WAL range"],
      [{ ...valid, walRanges: [{ nodeId: "n1", fromSeq: 0, toSeq: 0.5 }] }, "bad WAL range"],
      [{ ...valid, walRanges: [{ nodeId: "n1", fromSeq: 3, toSeq: 2 }] }, "bad WAL range"],
      [{ ...valid, closed: null }, "closed must be an object"],
      [{ ...valid, closed: 1 }, "closed must be an object"],
      [{ ...valid, closed: { atEpoch: 3, endOffset: 12 } }, "bad closed"],
      [{ ...valid, closed: { atEpoch: -1, endOffset: 12 } }, "bad closed"],
      [{ ...valid, closed: { atEpoch: 1, endOffset: "12" } }, "bad closed"],
      [{ ...valid, streamId: "other" }, "names stream other"],
    ];
    for (const [manifest, rule] of cases) {
      const error = (() => {
        try {
          decodeManifest(encode(manifest), key, S);
        } catch (caught) {
          return caught;
        }
        return undefined;
      })();
      expect(error, JSON.stringify(manifest)).toBeInstanceOf(ManifestCorruptError);
      expect((error as ManifestCorruptError).message, JSON.stringify(manifest)).toContain(rule);
    }
  });

  it("a manifest that breaks a rule is never written: updateManifest refuses it with the rule", async () => {
    const store = new MemoryStore();
    await openManifest(store, S, 1);
    const puts = store.counts.put;
    const error = await rejection(updateManifest(store, S, 1, (m) => ({ ...m, walRanges: [{ nodeId: "n1", fromSeq: 2, toSeq: 1 }] })));
    expect(error).toBeInstanceOf(InvalidManifestError);
    expect((error as Error).message).toBe(`manifest of ${S}: bad WAL range {"nodeId":"n1","fromSeq":2,"toSeq":1}`);
    expect(store.counts.put).toBe(puts);
  });
});
