// Stream rows kept in a plain Map, for running the stored stream table (src/metadata/stored-stream-table.ts)
// in the node test tier; the MetaLog's SQLite rows (durable-objects/meta-stream-rows.ts) pass the same
// contract in the workers project.
import { forkSourceOf, type StreamRecord } from "../../src/core/meta/index.ts";
import type { StreamRows } from "../../src/metadata/stored-stream-table.ts";

export class MemoryStreamRows implements StreamRows {
  private readonly records = new Map<string, StreamRecord>();

  get(id: string): StreamRecord | undefined {
    return this.records.get(id);
  }

  idByName(name: string): string | undefined {
    for (const record of this.records.values()) if (record.name === name) return record.id;
    return undefined;
  }

  all(): Iterable<StreamRecord> {
    return [...this.records.values()];
  }

  ownedBy(nodeId: string): Iterable<StreamRecord> {
    return [...this.records.values()].filter((record) => record.owner === nodeId);
  }

  forksOf(sourceId: string): Iterable<string> {
    return [...this.records.values()].filter((record) => forkSourceOf(record.config) === sourceId).map((record) => record.id);
  }

  namesFrom(from: string): Iterable<string> {
    return [...this.records.values()]
      .map((record) => record.name)
      .filter((name) => name >= from)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  put(record: StreamRecord): void {
    const holder = this.idByName(record.name);
    if (holder !== undefined && holder !== record.id) throw new Error(`name ${record.name} is taken by ${holder}`);
    this.records.set(record.id, record);
  }

  remove(id: string): void {
    this.records.delete(id);
  }
}
