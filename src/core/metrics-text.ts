// The Prometheus text exposition format (version 0.0.4), pure: metric families in, text out. Each family
// gets its `# HELP` and `# TYPE` lines once, then one line per sample; families that share a name are
// merged under the first one's HELP and TYPE, since the format allows a metric name's block only once.
// Label values escape backslash, double quote and newline; HELP text escapes backslash and newline.
// A histogram sample becomes its cumulative `_bucket` lines (each `le` bound, then `+Inf`), `_sum` and
// `_count`, all with the sample's labels.

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export interface MetricSample {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface HistogramSample {
  readonly labels?: Readonly<Record<string, string>>;
  /** Finite upper bounds, ascending, with the observations at or below each (cumulative). */
  readonly buckets: readonly { readonly le: number; readonly count: number }[];
  readonly sum: number;
  /** Every observation: the `+Inf` bucket. */
  readonly count: number;
}

interface FamilyHead {
  /** A Prometheus metric name; counters end in `_total` by convention, histograms in their unit. */
  readonly name: string;
  readonly help: string;
}

export type MetricFamily =
  | (FamilyHead & { readonly type: "counter" | "gauge"; readonly samples: readonly MetricSample[] })
  | (FamilyHead & { readonly type: "histogram"; readonly samples: readonly HistogramSample[] });

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

export function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function formatLabels(labels: Readonly<Record<string, string>> | undefined, le?: string): string {
  const entries = Object.entries(labels ?? {});
  if (le !== undefined) entries.push(["le", le]);
  if (entries.length === 0) return "";
  for (const [name] of entries) {
    if (!LABEL_NAME.test(name) || name.startsWith("__")) throw new RangeError(`invalid label name ${JSON.stringify(name)}`);
  }
  return `{${entries.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(",")}}`;
}

/** A histogram sample's lines; its buckets must ascend in `le` and never decrease in count. */
function histogramLines(name: string, sample: HistogramSample): string[] {
  if (sample.labels !== undefined && "le" in sample.labels) throw new RangeError(`${name}: "le" is the bucket label`);
  const lines: string[] = [];
  let previous: { le: number; count: number } | null = null;
  for (const bucket of sample.buckets) {
    if (!Number.isFinite(bucket.le) || (previous !== null && (bucket.le <= previous.le || bucket.count < previous.count)) || bucket.count > sample.count) {
      throw new RangeError(`${name}: buckets must ascend in le and be cumulative`);
    }
    lines.push(`${name}_bucket${formatLabels(sample.labels, formatValue(bucket.le))} ${formatValue(bucket.count)}`);
    previous = bucket;
  }
  lines.push(
    `${name}_bucket${formatLabels(sample.labels, "+Inf")} ${formatValue(sample.count)}`,
    `${name}_sum${formatLabels(sample.labels)} ${formatValue(sample.sum)}`,
    `${name}_count${formatLabels(sample.labels)} ${formatValue(sample.count)}`,
  );
  return lines;
}

/** The exposition text: every family's block in first-seen order, ending with a newline. */
export function formatMetrics(families: readonly MetricFamily[]): string {
  const merged = new Map<string, { head: MetricFamily; lines: string[] }>();
  for (const family of families) {
    if (!METRIC_NAME.test(family.name)) throw new RangeError(`invalid metric name ${JSON.stringify(family.name)}`);
    let entry = merged.get(family.name);
    if (entry === undefined) {
      entry = { head: family, lines: [] };
      merged.set(family.name, entry);
    } else if (entry.head.type !== family.type) {
      throw new RangeError(`${family.name} is both a ${entry.head.type} and a ${family.type}`);
    }
    if (family.type === "histogram") for (const sample of family.samples) entry.lines.push(...histogramLines(family.name, sample));
    else for (const sample of family.samples) entry.lines.push(`${family.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
  }
  const lines: string[] = [];
  for (const { head, lines: samples } of merged.values()) {
    lines.push(`# HELP ${head.name} ${escapeHelp(head.help)}`, `# TYPE ${head.name} ${head.type}`, ...samples);
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}
