// The MetaLog's stream rows in SQLite (durable-objects/meta-stream-rows.ts), in the database of a MetaLog
// Durable Object (vitest pool): the stream-table contract over them, a log kept the old way (a snapshot of
// the whole state and entries after it) moved into the rows at its next start, and a restart that reads
// no stream record until one is asked for.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { MetaStreamRows } from "../../durable-objects/meta-stream-rows.ts";
import { MetaLogStore } from "../../durable-objects/meta-log-store.ts";
import type { MetaLog } from "../../durable-objects/meta-log.ts";
import { apply, emptyState, encodeSnapshot, type Command, type LogEntry, type MetaState } from "../../src/core/meta/index.ts";
import type { Env } from "../../src/env.ts";
import { openMetaLog } from "../../src/metadata/meta-log-persistence.ts";
import { metaLogTuning } from "../../src/metadata/meta-log-tuning.ts";
import { StoredStreamTable } from "../../src/metadata/stored-stream-table.ts";
import { DEFAULT_EDGE_LIMITS } from "../../src/core/edge-limits.ts";
import { streamTableContract } from "../contract/stream-table.contract.ts";

const metaLogs = (env as unknown as Env).META_LOG;

function stubOf(id: DurableObjectId): DurableObjectStub<MetaLog> {
  return metaLogs.get(id) as DurableObjectStub<MetaLog>;
}

streamTableContract("stored, over the MetaLog's SQLite rows", async (body) => {
  await runInDurableObject(stubOf(metaLogs.newUniqueId()), (_instance, state) => {
    const rows = new MetaStreamRows(state.storage.sql);
    rows.migrate();
    body({
      empty: () => {
        state.storage.sql.exec("DELETE FROM meta_stream");
        return new StoredStreamTable(rows, 0);
      },
      settle: (table) => (table as StoredStreamTable).persist(),
    });
  });
});

const COMMANDS: Command[] = [
  { type: "RegisterNode", nodeId: "n1", nodeEpoch: 1, addr: "https://mink.test/n/n1", slots: 1 },
  { type: "RegisterNode", nodeId: "n2", nodeEpoch: 1, addr: "https://mink.test/n/n2", slots: 1 },
  { type: "CreateStream", name: "kept/a", config: { contentType: "text/plain" } },
  { type: "CreateStream", name: "kept/b", config: {} },
  { type: "PlaceStream", streamId: "s1" },
  { type: "OpenStream", streamId: "s1", nodeId: "n1", nodeEpoch: 1 },
  { type: "CreateStream", name: "after/snapshot", config: {} },
  { type: "DeleteStream", streamId: "s2" },
  { type: "BeginTransfer", streamId: "s1", target: "n2" },
];

/** The state after `commands`, and their entries. */
function run(commands: readonly Command[]): { state: MetaState; entries: LogEntry[] } {
  let state = emptyState();
  const entries: LogEntry[] = [];
  for (const command of commands) {
    const applied = apply(state, command, { nowMs: 1 });
    if (applied.result.ok && applied.result.changed) entries.push({ index: applied.state.version, command, nowMs: 1 });
    state = applied.state;
  }
  return { state, entries };
}

it("a log kept the old way (a whole snapshot, then entries) is read once and moved into the rows, with every record", async () => {
  await runInDurableObject(stubOf(metaLogs.newUniqueId()), (_instance, state) => {
    const store = new MetaLogStore(state.storage.sql);
    store.migrate();
    // The MetaLog of this object wrote its (empty) head at its start: take it away, as before the rows.
    state.storage.sql.exec("DELETE FROM meta_head");
    const { state: atSnapshot, entries: before } = run(COMMANDS.slice(0, 6));
    store.writeSnapshot(atSnapshot.version, encodeSnapshot(atSnapshot));
    const { state: expected, entries } = run(COMMANDS);
    for (const entry of entries.slice(before.length)) store.append(entry, {});

    const log = openMetaLog(store, metaLogTuning(DEFAULT_EDGE_LIMITS, 10_000), () => 1);
    expect(log.view()).toEqual(expect.objectContaining({ version: expected.version }));
    expect(log.lookupStream({ name: "kept/a" }).stream).toEqual({ ...expected.streams.get("s1"), transfer: { source: "n1", target: "n2" } });
    expect(log.lookupStream({ name: "kept/b" }).stream).toBeNull();
    expect(log.lookupStream({ name: "after/snapshot" }).stream?.id).toBe("s3");
    expect(store.readHead()).toMatchObject({ version: expected.version, streams: 2, nextStreamSeq: 4 });
    expect([...store.streamRows.namesFrom("")]).toEqual(["after/snapshot", "kept/a"]);

    // The next start reads the head: the same state, and the next id goes on from it.
    const again = openMetaLog(store, metaLogTuning(DEFAULT_EDGE_LIMITS, 10_000), () => 2);
    expect(again.view()).toEqual(log.view());
    const created = again.propose({ type: "CreateStream", name: "next", config: {} });
    expect(created).toMatchObject({ ok: true, changed: true, value: { stream: { id: "s4" } } });
  });
});
