// Every structured log event mink writes, with its level: the closed table docs/observability.md documents
// row by row. A line's event is one of these names, never free text; what varies goes into its fields.
// None is written per append or per read (the hot paths log nothing); each is a start, a step of a
// transfer or takeover, a background round, a refusal or an error.

export type LogLevel = "info" | "warn" | "error";

export const LOG_EVENTS = {
  /** A node incarnation registered, sealed and replayed its WAL chain, and serves. */
  "node.start": "info",
  /** A node incarnation could not start (registration refused, the store did not answer); retried later. */
  "node.start_failed": "error",
  /** A node's WAL writer stopped (fenced by a newer seal, or the store kept failing): it serves no more. */
  "node.stopped": "error",
  /** A conditional write of the WAL chain was refused (a newer incarnation sealed it): the node stops. */
  "node.fenced": "warn",
  /** The metadata log refuses this incarnation's epoch: it was declared dead or a newer one registered. */
  "node.superseded": "warn",
  /** A background step of a node failed (`during` says which); it is retried. */
  "node.error": "error",
  "takeover.begin": "info",
  "takeover.end": "info",
  /** The metadata log refused a takeover (`error` says why). */
  "takeover.refused": "warn",
  /** A replayed stream's manifest shows a later owner (a conditional write refused): left alone. */
  "takeover.stream_skipped": "warn",
  "transfer.hand_off": "info",
  "transfer.complete": "info",
  "transfer.open": "info",
  "transfer.failed": "warn",
  "compaction.done": "info",
  "compaction.failed": "error",
  /** A table bucket's tablet was loaded at its leader: restored from a snapshot and/or caught up from its changelog. */
  "table.load": "info",
  /** A primary-key bucket's snapshot was written and committed (and older parts collected). */
  "table.snapshot": "info",
  /** The metadata log refused a snapshot's commit (`code`; `fenced`: this node no longer leads the bucket). */
  "table.snapshot_refused": "warn",
  /** A timed tiering round of a table ran at the coordinator (docs/tiering.md): `committed`, the snapshot, rows and deletes. */
  "table.tiered": "info",
  /** A timed tiering round of a table failed (`code`; `fenced`: the lease moved; it runs again next pass). */
  "table.tier_failed": "warn",
  /** A stream's TTL or expiry passed: it was deleted. */
  "stream.expired": "info",
  /** An eviction round wrote idle streams' state into their manifests and dropped them from memory (`evicted`). */
  "stream.evicted": "info",
  /** An idle stream's manifest belongs to a later owner or holds more data than this copy: it stays in memory. */
  "stream.evict_skipped": "warn",
  /** The coordinator's collection loop deleted the objects of deleted streams. */
  "stream.collected": "info",
  "coordinator.lease_acquired": "info",
  "coordinator.lease_lost": "warn",
  /** The coordinator declared nodes dead (failovers begun) or re-led their streams. */
  "coordinator.declared_dead": "warn",
  /** A setting's value was refused and its default used. */
  "settings.invalid": "warn",
  /** Fault injection (tests only, FAULTS_ENABLED=1). */
  "fault.injected": "warn",
  /** The Worker refuses to serve an unsafe configuration (`problems`). */
  "worker.config_refused": "error",
  /** The Worker's request handling failed or a source did not answer (`during` says where). */
  "worker.error": "error",
  /** A subscription effect (webhook, wake) failed or was dropped. */
  "subscription.error": "error",
  /** The metadata log's background work failed (`during` says which). */
  "meta_log.error": "error",
  /** A warning the metadata log or the router passes on as it is (`message`). */
  "warning": "warn",
} as const satisfies Record<string, LogLevel>;

export type LogEvent = keyof typeof LOG_EVENTS;
