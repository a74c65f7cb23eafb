// The Prometheus text exposition format (version 0.0.4), pure: metric families in, text out. Each family
// gets its `# HELP` and `# TYPE` lines once, then one line per sample; families that share a name are
// merged under the first one's HELP and TYPE, since the format allows a metric name's block only once.
// Label values escape backslash, double quote and newline; HELP text escapes backslash and newline.

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

type MetricType = "counter" | "gauge";

export interface MetricSample {
  readonly labels?: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricFamily {
  /** A Prometheus metric name; counters end in `_total` by convention. */
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  readonly samples: readonly MetricSample[];
}

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

function formatLabels(labels: Readonly<Record<string, string>> | undefined): string {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return "";
  for (const [name] of entries) {
    if (!LABEL_NAME.test(name) || name.startsWith("__")) throw new RangeError(`invalid label name ${JSON.stringify(name)}`);
  }
  return `{${entries.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(",")}}`;
}

/** The exposition text: every family's block in first-seen order, ending with a newline. */
export function formatMetrics(families: readonly MetricFamily[]): string {
  const merged = new Map<string, { head: MetricFamily; samples: MetricSample[] }>();
  for (const family of families) {
    if (!METRIC_NAME.test(family.name)) throw new RangeError(`invalid metric name ${JSON.stringify(family.name)}`);
    const entry = merged.get(family.name);
    if (entry === undefined) merged.set(family.name, { head: family, samples: [...family.samples] });
    else entry.samples.push(...family.samples);
  }
  const lines: string[] = [];
  for (const { head, samples } of merged.values()) {
    lines.push(`# HELP ${head.name} ${escapeHelp(head.help)}`, `# TYPE ${head.name} ${head.type}`);
    for (const sample of samples) lines.push(`${head.name}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}
