// Opening a bucket (docs/tables.md, table BO): the decision a node's sync task takes for one bucket
// from the view, and how a request for the bucket is answered meanwhile (table BR). Pure: the view record,
// the bucket stream's state, liveness and this node's own open state come in as parameters.

/** The bucket's record in the view: who should lead it, at which leader epoch. */
export interface BucketLeadership {
  readonly leader: string;
  readonly leaderEpoch: number;
}

/** The bucket's stream as the log records it: opened by a node at an epoch, or closed at one. */
type BucketStreamState =
  | { readonly state: "opened"; readonly by: string; readonly epoch: number }
  | { readonly state: "closed"; readonly epoch: number };

export interface BucketOpenInput {
  readonly view: BucketLeadership;
  readonly stream: BucketStreamState;
  readonly nodeId: string;
  readonly liveIds: ReadonlySet<string>;
  /** The epoch this node serves the bucket at, or null when it does not have it open. */
  readonly openLocallyAt: number | null;
}

export type BucketOpenAction =
  | { readonly action: "none" }
  | { readonly action: "close"; readonly epoch: number }
  | { readonly action: "retry"; readonly holder: string }
  | { readonly action: "take_over_then_open"; readonly deadNode: string; readonly leaderEpoch: number }
  | { readonly action: "lead_then_open" }
  | { readonly action: "open"; readonly leaderEpoch: number };

/**
 * Table BO — a bucket in the view, at this node:
 * | row | condition                                                      | action                                        |
 * | BO1 | another node should lead it, this node has it open            | close (at the epoch it serves)                |
 * | BO2 | another node should lead it, not open here                    | none                                          |
 * | BO3 | this node serves it at the leader epoch                       | none (serving)                                |
 * | BO4 | the stream is opened by another node that is live             | retry: it has not seen the change yet         |
 * | BO5 | opened by a node that is not live                             | take over its incarnation as failover does, then open at the leader epoch |
 * | BO6 | closed (or opened by this node's earlier self) at the leader epoch | propose LeadBucket for a fresh epoch, then open (this node restarted) |
 * | BO7 | closed or opened by this node below the leader epoch          | open at the leader epoch                      |
 * | BO8 | the stream's epoch is above the view's leader epoch           | retry: the view lags the log                  |
 */
export function decideBucketOpen(input: BucketOpenInput): BucketOpenAction {
  const { view, stream, nodeId, openLocallyAt } = input;
  if (view.leader !== nodeId) return openLocallyAt === null ? { action: "none" } : { action: "close", epoch: openLocallyAt };
  if (openLocallyAt === view.leaderEpoch) return { action: "none" };
  if (stream.state === "opened" && stream.by !== nodeId) {
    if (input.liveIds.has(stream.by)) return { action: "retry", holder: stream.by };
    return { action: "take_over_then_open", deadNode: stream.by, leaderEpoch: view.leaderEpoch };
  }
  if (stream.epoch > view.leaderEpoch) return { action: "retry", holder: nodeId };
  if (stream.epoch === view.leaderEpoch) return { action: "lead_then_open" };
  return { action: "open", leaderEpoch: view.leaderEpoch };
}

export type BucketRequestAnswer =
  | { readonly answer: "serve"; readonly leaderEpoch: number }
  | { readonly answer: "not_leader"; readonly leader: string; readonly leaderAddr: string | null; readonly leaderEpoch: number }
  | { readonly answer: "unavailable"; readonly retryAfterS: number };

/** How long a client waits before retrying a bucket that is opening. */
export const OPENING_RETRY_AFTER_S = 1;

/**
 * Table BR — a request for a bucket, at this node:
 * | row | condition                                      | answer                                              |
 * | BR1 | another node leads it                          | not_leader {leader, leaderAddr, leaderEpoch}: the client re-routes |
 * | BR2 | this node leads it, not open at the leader epoch | unavailable, Retry-After OPENING_RETRY_AFTER_S   |
 * | BR3 | this node serves it at the leader epoch        | serve                                               |
 */
export function bucketRequestAnswer(
  view: BucketLeadership,
  nodeId: string,
  openLocallyAt: number | null,
  leaderAddr: string | null,
): BucketRequestAnswer {
  if (view.leader !== nodeId) return { answer: "not_leader", leader: view.leader, leaderAddr, leaderEpoch: view.leaderEpoch };
  if (openLocallyAt !== view.leaderEpoch) return { answer: "unavailable", retryAfterS: OPENING_RETRY_AFTER_S };
  return { answer: "serve", leaderEpoch: view.leaderEpoch };
}
