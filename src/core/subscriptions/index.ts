// The pure core of the reserved subscription API (`/v1/stream/__ds/...`): configuration, URL safety,
// pattern matching, the per-subscription record and its wake/lease state machine. docs/subscriptions.md.
export * from "./config.ts";
export { subscriptionError, subscriptionNotFound } from "./errors.ts";
export type { Checked, SubscriptionError,  } from "./errors.ts";
export * from "./paths.ts";
export * from "./record.ts";
export * from "./wake.ts";
export * from "./webhook-url.ts";
export * from "./wire.ts";
export * from "./limits.ts";
