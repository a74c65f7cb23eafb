// A table client wired to a FakeTableService, with a virtual sleep that records each delay and returns at
// once, a fixed clock (the producer epoch) and fixed randomness; plus the tables the tests use.
import { TableClient } from "../../src/client/index.ts";
import { FakeTableService, ORIGIN } from "./fake-table-service.ts";

export const CLIENT_ID = "c1";
export const START_MS = 1_700_000_000_000;

/** A primary-key table keyed by one string: rows spread over all 8 buckets. */
export const ITEMS = {
  columns: [
    { name: "id", type: "string" },
    { name: "v", type: "int", nullable: true },
  ],
  primaryKey: ["id"],
  buckets: 8,
};

/** Keyed by (org, id), bucketed by org: a prefix naming the org names one bucket. */
export const USERS = {
  columns: [
    { name: "org", type: "string" },
    { name: "id", type: "int" },
    { name: "name", type: "string", nullable: true },
  ],
  primaryKey: ["org", "id"],
  bucketKey: ["org"],
  buckets: 4,
};

/** A log table without a bucket key: a row's bucket is the hash of the whole row. */
export const EVENTS = {
  columns: [
    { name: "source", type: "string" },
    { name: "n", type: "int" },
  ],
  buckets: 4,
};

export interface Harness {
  readonly service: FakeTableService;
  readonly client: TableClient;
  readonly sleeps: number[];
}

export function harness(options: { token?: string; random?: () => number } = {}): Harness {
  const service = new FakeTableService();
  const sleeps: number[] = [];
  const client = new TableClient({
    baseUrl: `${ORIGIN}/`,
    fetch: service.fetch,
    clientId: CLIENT_ID,
    now: () => START_MS,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    random: options.random ?? (() => 0.5),
    ...(options.token === undefined ? {} : { token: options.token }),
  });
  return { service, client, sleeps };
}

/** The bucket-addressed write requests the service saw, in order. */
export function writesSeen(service: FakeTableService): { url: string; bucket: number; seq: number; epoch: number; producer: string }[] {
  return service.seen
    .filter((request) => request.url.endsWith("/write"))
    .map((request) => ({
      url: request.url,
      bucket: Number(/\/bucket\/(\d+)\/write$/.exec(request.url)![1]),
      seq: Number(request.headers["producer-seq"]),
      epoch: Number(request.headers["producer-epoch"]),
      producer: request.headers["producer-id"]!,
    }));
}
