// An idempotent producer in plain fetch: every append carries Producer-Id, Producer-Epoch and
// Producer-Seq, so an append retried after its answer was lost is recognised and not written twice.
// The example loses an answer on purpose (it sends the same append twice, as a client does when the
// network dropped the first answer), then reads back what this run appended: each message is in it once.
//
//   npx tsx examples/idempotent-writer.ts [stream]      # default demo/orders
//
// Each run is a new writer (a producer id of its own) on the same stream: a second run appends its two
// orders after the first run's, and reads back from where the stream ended when it started, so it prints
// its own two orders (`GET ?offset=-1` shows every run's). MINK_URL and MINK_TOKEN as in producer.ts (the
// token needs create, append and read); a refused request prints one line and exits 1 as there. Rules:
// docs/protocol-rules.md.
import { expectOk } from "./support/explain-failure.ts";

// #region readme:idempotent-writer
import process from "node:process";

const base = process.env.MINK_URL ?? "http://127.0.0.1:8787";
const auth: Record<string, string> = process.env.MINK_TOKEN ? { Authorization: `Bearer ${process.env.MINK_TOKEN}` } : {};
const name = process.argv[2] ?? "demo/orders";

const url = `${base}/v1/stream/${name}`;
const text = { ...auth, "Content-Type": "text/plain" };
// fetch follows the router's 307 to the owning node, body and all (like curl -L).
const created = await expectOk("PUT (create the stream)", await fetch(url, { method: "PUT", headers: text }));
console.log(`PUT ${created.status}`); // 201, or 200 when the stream exists (an earlier run made it)
// Where this run's messages will start: the stream's tail now.
const tail = await expectOk("HEAD (the stream's tail)", await fetch(url, { method: "HEAD", headers: auth }));
const from = tail.headers.get("Stream-Next-Offset") ?? "-1";

// One producer id for this writer; a restarted writer bumps the epoch, and its sequence starts at 0 again.
const producer = { "Producer-Id": `writer-${process.pid}-${Date.now()}`, "Producer-Epoch": "0" };
async function append(seq: number, body: string): Promise<Response> {
  const answer = await fetch(url, { method: "POST", headers: { ...text, ...producer, "Producer-Seq": String(seq) }, body });
  return expectOk(`POST (append seq ${seq})`, answer);
}

await append(0, "order 1;"); // suppose this answer was lost on the way back...
const retried = await append(0, "order 1;"); // ...so the writer sends the same append again
// 204: a duplicate, nothing appended; Producer-Seq is the highest sequence accepted so far (0).
console.log(`retry of seq 0: ${retried.status}, Producer-Seq ${retried.headers.get("Producer-Seq")}`);
console.log(`seq 1: ${(await append(1, "order 2;")).status}`); // 200: accepted

const read = await expectOk("GET (read back)", await fetch(`${url}?offset=${encodeURIComponent(from)}`, { headers: auth }));
console.log(`read back: ${await read.text()}`); // order 1;order 2; (this run's, each once)
// #endregion readme:idempotent-writer
