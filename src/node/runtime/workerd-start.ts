// A node's start inside workerd (the StreamNode Durable Object): the real clock, randomness and console
// log, the object store its settings name, and what the shell lends: its SQLite tablets, the metadata log
// stub, its view of the log, keeping work alive past a response, and ending this incarnation. The node
// tier and the simulation start nodes with NodeRuntime.start directly, with their own clock and store.
import { consoleSink, createLogger } from "../../log/logger.ts";
import type { TabletStorage } from "../../ports/tablet-storage.ts";
import type { ViewPort } from "../context.ts";
import type { NodeSettings } from "../settings.ts";
import { NodeRuntime } from "./node-runtime.ts";
import type { ObjectStoreSettings } from "../../storage/store-from-env.ts";
import { nodeObjectStore } from "./store-factory.ts";
import type { NodeMetaPort } from "./wiring.ts";
import type { ChangelogPeers } from "../coordinator/tiering.ts";

export interface WorkerdNode {
  readonly nodeId: string;
  readonly nodeEpoch: number;
  readonly settings: NodeSettings;
  /** PUBLIC_ORIGIN, or the local runtime's origin: the node's address is `<origin>/n/<id>`. */
  readonly origin: string;
  readonly storeSettings: ObjectStoreSettings;
  readonly tablets: TabletStorage;
  readonly meta: NodeMetaPort;
  readonly view: ViewPort;
  readonly waitUntil: (work: Promise<unknown>) => void;
  /** Ends this incarnation (after the WAL writer stopped), so the next request starts a new one. */
  readonly endSoon: (reason: string) => void;
  /** Other nodes' changelog reads, for the tiering rounds this node runs as the coordinator. */
  readonly peers: ChangelogPeers;
}

/** Starts the node; a refused registration or a silent store is logged and thrown (a later request retries). */
export async function startInWorkerd(node: WorkerdNode): Promise<NodeRuntime> {
  const log = createLogger(consoleSink, { node: node.nodeId, nodeEpoch: node.nodeEpoch }, () => Date.now());
  try {
    return await NodeRuntime.start({
      nodeId: node.nodeId,
      nodeEpoch: node.nodeEpoch,
      addr: `${node.origin}/n/${node.nodeId}`,
      settings: node.settings,
      store: nodeObjectStore(node.storeSettings),
      tablets: node.tablets,
      meta: node.meta,
      view: node.view,
      now: () => Date.now(),
      clockMs: () => performance.now(),
      random: () => Math.random(),
      logSink: consoleSink,
      background: (work) => node.waitUntil(work.catch((error: unknown) => log.log("node.error", { during: "background" }, error))),
      onStopped: () => node.endSoon("the WAL writer stopped"),
      tiering: { storeUri: `s3://${node.storeSettings.S3_BUCKET}`, peers: node.peers },
    });
  } catch (error) {
    log.log("node.start_failed", {}, error);
    throw error;
  }
}
