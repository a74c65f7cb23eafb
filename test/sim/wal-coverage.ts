// What a run did to the WAL chains with several objects in flight (storage/wal-seal.ts, table WS), counted
// from the writes that landed: objects of one writer landing out of seq order, seals placed below data that
// had already landed (a hole sealed), and a fenced writer's objects landing above the seal that fenced it
// (garbage, which replay passes over). A change that stops the simulation from making holes shows here.
import { parseWalKey } from "../../src/storage/keys.ts";
import { decodeWalObject } from "../../src/storage/wal-format.ts";
import type { History } from "./history.ts";

interface Landed {
  readonly seq: number;
  readonly epoch: number;
  readonly step: number;
  readonly seal: boolean;
}

export function walCoverage(history: History, add: (key: string, n?: number) => void): void {
  const chains = new Map<string, Landed[]>();
  for (const write of history.writes) {
    if (!write.key.startsWith("wal/")) continue;
    const { nodeId, seq } = parseWalKey(write.key);
    const object = decodeWalObject(write.body, write.key);
    const landed = { seq, step: write.step, seal: object.kind === "seal", epoch: object.kind === "seal" ? object.sealEpoch : object.nodeEpoch };
    chains.set(nodeId, [...(chains.get(nodeId) ?? []), landed]);
  }
  for (const objects of chains.values()) {
    const data = objects.filter((o) => !o.seal);
    const seals = objects.filter((o) => o.seal);
    // A writer's object that landed after one of its objects above it.
    add("wal landed out of order", data.filter((o) => data.some((above) => above.epoch === o.epoch && above.seq > o.seq && above.step < o.step)).length);
    // A seal that landed below an older writer's object already there: the hole it fenced.
    add("wal hole sealed", seals.filter((s) => data.some((d) => d.epoch < s.epoch && d.seq > s.seq && d.step < s.step)).length);
    // An older writer's object above a seal of a higher epoch: garbage.
    add("wal garbage landed", data.filter((d) => seals.some((s) => s.epoch > d.epoch && s.seq < d.seq)).length);
  }
}
