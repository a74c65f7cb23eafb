// Structured logs: one JSON object per line, written with console.log / console.warn / console.error, which
// Workers Logs ingests (docs/observability.md). Every line carries `ts`, `level`, `event`, `node` and
// `nodeEpoch` (null off the nodes: the Worker, the metadata log), then the event's fields. The sink is a
// parameter, so tests capture lines through the same interface. Bounded: nothing is buffered, a line has at
// most MAX_FIELDS fields and each string is cut at MAX_STRING_CHARS. Callers pass names, ids, numbers and
// error messages, never a token or a body.
import { LOG_EVENTS, type LogEvent, type LogLevel } from "./events.ts";

const MAX_FIELDS = 24;
const MAX_STRING_CHARS = 512;

type FieldValue = string | number | boolean | null | undefined | readonly string[];
type LogFields = Readonly<Record<string, FieldValue>>;

/** Where lines go: one call per line, nothing kept. */
export type LogSink = (line: string, level: LogLevel) => void;

export interface Logger {
  /** One line for `event`; `error`, when given, becomes `error` (its message) and `errorName`. */
  log(event: LogEvent, fields?: LogFields, error?: unknown): void;
}

export interface LogOrigin {
  readonly node: string | null;
  readonly nodeEpoch: number | null;
}

const RESERVED = new Set(["ts", "level", "event", "node", "nodeEpoch", "error", "errorName"]);

function bounded(value: FieldValue): FieldValue {
  if (typeof value === "string") return value.length > MAX_STRING_CHARS ? `${value.slice(0, MAX_STRING_CHARS)}…` : value;
  if (Array.isArray(value)) return value.slice(0, MAX_FIELDS).map((item: string) => bounded(item) as string);
  return value;
}

/** An error's message; anything else thrown as JSON where it can be (a logger never throws). */
function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  try {
    return JSON.stringify(error) ?? typeof error;
  } catch {
    return typeof error;
  }
}

export function createLogger(sink: LogSink, origin: LogOrigin, nowMs: () => number): Logger {
  return {
    log(event, fields = {}, error) {
      const level = LOG_EVENTS[event];
      const line: Record<string, FieldValue> = { ts: new Date(nowMs()).toISOString(), level, event, node: origin.node, nodeEpoch: origin.nodeEpoch };
      let kept = 0;
      for (const [name, value] of Object.entries(fields)) {
        if (value === undefined || RESERVED.has(name)) continue;
        if (++kept > MAX_FIELDS) break;
        line[name] = bounded(value);
      }
      if (error !== undefined) {
        line["error"] = bounded(describeError(error));
        if (error instanceof Error) line["errorName"] = error.name;
      }
      sink(JSON.stringify(line), level);
    },
  };
}

/** The console, by level: what Workers Logs (and a terminal) reads. */
export const consoleSink: LogSink = (line, level) => {
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
};

/** The Worker's and the metadata log's lines: no node, the wall clock. */
export const workerLog: Logger = createLogger(consoleSink, { node: null, nodeEpoch: null }, () => Date.now());
