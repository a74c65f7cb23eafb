// `npm run sim:mutants`: the safety nets' own test. Each row below is a deliberate bug in one defence that
// another defence usually hides (docs/simulation.md, "Bugs the simulation must catch"). For each, a
// throwaway git worktree of HEAD gets the bug, then the simulation runs seeds from 1 until the first seed
// fails; the row passes when one does within the seed budget, and the script prints which check caught it
// at which seed. A `from` text that no longer occurs exactly once fails the row loudly: the table must
// follow the code, never silently test nothing.
//   npm run sim:mutants                       every row, 500 seeds each at most
//   npm run sim:mutants -- stale-completion   the rows named
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

interface Edit {
  readonly file: string;
  readonly from: string;
  readonly to: string;
}

interface Mutant {
  readonly name: string;
  /** The defence it breaks, and what else usually stands in front of it. */
  readonly breaks: string;
  readonly edits: readonly Edit[];
}

const SEED_BUDGET = 500;

const MUTANTS: readonly Mutant[] = [
  {
    name: "stale-completion",
    breaks: "CompleteTransfer accepted at an epoch older than the close (invariant 6)",
    edits: [{ file: "src/core/meta/transfer-rules.ts", from: "if (command.closedEpoch !== stream.epoch) {", to: "if (command.closedEpoch > stream.epoch) {" }],
  },
  {
    name: "stale-coordinator",
    breaks: "a coordinator command accepted at a stale coordinator epoch (behind the node-epoch check)",
    edits: [
      {
        file: "src/core/meta/failover-rules.ts",
        from: "    lease.holderEpoch !== coordinator.nodeEpoch ||\n    lease.coordinatorEpoch !== coordinator.coordinatorEpoch\n",
        to: "    lease.holderEpoch !== coordinator.nodeEpoch\n",
      },
    ],
  },
  {
    name: "takeover-without-seal",
    breaks: "a takeover replays the dead chain without sealing it (behind the zombie's own self-lease)",
    edits: [
      {
        file: "src/storage/wal-seal.ts",
        from: "  const maxSealRounds = options.maxSealRounds ?? 12;\n",
        to:
          "  const maxSealRounds = options.maxSealRounds ?? 12;\n" +
          "  if (options.sealedBy !== options.nodeId) return { fromSeq: options.fromSeq, sealSeq: lowestMissing(await presentSeqs(store, options.nodeId, options.fromSeq), options.fromSeq) };\n",
      },
    ],
  },
  {
    name: "wrong-wake-key",
    breaks: "a long-poll waits on the wrong key: a lost wake-up (behind the long-poll timeout and the node's lease)",
    edits: [{ file: "src/node/paths/read.ts", from: "await ctx.readers.wait(stream.id,", to: "await ctx.readers.wait(stream.name," }],
  },
  {
    name: "ack-as-landed",
    breaks: "a WAL object acknowledged as it lands, not once every object below it landed (an acknowledgement above a hole)",
    edits: [{ file: "src/storage/wal-writer.ts", from: "    entry.landed = true;\n", to: "    entry.landed = true;\n    for (const append of entry.batch) append.resolve({ seq });\n" }],
  },
  {
    name: "cleanup-bound",
    breaks: "WAL clean-up deletes the object at its bound too (off by one)",
    edits: [{ file: "src/storage/checkpoint.ts", from: "if (object.key >= bound) break;", to: "if (object.key > bound) break;" }],
  },
  {
    name: "lower-node-epoch",
    breaks: "a proposal from a lower node epoch accepted",
    edits: [{ file: "src/core/meta/node-rules.ts", from: "  if (proposer.nodeEpoch < node.epoch) {\n", to: "  if (proposer.nodeEpoch < node.epoch - 1e15) {\n" }],
  },
  {
    name: "seal-seq",
    breaks: "the seal placed one seq above the chain's lowest missing one (a hole below it, off the writer's path)",
    edits: [{ file: "src/storage/wal-seal.ts", from: "    const m = lowestMissing(present, fromSeq);\n", to: "    const m = lowestMissing(present, fromSeq) + 1;\n" }],
  },
  {
    name: "evict-uncompacted",
    breaks: "an eviction lets go of a stream whose data is not all in stream objects (table EV, row EV5)",
    edits: [{ file: "src/core/stream-eviction.ts", from: " || stream.compactedEnd !== stream.tail) return \"EV5\";", to: ") return \"EV5\";" }],
  },
  {
    name: "reload-without-anchor",
    breaks: "a reloaded stream's first WAL record goes out without its snapshot record ahead (streams/commit.ts)",
    edits: [{ file: "src/node/streams/commit.ts", from: "stream.needsAnchor ? [snapshotRecord(stream), record] : [record]", to: "[record]" }],
  },
  {
    name: "tiering-offsets",
    breaks: "a tiering round commits its snapshot with the offsets it started from, not those it read to (tiering's exactly-once rule, docs/tiering.md)",
    edits: [{ file: "src/tiering/tiering-round.ts", from: "    offsets[bucket.streamId] = read.value.end;\n", to: "    void read.value.end;\n" }],
  },
  {
    name: "tiering-overwrite",
    breaks: "a tiered version PUT that overwrites (not create-only): a stalled coordinator's late commit lands over the new holder's version (behind the round's heartbeats and table TC)",
    edits: [
      {
        file: "src/tiering/iceberg-store.ts",
        from: "  const outcome = await putCreateOnce(store, tieredMetadataKey(table, version), encoder.encode(JSON.stringify(metadata, null, 2)), retry);\n  return outcome.kind;\n",
        to: "  void retry;\n  await store.put(tieredMetadataKey(table, version), encoder.encode(JSON.stringify(metadata, null, 2)));\n  return \"created\";\n",
      },
    ],
  },
];

function applyEdits(root: string, mutant: Mutant): void {
  for (const edit of mutant.edits) {
    const path = join(root, edit.file);
    const text = readFileSync(path, "utf8");
    const count = text.split(edit.from).length - 1;
    if (count !== 1) throw new Error(`${mutant.name}: ${edit.file} holds the text to replace ${count} times, not once: update the table in scripts/sim-mutants.ts`);
    writeFileSync(path, text.replace(edit.from, edit.to));
  }
}

/** Runs one mutant in a fresh worktree; true when a seed failed. */
function runMutant(repo: string, mutant: Mutant): boolean {
  const dir = mkdtempSync(join(tmpdir(), `mink-mutant-${mutant.name}-`));
  execFileSync("git", ["-C", repo, "worktree", "add", "--detach", dir, "HEAD"], { stdio: "ignore" });
  try {
    symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"));
    applyEdits(dir, mutant);
    const started = performance.now();
    const run = spawnSync("npx", ["tsx", "test/sim/main.ts", "--seeds", String(SEED_BUDGET), "--until-failure"], { cwd: dir, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
    const seconds = Math.round((performance.now() - started) / 1000);
    const lines = run.stdout.split("\n");
    const failed = lines.find((line) => line.startsWith("seed ") && line.includes(" FAILED"));
    const first = lines[lines.findIndex((line) => line === failed) + 1]?.trim();
    if (run.status === 0 || failed === undefined) {
      console.log(`${mutant.name}: NOT CAUGHT in ${SEED_BUDGET} seeds (${seconds} s): ${mutant.breaks}`);
      return false;
    }
    const seed = /^seed (\d+) FAILED/.exec(failed)?.[1] ?? "?";
    console.log(`${mutant.name}: caught at seed ${seed} (${seconds} s) by ${first ?? "?"}`);
    return true;
  } finally {
    execFileSync("git", ["-C", repo, "worktree", "remove", "--force", dir], { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  }
}

function main(): number {
  const repo = resolve(import.meta.dirname, "..");
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !MUTANTS.some((mutant) => mutant.name === name));
  if (unknown.length > 0) throw new Error(`unknown mutants ${unknown.join(", ")}; known: ${MUTANTS.map((m) => m.name).join(", ")}`);
  const chosen = wanted.length === 0 ? MUTANTS : MUTANTS.filter((mutant) => wanted.includes(mutant.name));
  let missed = 0;
  for (const mutant of chosen) if (!runMutant(repo, mutant)) missed++;
  console.log(`sim:mutants: ${chosen.length - missed} of ${chosen.length} caught`);
  return missed === 0 ? 0 : 1;
}

process.exit(main());
