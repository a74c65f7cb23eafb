// The table client's public surface (`mink/client`): the client, a table's handle, the error types and
// the shapes of answers. Everything else in src/client is internal.
export { TableClient, type TableClientOptions } from "./table-client.ts";
export type { TableHandle, CreateResult, MinOffsets, WriteResult } from "./table-handle.ts";
export { TableClientError, TableWriteError, type BucketWriteResult, type ErrorDetails, type TableErrorCode } from "./errors.ts";
export type { FetchLike } from "./http.ts";
export type { WriteOp } from "./split.ts";
export type { BucketInfo, PrefixPage, TableDescription, TableSummary } from "./wire.ts";
export type { TableDefinition, ColumnDefinition } from "../core/tables/definition.ts";
export type { Row } from "../core/tables/rows.ts";
export { MAX_ATTEMPTS, BACKOFF_BASE_MS, BACKOFF_CAP_MS, MAX_RETRY_AFTER_MS } from "./retry.ts";
