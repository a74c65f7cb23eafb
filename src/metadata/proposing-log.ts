// What the metadata log's multi-step operations (coordinator ticks, table creation, drains, rebalance
// rounds) need of the log: its state, its clock, its live nodes and proposals. MetaLogService is one; the
// steps take this instead of the service so they stay beside it without an import cycle.
import type { Command, MetaState, NodeRecord } from "../core/meta/index.ts";
import type { ProposeResult } from "../ports/meta-log-client.ts";

export interface ProposingLog {
  readonly state: MetaState;
  readonly now: () => number;
  propose(command: Command): ProposeResult;
  liveNodes(): NodeRecord[];
}
