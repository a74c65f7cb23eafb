// An outside reader of a tiered table (docs/tiering.md): icebird, which follows the file-based catalog from
// `metadata/version-hint.text` through the manifest list and manifests to the Parquet files, applying
// equality deletes. icebird fetches `s3://<bucket>/<key>` as `https://<bucket>.s3.amazonaws.com/<key>`; here
// those requests are answered by `getObject` (the object store under test, or the S3 endpoint), and the
// global fetch is restored afterwards.
import { icebergRead } from "icebird";

export type ObjectGetter = (bucket: string, key: string) => Promise<Uint8Array | null>;

/** Every row of the table's current snapshot (longs as bigints, as Parquet readers give them). */
export async function readIcebergTable(tableUri: string, getObject: ObjectGetter): Promise<Record<string, unknown>[]> {
  const realFetch = globalThis.fetch;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const host = /^([^.]+)\.s3\.amazonaws\.com$/.exec(url.host);
    if (host === null) return realFetch(input, init);
    const method = init?.method ?? (input instanceof Request ? input.method : "GET");
    const body = await getObject(host[1]!, decodeURIComponent(url.pathname.slice(1)));
    if (body === null) return new Response("not found", { status: 404 });
    return new Response(method === "HEAD" ? null : body.slice(), { status: 200, headers: { "content-length": String(body.byteLength) } });
  });
  try {
    return await icebergRead({ tableUrl: tableUri });
  } finally {
    globalThis.fetch = realFetch;
  }
}
