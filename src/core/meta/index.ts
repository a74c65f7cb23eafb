// The metadata log's pure core: state, commands, apply, placement, the view, snapshots and liveness.
export * from "./apply.ts";
export * from "./commands.ts";
export * from "./liveness.ts";
export * from "./placement.ts";
export * from "./snapshot.ts";
export * from "./state.ts";
export * from "./validate.ts";
export * from "./view.ts";
export {  type JsonObject,  } from "./json.ts";
export { ChunkedMap } from "./chunked-map.ts";
export * from "./duties.ts";
export * from "./failover-rules.ts";
export * from "./failover-plan.ts";
export * from "./collection.ts";
export * from "./admission.ts";
export * from "./meta-bytes.ts";
export * from "./stream-listing.ts";
export * from "./stream-table.ts";
