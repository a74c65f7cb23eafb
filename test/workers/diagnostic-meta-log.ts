// The MetaLog as the workers tests see it: the client every caller uses, and the two whole-state reads
// (view, watch) that only tests and diagnostics of a small log make (the Durable Object refuses them past
// VIEW_MAX_STREAMS, and MetaLogClient does not carry them).
import type { MetaView, ViewChanges } from "../../src/core/meta/index.ts";
import { META_LOG_NAME, type MetaLogClient } from "../../src/ports/meta-log-client.ts";

export interface DiagnosticMetaLog extends MetaLogClient {
  view(): Promise<MetaView>;
  watch(since: number, timeoutMs: number): Promise<ViewChanges>;
}

export function diagnosticMetaLog(namespace: DurableObjectNamespace, name = META_LOG_NAME): DiagnosticMetaLog {
  return namespace.getByName(name) as unknown as DiagnosticMetaLog;
}
