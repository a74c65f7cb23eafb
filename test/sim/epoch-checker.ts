// Invariant 5 (docs/architecture.md, "Invariants"): node epochs never decrease, and no stale epoch is
// accepted, by the metadata log (every entry's proposer is the registered incarnation) or by the store
// (every WAL object and stream object lands at an epoch its chain or manifest had not superseded). And the
// notice of a superseded incarnation writing the manifest of a stream its successor opened.
import type { Command } from "../../src/core/meta/index.ts";
import { decodeManifest } from "../../src/storage/manifest.ts";
import { decodeStreamObject } from "../../src/storage/stream-object.ts";
import { WAL_IN_FLIGHT_CAP, decodeWalObject } from "../../src/storage/wal-format.ts";
import { parseWalKey } from "../../src/storage/keys.ts";
import { incarnationLabel, type History } from "./history.ts";
import { describeOwnership, INVARIANT, type Violation } from "./violations.ts";

const STREAM_OBJECT = /^streams\/[^/]+\/\d{20}-\d{20}$/;

/** The proposer a command carries (node id and epoch), if any. */
function proposerOf(command: Command): { nodeId: string; nodeEpoch: number } | null {
  switch (command.type) {
    case "OpenStream":
    case "CloseStream":
    case "AcquireLease":
    case "RenewLease":
      return { nodeId: command.nodeId, nodeEpoch: command.nodeEpoch };
    case "RegisterNode":
      return null;
    case "ClaimStream":
      return command.by;
    case "SetSlots":
    case "SetDraining":
    case "CreateStream":
    case "DeleteStream":
    case "PlaceStream":
    case "BeginTransfer":
    case "CompleteTransfer":
      return command.by ?? null;
    case "DropTable":
      return command.by ?? null;
    case "DeclareDead":
    case "ReassignStreams":
    case "CreateTable":
    case "AddPartition":
    case "RecordTiering":
      return command.coordinator;
    case "CommitBucketSnapshot":
      return command.by;
    case "ClaimTakeover":
    case "CompleteTakeover":
      return command.by;
  }
}

/** 5: registrations only move epochs up; no accepted entry or landed object carries a superseded epoch. */
export function checkEpochs(history: History, out: Violation[]): void {
  for (const { entry, before, step } of history.journal) {
    const command = entry.command;
    if (command.type === "RegisterNode") {
      const known = before.nodes.get(command.nodeId);
      if (known !== undefined && command.nodeEpoch <= known.epoch) {
        out.push({ invariant: INVARIANT.epochs, message: `log #${entry.index} (step ${step}) registered ${command.nodeId} at ${command.nodeEpoch}, not above ${known.epoch}`, focus: [command.nodeId], step });
      }
      continue;
    }
    const proposer = proposerOf(command);
    if (proposer === null) continue;
    const current = before.nodes.get(proposer.nodeId)?.epoch;
    const label = incarnationLabel({ nodeId: proposer.nodeId, epoch: proposer.nodeEpoch });
    if (current !== proposer.nodeEpoch) {
      out.push({
        invariant: INVARIANT.epochs,
        message: `log #${entry.index} (step ${step}) accepted ${command.type} from ${label} while ${proposer.nodeId} was registered at ${current === undefined ? "nothing" : incarnationLabel({ nodeId: proposer.nodeId, epoch: current })}`,
        focus: [label],
        step,
      });
    }
  }
  checkWalWrites(history, out);
  checkManifestWrites(history, out);
}

function checkWalWrites(history: History, out: Violation[]): void {
  const seen = new Map<string, number>();
  // A seal may land on a seq the old writer's clean-up freed (storage/wal-chain.ts): that key is written again.
  const freedAt = new Map<string, number[]>();
  for (const { key, step } of history.deletes) if (key.startsWith("wal/")) freedAt.set(key, [...(freedAt.get(key) ?? []), step]);
  const freedBetween = (key: string, from: number, to: number): boolean => (freedAt.get(key) ?? []).some((step) => step >= from && step <= to);
  const chains = new Map<string, { seals: { seq: number; epoch: number; step: number }[]; data: { seq: number; epoch: number; step: number; key: string }[] }>();
  for (const write of history.writes) {
    if (!write.key.startsWith("wal/")) continue;
    const earlier = seen.get(write.key);
    const resealed = earlier !== undefined && freedBetween(write.key, earlier, write.step) && decodeWalObject(write.body, write.key).kind === "seal";
    if (earlier !== undefined && !resealed) {
      out.push({ invariant: INVARIANT.epochs, message: `${write.key} was written twice (steps ${earlier} and ${write.step}): a create-only write was not conditional`, focus: [write.key], step: write.step });
    }
    seen.set(write.key, write.step);
    const { nodeId, seq } = parseWalKey(write.key);
    const object = decodeWalObject(write.body, write.key);
    let chain = chains.get(nodeId);
    if (chain === undefined) chains.set(nodeId, (chain = { seals: [], data: [] }));
    if (object.kind === "seal") chain.seals.push({ seq, epoch: object.sealEpoch, step: write.step });
    else chain.data.push({ seq, epoch: object.nodeEpoch, step: write.step, key: write.key });
  }
  for (const [nodeId, chain] of chains) {
    for (const data of chain.data) {
      // A writer's objects above the seal that fenced it are garbage (never acknowledged: invariant 1 checks
      // that), and only within its reach: it never issues WAL_IN_FLIGHT_CAP seqs above its lowest
      // unacknowledged one (storage/wal-seal.ts, table WS3).
      const fence = chain.seals.filter((seal) => seal.seq < data.seq && seal.epoch > data.epoch).sort((a, b) => a.seq - b.seq)[0];
      if (fence !== undefined && data.seq >= fence.seq + WAL_IN_FLIGHT_CAP) {
        out.push({
          invariant: INVARIANT.epochs,
          message: `${data.key} (epoch ${data.epoch}, step ${data.step}) landed ${WAL_IN_FLIGHT_CAP} or more seqs above the seal of ${nodeId} at seq ${fence.seq} (epoch ${fence.epoch}, step ${fence.step}): beyond the fenced writer's reach`,
          focus: [data.key, incarnationLabel({ nodeId, epoch: data.epoch })],
          step: data.step,
        });
      }
    }
  }
}

/**
 * Manifests: the epoch never goes down, never runs ahead of the log, and a stream object a manifest write
 * lists for the first time was written at that manifest's epoch (a writer whose epoch was superseded
 * cannot add its objects to the stream).
 */
function checkManifestWrites(history: History, out: Violation[]): void {
  const epochs = new Map<string, number>();
  const listed = new Map<string, Set<string>>();
  const objectEpochs = new Map<string, number>();
  for (const write of history.writes) {
    if (!STREAM_OBJECT.test(write.key)) continue;
    const object = decodeStreamObject(write.body, write.key);
    objectEpochs.set(write.key, Math.max(...object.records.map((record) => record.streamEpoch)));
  }
  for (const write of history.writes) {
    const match = /^streams\/([^/]+)\/manifest$/.exec(write.key);
    if (match === null) continue;
    const streamId = decodeURIComponent(match[1]!);
    const manifest = decodeManifest(write.body, write.key, streamId);
    const known = listed.get(streamId) ?? new Set<string>();
    for (const ref of manifest.objects) {
      const objectEpoch = objectEpochs.get(ref.key);
      if (known.has(ref.key) || objectEpoch === undefined || objectEpoch === manifest.epoch) continue;
      out.push({
        invariant: INVARIANT.epochs,
        message: `${write.key} at epoch ${manifest.epoch} (step ${write.step}, by ${write.owner}) lists ${ref.key} for the first time, written at epoch ${objectEpoch}`,
        focus: [write.key, ref.key, write.owner],
        step: write.step,
      });
    }
    listed.set(streamId, new Set(manifest.objects.map((ref) => ref.key)));
    const previous = epochs.get(streamId);
    if (previous !== undefined && manifest.epoch < previous) {
      out.push({ invariant: INVARIANT.epochs, message: `${write.key} went from epoch ${previous} to ${manifest.epoch} (step ${write.step}, by ${write.owner})`, focus: [write.key, write.owner], step: write.step });
    }
    const logEpoch = write.manifestOf?.epoch ?? null;
    if (logEpoch !== null && manifest.epoch > logEpoch) {
      out.push({ invariant: INVARIANT.epochs, message: `${write.key} written at epoch ${manifest.epoch} while the log had ${streamId} at ${logEpoch} (step ${write.step}, by ${write.owner})`, focus: [write.key, write.owner], step: write.step });
    }
    epochs.set(streamId, Math.max(previous ?? 0, manifest.epoch));
  }
}

/**
 * Notice: a superseded incarnation (a zombie that has not noticed its successor) wrote the manifest of a
 * stream a newer incarnation of its node had opened since. The stream epoch cannot fence it: it takes the
 * epoch from the log (a transfer step of a stream its node owns), which is its successor's.
 */
export function checkZombieManifestWrites(history: History, out: Violation[]): void {
  const byLabel = new Map(history.incarnations.map((inc) => [incarnationLabel(inc.id), inc.id]));
  for (const write of history.writes) {
    const of = write.manifestOf;
    if (of === null || of.opener === null || incarnationLabel(of.opener) === write.owner) continue;
    const by = byLabel.get(write.owner) ?? null;
    if (by !== null && of.opener.nodeId === by.nodeId && of.opener.epoch > by.epoch) {
      out.push({
        invariant: INVARIANT.zombieWrite,
        message: `${write.key} written at step ${write.step} by ${write.owner}, while the log had ${of.name ?? "?"} ${describeOwnership(of)}`,
        focus: [write.key, write.owner],
        step: write.step,
      });
    }
  }
}
