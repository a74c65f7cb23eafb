// Records and labels the WAL chain tests share: record i of a batch carries "i.j" on stream s(i mod 3).
import type { WalRecord } from "../../src/storage/record-codec.ts";

const decoder = new TextDecoder();

/** "stream:text" of a record, to compare what replay returns with what was appended. */
export const walLabel = (r: WalRecord): string => `${r.streamId}:${decoder.decode(r.data)}`;

/** `count` records of batch `i`. */
export function walBatch(i: number, count: number): WalRecord[] {
  return Array.from({ length: count }, (_, j) => ({
    streamId: `s${i % 3}`,
    streamEpoch: 1,
    firstOffset: i * 100 + j,
    flags: 0,
    meta: new Uint8Array([i & 0xff]),
    data: new TextEncoder().encode(`${i}.${j}`),
  }));
}
