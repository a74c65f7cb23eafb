// Where a stream stands on its node, as a table of legal moves (docs/node.md, "Stream phases"). The node's
// registry holds the phase (with the hand-off's promise) and refuses, through `canMove`, any move this table
// does not list.
//
// | from \ to  | held            | opened          | handing-off   | moved-away          | removed        | evicted         |
// |-------------|-----------------|-----------------|---------------|---------------------|----------------|-----------------|
// | held        |                 | open (lazy, R7) | hand-off (T1) | stale copy released | delete, expiry | idle (table EV) |
// | opened      |                 |                 | hand-off (T1) |                     | delete, expiry | idle (table EV) |
// | handing-off | hand-off failed |                 |               | released (T1)       | expiry         |                 |
// | moved-away  | final           |                 |               |                     |                |                 |
// | removed     | final           |                 |               |                     |                |                 |
// | evicted     | final: the next request reloads a new copy from the manifest (held)                                 |

export type PhaseKind = "held" | "opened" | "handing-off" | "moved-away" | "removed" | "evicted";

const PHASE_MOVES: { readonly [K in PhaseKind]: readonly PhaseKind[] } = {
  held: ["opened", "handing-off", "moved-away", "removed", "evicted"],
  opened: ["handing-off", "removed", "evicted"],
  "handing-off": ["held", "moved-away", "removed"],
  "moved-away": [],
  removed: [],
  evicted: [],
};

export function canMove(from: PhaseKind, to: PhaseKind): boolean {
  return PHASE_MOVES[from].includes(to);
}
