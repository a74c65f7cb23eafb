// mink's own counters from GET /metrics (admin API, Prometheus text): object-store requests by kind and WAL
// flushes, summed over the nodes, and each node's epoch. The counters are per incarnation of a node: when an
// epoch changed between two readings (the node restarted, e.g. after an idle eviction), their difference
// means nothing and diffMetrics says so.

export interface StoreCounts {
  put: number;
  get: number;
  head: number;
  list: number;
  delete: number;
}

export interface MinkMetrics {
  store: StoreCounts;
  walFlushes: number;
  /** node id -> mink_node_epoch */
  epochs: Map<string, number>;
}

const SAMPLE = /^(mink_[a-z_]+)\{([^}]*)\} (\S+)$/;

function labels(text: string): Map<string, string> {
  return new Map([...text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, m[2]!]));
}

export async function readMinkMetrics(baseUrl: string, adminToken: string): Promise<MinkMetrics> {
  const response = await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` }, signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET /metrics: ${response.status} ${text.slice(0, 200)}`);
  const metrics: MinkMetrics = { store: { put: 0, get: 0, head: 0, list: 0, delete: 0 }, walFlushes: 0, epochs: new Map() };
  for (const line of text.split("\n")) {
    const match = SAMPLE.exec(line);
    if (match === null) continue;
    const [, name, labelText, valueText] = match;
    const sample = labels(labelText!);
    const value = Number(valueText);
    const node = sample.get("node") ?? "";
    if (name === "mink_object_store_requests_total") {
      const kind = sample.get("kind") as keyof StoreCounts | undefined;
      if (kind !== undefined && kind in metrics.store) metrics.store[kind] += value;
    } else if (name === "mink_wal_flushes_total") metrics.walFlushes += value;
    else if (name === "mink_node_epoch") metrics.epochs.set(node, value);
  }
  return metrics;
}

/** after - before, or an error text when a node restarted in between (its counters started again at 0). */
export function diffMetrics(after: MinkMetrics, before: MinkMetrics): { store: StoreCounts; walFlushes: number } | string {
  const restarted = [...after.epochs].filter(([node, epoch]) => before.epochs.get(node) !== epoch).map(([node]) => node);
  if (restarted.length > 0) return `node(s) ${restarted.join(", ")} restarted during the phase: counters reset`;
  const store = { ...after.store };
  for (const kind of Object.keys(store) as (keyof StoreCounts)[]) store[kind] -= before.store[kind];
  return { store, walFlushes: after.walFlushes - before.walFlushes };
}
