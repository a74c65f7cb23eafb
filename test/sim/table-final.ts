// The table's last reader: after the run settled, reads every bucket's changelog from its start through the
// network (redirects to the leader and all), keeping each record's stream positions (a JSON stream frames
// each message and a newline), then looks every key of the bucket up at the changelog's end. Retries what
// is refused; a bucket it cannot read is recorded as unreadable.
import { formatOffset, parseOffset } from "../../src/core/protocol/offsets.ts";
import { encodePartition } from "../../src/core/tables/bucketing.ts";
import { bucketIdText } from "../../src/core/tables/requests.ts";
import type { SimMetaLog } from "./sim-meta.ts";
import type { Actor, Choice, Phase } from "./scheduler.ts";
import { keyOf, opPath, parseJson, SIM_TABLE, type SimBucket, type TableDeps } from "./table-clients.ts";
import type { ChangelogEntry, SimRow } from "./table-history.ts";
import type { HttpAnswer } from "./network.ts";

const ATTEMPTS = 40;

export class FinalTableReader implements Actor {
  readonly name = "final-table";
  private started = false;
  done = false;

  constructor(
    private readonly deps: TableDeps,
    private readonly meta: SimMetaLog,
  ) {}

  choices(phase: Phase): readonly Choice[] {
    if (phase !== "final" || this.started) return [];
    const run = (): void => {
      this.started = true;
      this.readAll()
        .catch((error: unknown) => this.deps.trace.write(`  final table read failed: ${String(error)}`))
        .finally(() => (this.done = true));
    };
    return [{ category: "final", label: "final read of every table bucket", run }];
  }

  private async readAll(): Promise<void> {
    const tables = this.deps.history.tables;
    const world = this.deps.world;
    tables.buckets = new Map(world.buckets.map((bucket) => [bucket.text, { path: bucket.path, partition: bucket.id.partition, ids: bucket.ids }]));
    const lookup = this.meta.service.lookupTable(SIM_TABLE);
    tables.existsAtEnd = lookup.table !== null;
    if (!tables.existsAtEnd) return;
    // Each (partition, bucket) is one bucket: the workload's, found by its bucketIdText.
    const listed = lookup.buckets.map(({ partition, bucket, streamId }) => ({ streamId, text: bucketIdText({ partition: partition === null ? null : encodePartition(partition), bucket }) }));
    for (const { text } of listed) tables.listed.add(text);
    for (const { text, streamId } of listed) {
      const known = world.buckets.find((candidate) => candidate.text === text);
      if (known === undefined) tables.unreadable.set(text, `bucket ${text} (${streamId}) is no bucket of the workload`);
      else await this.readBucket(known, streamId);
    }
  }

  private async readBucket(bucket: SimBucket, streamId: string): Promise<void> {
    const tables = this.deps.history.tables;
    const text = bucket.text;
    const changelog: ChangelogEntry[] = [];
    let position = 0;
    let next: string | null = null;
    let lastError = "";
    for (let attempt = 0; attempt < ATTEMPTS; ) {
      const answer = await this.deps.net.request("final", { method: "GET", path: `${opPath(bucket, "changelog")}?offset=${next ?? "-1"}` });
      const end = nextOffset(answer);
      if (answer.status === 200 && end !== null && answer.by !== null) {
        const page = this.entries(answer.text, position);
        if (typeof page === "string" || page.end !== end) {
          tables.unreadable.set(text, `changelog page at ${position}: ${typeof page === "string" ? page : `its records end at ${page.end}, Stream-Next-Offset says ${end}`}`);
          return;
        }
        changelog.push(...page.entries);
        position = end;
        next = formatOffset(end);
        if (answer.headers.get("stream-up-to-date") !== "true") continue;
        const rows = await this.lookupAll(bucket, end);
        if (typeof rows === "string") tables.unreadable.set(text, rows);
        else tables.final.set(text, { streamId, changelog, rows: rows.rows, by: rows.by });
        return;
      }
      attempt++;
      lastError = describe(answer);
      await this.backoff(attempt);
    }
    tables.unreadable.set(text, `changelog: ${lastError}`);
  }

  /** A page's records with their positions from `start`; a message on what is malformed. */
  private entries(text: string, start: number): { entries: ChangelogEntry[]; end: number } | string {
    const messages = parseJson(text);
    if (!Array.isArray(messages)) return `not a JSON array: ${text.slice(0, 120)}`;
    const entries: ChangelogEntry[] = [];
    let at = start;
    for (const message of messages) {
      const record = message as { op?: unknown; row?: { id?: unknown; v?: unknown } };
      if (typeof record.op !== "string" || typeof record.row?.id !== "string" || typeof record.row.v !== "number") {
        return `malformed record ${JSON.stringify(message).slice(0, 120)}`;
      }
      const end = at + Buffer.byteLength(JSON.stringify(message), "utf8") + 1;
      entries.push({ op: record.op, row: record.row as SimRow, start: at, end });
      at = end;
    }
    return { entries, end: at };
  }

  /** Every key of the bucket at its leader, applied at least to `end`. */
  private async lookupAll(bucket: SimBucket, end: number): Promise<{ rows: Map<string, SimRow | null>; by: NonNullable<HttpAnswer["by"]> } | string> {
    const ids = bucket.ids;
    const body = JSON.stringify({ keys: ids.map((id) => keyOf(bucket, id)), minOffset: formatOffset(end) });
    let lastError = "";
    for (let attempt = 0; attempt < ATTEMPTS; ) {
      const answer = await this.deps.net.request("final", { method: "POST", path: opPath(bucket, "lookup"), headers: { "content-type": "application/json" }, body });
      const rows = answer.status === 200 ? (parseJson(answer.text) as { rows?: unknown } | null)?.rows : undefined;
      if (Array.isArray(rows) && rows.length === ids.length && answer.by !== null) {
        return { rows: new Map(ids.map((id, i) => [id, rows[i] as SimRow | null])), by: answer.by };
      }
      attempt++;
      lastError = describe(answer);
      await this.backoff(attempt);
    }
    return `final lookup: ${lastError}`;
  }

  private backoff(attempt: number): Promise<void> {
    return new Promise<void>((resolve) => this.deps.clock.schedule(200 * attempt, () => resolve(), null, "backoff final table"));
  }
}

function nextOffset(answer: HttpAnswer): number | null {
  const header = answer.headers.get("stream-next-offset");
  return header === null ? null : parseOffset(header);
}

function describe(answer: HttpAnswer): string {
  return answer.error ?? `${answer.status} ${answer.text.slice(0, 120)}`;
}
