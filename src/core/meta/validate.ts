// Shape checks for commands that arrive from outside (RPC, admin API): `apply` is total, so anything that
// is not a well-formed command is rejected as `invalid` before any rule looks at it.
import { domainError, type DomainError } from "../errors.ts";
import { COMMAND_TYPES, type CommandType } from "./commands.ts";
import { MAX_REASSIGN_BATCH } from "./failover-rules.ts";
import { isJsonObject, isJsonValue } from "./json.ts";
import { MAX_BUCKETS_PER_TABLE } from "./table-rules.ts";

const MAX_ID_CHARS = 256;
const MAX_NAME_CHARS = 1024;
const MAX_ADDR_CHARS = 2048;
/** A stream's configuration is metadata (content type, TTL...), kept in every snapshot: keep it small. */
const MAX_CONFIG_JSON_CHARS = 16 * 1024;
/** A table's definition (columns, keys) is in every snapshot and view too. */
const MAX_DEFINITION_JSON_CHARS = 16 * 1024;

type Check = (value: unknown) => boolean;

const id: Check = (v) => typeof v === "string" && v.length > 0 && v.length <= MAX_ID_CHARS;
const name: Check = (v) => typeof v === "string" && v.length > 0 && v.length <= MAX_NAME_CHARS;
const addr: Check = (v) => typeof v === "string" && v.length <= MAX_ADDR_CHARS;
/** Epochs, slots, times: non-negative safe integers. */
const count: Check = (v) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const positive: Check = (v) => count(v) && (v as number) > 0;
/** Leases and claims last at most a day: an expiry must stay a safe integer for every snapshot. */
const MAX_TTL_MS = 86_400_000;
const ttl: Check = (v) => positive(v) && (v as number) <= MAX_TTL_MS;
const bool: Check = (v) => typeof v === "boolean";
const config: Check = (v) => isJsonObject(v);
const proposer: Check = (v) => isRecord(v) && id(v.nodeId) && count(v.nodeEpoch);
const optional = (check: Check): Check => (v) => v === undefined || check(v);
const coordinator: Check = (v) => proposer(v) && count((v as Record<string, unknown>).coordinatorEpoch) && Object.keys(v as object).length === 3;
const move: Check = (v) => isRecord(v) && id(v.streamId) && id(v.target) && Object.keys(v).length === 2;
const moves: Check = (v) => Array.isArray(v) && v.length > 0 && v.length <= MAX_REASSIGN_BATCH && v.every(move);

/** One leader per bucket; none for a partitioned table's CreateTable (its buckets come with AddPartition). */
const leaders: Check = (v) => Array.isArray(v) && v.length <= MAX_BUCKETS_PER_TABLE && v.every(id);
/** A partition value (its fit to the column is AddPartition's AP4): a string of at most MAX_NAME_CHARS, or a safe integer. */
const partitionValue: Check = (v) => (typeof v === "string" && v.length <= MAX_NAME_CHARS) || (typeof v === "number" && Number.isSafeInteger(v));
const bucket: Check = (v) => count(v) && (v as number) < MAX_BUCKETS_PER_TABLE;
const bucketSnapshot: Check = (v) =>
  isRecord(v) &&
  name(v.key) &&
  count(v.coveredOffset) &&
  count(v.coveredPosition) &&
  count(v.rows) &&
  count(v.bytes) &&
  Object.keys(v).length === 5;

const tiered: Check = (v) =>
  isRecord(v) && positive(v.version) && positive(v.snapshotId) && count(v.tieredAtMs) && count(v.records) && Object.keys(v).length === 4;

const FIELDS: { readonly [T in CommandType]: Readonly<Record<string, Check>> } = {
  RegisterNode: { nodeId: id, nodeEpoch: count, addr, slots: optional(count) },
  SetSlots: { nodeId: id, slots: count, by: optional(proposer) },
  SetDraining: { nodeId: id, draining: bool, by: optional(proposer) },
  CreateStream: { name, config, by: optional(proposer) },
  ClaimStream: { name, config, by: proposer },
  DeleteStream: { streamId: id, by: optional(proposer) },
  PlaceStream: { streamId: id, by: optional(proposer) },
  OpenStream: { streamId: id, nodeId: id, nodeEpoch: count },
  CloseStream: { streamId: id, nodeId: id, nodeEpoch: count, epoch: count },
  BeginTransfer: { streamId: id, target: id, by: optional(proposer) },
  CompleteTransfer: { streamId: id, closedEpoch: count, by: optional(proposer) },
  AcquireLease: { nodeId: id, nodeEpoch: count, ttlMs: ttl },
  RenewLease: { nodeId: id, nodeEpoch: count, coordinatorEpoch: count, ttlMs: ttl },
  DeclareDead: { nodeId: id, nodeEpoch: count, coordinator },
  ReassignStreams: { moves, coordinator },
  ClaimTakeover: { nodeId: id, nodeEpoch: count, by: proposer, ttlMs: ttl },
  CompleteTakeover: { nodeId: id, nodeEpoch: count, by: proposer },
  CreateTable: { name, definition: (v) => isJsonValue(v), leaders, streamConfig: config, coordinator },
  AddPartition: { table: name, value: partitionValue, leaders, streamConfig: config, coordinator },
  DropTable: { name, by: optional(proposer) },
  CommitBucketSnapshot: { table: name, bucket, streamId: id, epoch: count, snapshot: bucketSnapshot, by: proposer },
  RecordTiering: { table: name, tiered, coordinator },
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isCommandType(value: unknown): value is CommandType {
  return typeof value === "string" && (COMMAND_TYPES as readonly string[]).includes(value);
}

/** Null when `input` is a well-formed command; otherwise the `invalid` error naming the first bad field. */
export function validateCommand(input: unknown): DomainError | null {
  if (!isRecord(input)) return domainError("invalid", "a command is an object");
  if (!isCommandType(input.type)) return domainError("invalid", "unknown command type", { type: String(input.type) });
  const fields = FIELDS[input.type];
  for (const key of Object.keys(input)) {
    if (key !== "type" && !(key in fields)) return domainError("invalid", `unexpected field ${key}`, { type: input.type, field: key });
  }
  for (const [key, check] of Object.entries(fields)) {
    if (!check(input[key])) return domainError("invalid", `bad or missing field ${key}`, { type: input.type, field: key });
  }
  if ((input.type === "CreateStream" || input.type === "ClaimStream") && JSON.stringify(input.config).length > MAX_CONFIG_JSON_CHARS) {
    return domainError("too_large", "stream configuration too large", { maxChars: MAX_CONFIG_JSON_CHARS });
  }
  if (input.type === "CreateTable" && JSON.stringify(input.definition).length > MAX_DEFINITION_JSON_CHARS) {
    return domainError("too_large", "table definition too large", { maxChars: MAX_DEFINITION_JSON_CHARS });
  }
  return null;
}

