// MAX_META_BYTES in MetaLogService (table AD, rows AD4 and AD5): the running count of stream names,
// configurations and table definitions follows creates and deletes, a create that would pass the bound is
// refused with limit_reached and journals nothing, and a service built over the same state (a restart)
// counts the same bytes.
import { describe, expect, it } from "vitest";
import { emptyState, metaBytesOf, type LogEntry, type MetaState } from "../../src/core/meta/index.ts";
import { MetaLogService } from "../../src/metadata/meta-log-service.ts";

function service(maxMetaBytes: number): { log: MetaLogService; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const journal = {
    append: (entry: LogEntry, _touched: unknown, next: MetaState): MetaState => {
      entries.push(entry);
      return next;
    },
    touchedBetween: (): null => null,
  };
  const log = new MetaLogService(emptyState(), journal, { now: () => 1, admission: { maxStreams: 100, maxMetaBytes } });
  log.propose({ type: "RegisterNode", nodeId: "n1", nodeEpoch: 1, addr: "http://mink.test/n/n1" });
  return { log, entries };
}

const CONFIG = { contentType: "text/plain" }; // 28 bytes of JSON

describe("MAX_META_BYTES: the metadata log's bytes of names and configurations", () => {
  it("AD4: a create that would pass MAX_META_BYTES is limit_reached and journals nothing; a delete frees its bytes", () => {
    const { log, entries } = service(100);
    expect(log.propose({ type: "CreateStream", name: "a".repeat(22), config: CONFIG }).ok).toBe(true); // 50 bytes
    expect(log.metaBytesHeld).toBe(50);
    const journaled = entries.length;
    const refused = log.propose({ type: "CreateStream", name: "b".repeat(23), config: CONFIG }); // 51 more: 101
    expect(refused).toMatchObject({ ok: false, error: { code: "limit_reached", details: { limit: "MAX_META_BYTES", max: 100 } } });
    expect(entries.length).toBe(journaled);
    expect(log.lookupStream({ name: "b".repeat(23) }).stream).toBeNull();
    expect(log.propose({ type: "CreateStream", name: "c".repeat(22), config: CONFIG }).ok).toBe(true); // exactly 100
    const id = log.lookupStream({ name: "a".repeat(22) }).stream?.id ?? "";
    expect(log.propose({ type: "DeleteStream", streamId: id }).ok).toBe(true);
    expect(log.metaBytesHeld).toBe(50);
    expect(log.propose({ type: "CreateStream", name: "b".repeat(23), config: CONFIG }).ok).toBe(false); // 101
    expect(log.propose({ type: "CreateStream", name: "b".repeat(22), config: CONFIG }).ok).toBe(true);
  });

  it("names count in UTF-8 bytes: a name of 2-byte characters costs twice its length", () => {
    const { log } = service(1_000);
    expect(log.propose({ type: "CreateStream", name: "é".repeat(10), config: CONFIG }).ok).toBe(true);
    expect(log.metaBytesHeld).toBe(20 + 28);
  });

  it("AD5: changes that are not creates are taken over the bound (a lowered bound never blocks placing or deleting)", () => {
    const { log: before } = service(1_000);
    expect(before.propose({ type: "CreateStream", name: "x", config: CONFIG }).ok).toBe(true);
    // The same state under a bound lowered below what it holds.
    const log = new MetaLogService(before.state, { append: (_entry, _touched, next) => next, touchedBetween: () => null }, { now: () => 1, admission: { maxStreams: 100, maxMetaBytes: 1 } });
    const id = log.lookupStream({ name: "x" }).stream?.id ?? "";
    expect(log.propose({ type: "PlaceStream", streamId: id }).ok).toBe(true);
    expect(log.propose({ type: "DeleteStream", streamId: id }).ok).toBe(true);
    expect(log.metaBytesHeld).toBe(0);
  });

  it("a restart counts the bytes of the state it loads: the running count equals a fresh count", () => {
    const { log } = service(10_000);
    for (let i = 0; i < 20; i++) log.propose({ type: "CreateStream", name: `s/${i}`, config: { contentType: `text/plain;v=${i}` } });
    const id = log.lookupStream({ name: "s/3" }).stream?.id ?? "";
    log.propose({ type: "DeleteStream", streamId: id });
    expect(log.metaBytesHeld).toBe(metaBytesOf(log.state));
    const restarted = new MetaLogService(log.state, { append: (_entry, _touched, next) => next, touchedBetween: () => null }, { now: () => 1 });
    expect(restarted.metaBytesHeld).toBe(log.metaBytesHeld);
  });
});
