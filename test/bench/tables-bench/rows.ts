// The tables benchmark's data: one primary-key table shape (an int id and a string payload, about 100 B
// of JSON per row), and the ids that land in a given bucket, found with the core's bucketOf as the server
// splits, so each writer sends 500-row batches that all belong to its bucket and every row is a new key.
import { bucketOf } from "../../../src/core/tables/bucketing.ts";
import { parseTableDefinition, type TableDefinition } from "../../../src/core/tables/definition.ts";

/** `{"id":1234567,"payload":"..."}` is 27 characters plus the payload: 73 make a row of about 100 B. */
const PAYLOAD_CHARS = 73;

export interface BenchRow {
  readonly id: number;
  readonly payload: string;
}

export function tableBody(buckets: number): { columns: { name: string; type: string }[]; primaryKey: string[]; buckets: number } {
  return { columns: [{ name: "id", type: "int" }, { name: "payload", type: "string" }], primaryKey: ["id"], buckets };
}

export function parsedDefinition(buckets: number): TableDefinition {
  const parsed = parseTableDefinition(tableBody(buckets));
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.value;
}

export function rowOf(id: number): BenchRow {
  const head = `row ${id} `;
  return { id, payload: head + "x".repeat(Math.max(0, PAYLOAD_CHARS - head.length)) };
}

/** The ids of one bucket in increasing order, handed out once each: every batch is of keys never written. */
export class BucketKeys {
  readonly handedOut: number[] = [];
  #next = 0;

  constructor(
    private readonly definition: TableDefinition,
    readonly bucket: number,
  ) {}

  take(count: number): number[] {
    const ids: number[] = [];
    while (ids.length < count) {
      const id = this.#next++;
      if (this.definition.buckets === 1 || bucketOf(this.definition, { id, payload: "" }) === this.bucket) ids.push(id);
    }
    this.handedOut.push(...ids);
    return ids;
  }

  /** `count` ids already handed out, picked by `random` (lookups of rows that exist). */
  sample(count: number, random: () => number): number[] {
    return Array.from({ length: count }, () => this.handedOut[Math.floor(random() * this.handedOut.length)]!);
  }
}

