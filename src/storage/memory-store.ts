// An in-memory object store with S3's conditional-write semantics and fault injection, for unit tests
// and deterministic simulation. It is strongly consistent, like R2.

import {
  ObjectStoreError,
  type ByteRange,
  type GetResult,
  type ListOptions,
  type ListResult,
  type ObjectInfo,
  type ObjectStore,
  type PutOptions,
  type PutResult,
  unquoteEtag,
} from "./object-store.ts";

export type StoreOperation = "put" | "get" | "head" | "list" | "delete";

/**
 * A fault injected into matching operations.
 * - `fail`: the operation does nothing and throws an error of `errorKind` (default `retryable`).
 * - `lost_answer`: the operation takes effect, then the caller gets a retryable error, as when a response is
 *   lost on the network. The caller cannot tell this apart from `fail`.
 * - `delay`: the operation waits `delayMs` (through the injected sleep) before it runs.
 */
export interface Fault {
  op: StoreOperation | "*";
  /** Only keys that start with this prefix (default: every key). */
  keyPrefix?: string;
  kind: "fail" | "lost_answer" | "delay";
  errorKind?: "retryable" | "fatal";
  delayMs?: number;
  /** How many matching operations the fault applies to (default 1); `Infinity` until cleared. */
  times?: number;
}

interface StoredObject {
  body: Uint8Array;
  etag: string;
}

export interface MemoryStoreOptions {
  /** How `delay` faults wait; tests may pass a fake clock's sleep. */
  sleep?: (ms: number) => Promise<void>;
}

const MAX_KEYS = 1000;

export class MemoryStore implements ObjectStore {
  private readonly objects = new Map<string, StoredObject>();
  private readonly faults: (Fault & { remaining: number })[] = [];
  private readonly sleep: (ms: number) => Promise<void>;
  /** Operations performed, by kind, for tests and benchmarks that count requests. */
  readonly counts: Record<StoreOperation, number> = { put: 0, get: 0, head: 0, list: 0, delete: 0 };

  constructor(options: MemoryStoreOptions = {}) {
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  inject(fault: Fault): void {
    this.faults.push({ ...fault, remaining: fault.times ?? 1 });
  }

  clearFaults(): void {
    this.faults.length = 0;
  }

  /** Every key currently stored, sorted. */
  keys(): string[] {
    return [...this.objects.keys()].sort();
  }

  async put(key: string, body: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    return this.run("put", key, () => {
      const current = this.objects.get(key);
      const condition = options.condition;
      if (condition !== undefined) {
        if ("ifNoneMatch" in condition && current !== undefined) {
          throw new ObjectStoreError("precondition_failed", `object already exists: ${key}`, key, 412);
        }
        if ("ifMatch" in condition && (current === undefined || current.etag !== unquoteEtag(condition.ifMatch))) {
          throw new ObjectStoreError("precondition_failed", `etag mismatch: ${key}`, key, 412);
        }
      }
      const etag = contentEtag(body);
      this.objects.set(key, { body: body.slice(), etag });
      return { etag };
    });
  }

  async get(key: string, range?: ByteRange): Promise<GetResult> {
    return this.run("get", key, () => {
      const object = this.objects.get(key);
      if (object === undefined) throw new ObjectStoreError("not_found", `no such key: ${key}`, key, 404);
      const size = object.body.byteLength;
      const [start, end] = resolveRange(range, size, key);
      return { key, size, etag: object.etag, body: object.body.slice(start, end), rangeStart: start };
    });
  }

  async head(key: string): Promise<ObjectInfo | null> {
    return this.run("head", key, () => {
      const object = this.objects.get(key);
      return object === undefined ? null : { key, size: object.body.byteLength, etag: object.etag };
    });
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    return this.run("list", prefix, () => {
      const maxKeys = Math.min(options.maxKeys ?? MAX_KEYS, MAX_KEYS);
      const after = options.continuationToken ?? options.startAfter ?? "";
      const keys = this.keys().filter((k) => k.startsWith(prefix) && k > after);
      const page = keys.slice(0, maxKeys);
      const objects = page.map((key) => {
        const object = this.objects.get(key)!;
        return { key, size: object.body.byteLength, etag: object.etag };
      });
      const last = page.at(-1);
      return keys.length > maxKeys && last !== undefined ? { objects, nextContinuationToken: last } : { objects };
    });
  }

  async delete(key: string): Promise<void> {
    return this.run("delete", key, () => {
      this.objects.delete(key);
    });
  }

  private async run<T>(op: StoreOperation, key: string, effect: () => T): Promise<T> {
    this.counts[op]++;
    const fault = this.takeFault(op, key);
    if (fault?.kind === "delay") await this.sleep(fault.delayMs ?? 0);
    if (fault?.kind === "fail") {
      throw new ObjectStoreError(fault.errorKind ?? "retryable", `injected failure: ${op} ${key}`, key, 503);
    }
    const result = effect();
    if (fault?.kind === "lost_answer") {
      throw new ObjectStoreError("retryable", `injected lost answer: ${op} ${key}`, key);
    }
    return result;
  }

  private takeFault(op: StoreOperation, key: string): Fault | undefined {
    const index = this.faults.findIndex(
      (f) => (f.op === "*" || f.op === op) && key.startsWith(f.keyPrefix ?? "") && f.remaining > 0,
    );
    if (index < 0) return undefined;
    const fault = this.faults[index]!;
    fault.remaining--;
    if (fault.remaining <= 0) this.faults.splice(index, 1);
    return fault;
  }
}

/** Turns a `ByteRange` into `[start, end)` within an object of `size` bytes, as S3 does. */
function resolveRange(range: ByteRange | undefined, size: number, key: string): [number, number] {
  if (range === undefined) return [0, size];
  if ("suffixLength" in range) return [Math.max(0, size - range.suffixLength), size];
  if (range.offset >= size) {
    throw new ObjectStoreError("fatal", `range not satisfiable: ${range.offset} of ${size} in ${key}`, key, 416);
  }
  const end = range.length === undefined ? size : Math.min(size, range.offset + range.length);
  return [range.offset, end];
}

/**
 * Like S3's MD5 ETag, a function of the content: rewriting identical bytes keeps the ETag. (cyrb53: a fast
 * 53-bit string hash; collisions are irrelevant at test scale.)
 */
function contentEtag(body: Uint8Array): string {
  let h1 = 0xdeadbeef ^ body.byteLength;
  let h2 = 0x41c6ce57 ^ body.byteLength;
  for (const byte of body) {
    h1 = Math.imul(h1 ^ byte, 2654435761);
    h2 = Math.imul(h2 ^ byte, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}
