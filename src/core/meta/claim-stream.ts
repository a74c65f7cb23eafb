// ClaimStream: a create's three steps in the log (CreateStream, PlaceStream, OpenStream) as one entry, for
// the node the create arrived at. Each step is the rule of its own table, applied in order to the state
// the step before left; so the claim can decide nothing those rules would not. Rows tested by name in
// test/core/meta/claim-stream.test.ts and listed in docs/metadata-log.md.
import type { ClaimStream, ValueOf } from "./commands.ts";
import { checkProposer } from "./node-rules.ts";
import { accepted, rejectedWith, unchanged, type Outcome } from "./outcome.ts";
import { placeStream } from "./placement.ts";
import type { MetaState, StreamRecord } from "./state.ts";
import { createStream, openStream } from "./stream-rules.ts";

/**
 * Table CM — ClaimStream {name, config, by}:
 * | row | condition                                               | result                                                    |
 * | CM1 | proposer fails table P                                  | as table P                                                |
 * | CM2 | name registered with another config                     | conflict {streamId} (CS4)                                 |
 * | CM3 | `unplaced` (new, or left by a CreateStream), no eligible node | unavailable {eligibleNodes: 0} (PS4): nothing written |
 * | CM4 | name not registered, or registered `unplaced`           | registered (CS2) and placed (PS5); `opened` when placed on the proposer |
 * | CM5 | same config, placed on the proposer at epoch 0, no transfer | opened at epoch 1 (OS5): a create the proposer was sent to |
 * | CM6 | the open of CM4 or CM5 refused (OS3, OS3b)               | the steps before it kept; `opened` false                  |
 * | CM7 | same config, anything else                              | no-op: the record as it is (a repeat, another's stream)   |
 * The answer carries the owner's node record, so a proposer that is not the owner can redirect at once.
 */
export function claimStream(state: MetaState, command: ClaimStream): Outcome<ValueOf["ClaimStream"]> {
  const proposerError = checkProposer(state, command.by);
  if (proposerError !== null) return rejectedWith(state, proposerError);
  const created = createStream(state, { type: "CreateStream", name: command.name, config: command.config, by: command.by });
  if (!created.result.ok) return rejectedWith(state, created.result.error);
  let at = created.state;
  let stream: StreamRecord = created.result.value.stream;
  if (stream.ownership === "unplaced") {
    const placed = placeStream(at, { type: "PlaceStream", streamId: stream.id, by: command.by });
    if (!placed.result.ok) return rejectedWith(state, placed.result.error);
    at = placed.state;
    stream = placed.result.value.stream;
  }
  let opened = false;
  if (stream.owner === command.by.nodeId && stream.ownership === "placed" && stream.epoch === 0) {
    const open = openStream(at, { type: "OpenStream", streamId: stream.id, nodeId: command.by.nodeId, nodeEpoch: command.by.nodeEpoch });
    if (open.result.ok) {
      at = open.state;
      stream = open.result.value.stream;
      opened = true;
    }
  }
  const value = { stream, opened, ownerNode: stream.owner === null ? null : (at.nodes.get(stream.owner) ?? null) };
  return at === state ? unchanged(state, value) : accepted(at, value);
}
