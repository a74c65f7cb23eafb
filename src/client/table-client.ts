// The entry of the table client: one instance per process or page, holding the service origin, the
// token, the injected fetch, clock, sleep and randomness, and this instance's producer identity (a client
// id and an epoch fixed at start) that every bucket's producer headers are built from.
import { parseTableName } from "../core/tables/definition.ts";
import { invalidInput, localRefusal } from "./errors.ts";
import type { FetchLike } from "./http.ts";
import { callTable, type ClientContext } from "./requests.ts";
import { TableHandle } from "./table-handle.ts";
import { parseTableList, type TableSummary } from "./wire.ts";

export interface TableClientOptions {
  /** The service origin, e.g. `http://127.0.0.1:8787`. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <token>` when the deployment has tokens. */
  readonly token?: string;
  /** Defaults to the global fetch. */
  readonly fetch?: FetchLike;
  /** Part of every producer id (`<clientId>-<table>-b<bucket>`); defaults to a random one per instance. */
  readonly clientId?: string;
  /** The clock, in ms since the epoch: with a `clientId` given, the producer epoch is its value when the client starts. */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): the backoff's jitter and the default client id. */
  readonly random?: () => number;
}

/** Longest client id: it travels in every producer id header. */
const MAX_CLIENT_ID_LENGTH = 64;
// No `-`: the producer id joins the client id and the table name with `-`, so two pairs never give one id.
const CLIENT_ID = /^[A-Za-z0-9_.]+$/;
/** Length of a generated client id: 16 base-36 digits, about 82 bits, so two instances never share one. */
const RANDOM_CLIENT_ID_CHARS = 16;
const BASE_36 = 36;

export class TableClient {
  readonly clientId: string;
  /** The Producer-Epoch of this instance's batches (a bucket's producer moves past it after a lost batch). */
  readonly producerEpoch: number;
  readonly #context: ClientContext;
  readonly #tables = new Map<string, TableHandle>();

  constructor(options: TableClientOptions) {
    const random = options.random ?? Math.random;
    const fetchFn = options.fetch ?? ((url, init) => fetch(url, init));
    this.#context = {
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      token: options.token,
      fetch: fetchFn,
      timing: { sleep: options.sleep ?? defaultSleep, random },
    };
    this.clientId = options.clientId ?? randomClientId(random);
    if (this.clientId.length > MAX_CLIENT_ID_LENGTH || !CLIENT_ID.test(this.clientId)) {
      throw invalidInput(`a client id is 1 to ${MAX_CLIENT_ID_LENGTH} of [A-Za-z0-9_.]`, { field: "clientId" });
    }
    // A random id is a producer id no one has used: epoch 0, the only first epoch every server takes
    // (PRD-11 refuses a first epoch above MAX_PRODUCER_EPOCH_STEP, 10^6 by default: the clock in ms is
    // far above it). A given id may be an earlier instance's, so it starts at the clock: the server refuses
    // that first epoch with its current one, and each bucket's producer moves to that plus one
    // (bucket-producer.ts), fencing the earlier instance.
    this.producerEpoch = options.clientId === undefined ? 0 : Math.floor((options.now ?? Date.now)());
  }

  /** The handle of table `name`; one per name, so all writes to a table share its buckets' producers. */
  table(name: string): TableHandle {
    const parsed = parseTableName(name);
    if (!parsed.ok) throw localRefusal(parsed.error);
    let handle = this.#tables.get(name);
    if (handle === undefined) {
      handle = new TableHandle(this.#context, name, { clientId: this.clientId, epoch: this.producerEpoch });
      this.#tables.set(name, handle);
    }
    return handle;
  }

  async list(): Promise<TableSummary[]> {
    const answer = await callTable(this.#context, { method: "GET", url: `${this.#context.baseUrl}/v1/table` }, "idempotent");
    return parseTableList(answer.body);
  }
}

async function defaultSleep(ms: number): Promise<void> {
  await new Promise<void>((resolve) => setTimeout(resolve, ms));
}

/** A client id from `random`: distinct instances must not share producer ids at one epoch. */
function randomClientId(random: () => number): string {
  let id = "";
  while (id.length < RANDOM_CLIENT_ID_CHARS) id += Math.floor(random() * BASE_36).toString(BASE_36);
  return id;
}
