// Which files of a tiered table no snapshot will ever reference (docs/tiering.md, table OF): those of rounds
// that never committed. Every file a round writes is named `e<coordinator epoch>-s<snapshot id>-...`, so the
// name says which round wrote it. Pure: the keys listed, the committed snapshots, the latest epoch.

/** The name prefix of every file of the round that commits `snapshotId` at `coordinatorEpoch`. */
export function roundFilePrefix(coordinatorEpoch: number, snapshotId: number): string {
  return `e${coordinatorEpoch}-s${snapshotId}-`;
}

const ROUND_FILE = /(?:^|\/)e(\d+)-s(\d+)-[^/]*$/;

/**
 * OF1: a file whose snapshot was committed is kept. OF2: a file of an epoch below the latest version's
 * whose snapshot was not committed is an orphan (its round was fenced: it can never commit). OF3: a file of
 * the latest epoch whose snapshot is not committed may belong to a round in flight: kept (a later epoch
 * collects it). OF4: a file not named by a round (not mink's) is kept.
 */
export function orphanedFiles(keys: readonly string[], committedSnapshotIds: ReadonlySet<number>, latestEpoch: number): string[] {
  return keys.filter((key) => {
    const match = ROUND_FILE.exec(key);
    if (match === null) return false;
    const epoch = Number(match[1]);
    const snapshotId = Number(match[2]);
    return !committedSnapshotIds.has(snapshotId) && epoch < latestEpoch;
  });
}
