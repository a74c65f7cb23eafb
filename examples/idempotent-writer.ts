// An idempotent producer in plain fetch: every append carries Producer-Id, Producer-Epoch and
// Producer-Seq, so an append retried after its answer was lost is recognised and not written twice.
// The example loses an answer on purpose (it sends the same append twice, as a client does when the
// network dropped the first answer), then reads the stream back: each message is in it once.
//
//   npx tsx examples/idempotent-writer.ts [stream]      # default demo/orders
//
// MINK_URL and MINK_TOKEN as in producer.ts. Rules: docs/protocol-rules.md.

// #region readme:idempotent-writer
import process from "node:process";

const base = process.env.MINK_URL ?? "http://127.0.0.1:8787";
const auth: Record<string, string> = process.env.MINK_TOKEN ? { Authorization: `Bearer ${process.env.MINK_TOKEN}` } : {};
const name = process.argv[2] ?? "demo/orders";

const url = `${base}/v1/stream/${name}`;
const text = { ...auth, "Content-Type": "text/plain" };
// fetch follows the router's 307 to the owning node, body and all (like curl -L).
const created = await fetch(url, { method: "PUT", headers: text });
console.log(`PUT ${created.status}`); // 201, or 200 when the stream exists

// One producer id for this writer; a restarted writer bumps the epoch, and its sequence starts at 0 again.
const producer = { "Producer-Id": `writer-${process.pid}`, "Producer-Epoch": "0" };
async function append(seq: number, body: string): Promise<Response> {
  return fetch(url, { method: "POST", headers: { ...text, ...producer, "Producer-Seq": String(seq) }, body });
}

await append(0, "order 1;"); // suppose this answer was lost on the way back...
const retried = await append(0, "order 1;"); // ...so the writer sends the same append again
// 204: a duplicate, nothing appended; Producer-Seq is the highest sequence accepted so far (0).
console.log(`retry of seq 0: ${retried.status}, Producer-Seq ${retried.headers.get("Producer-Seq")}`);
console.log(`seq 1: ${(await append(1, "order 2;")).status}`); // 200: accepted

const read = await fetch(`${url}?offset=-1`, { headers: auth });
console.log(`read back: ${await read.text()}`); // order 1;order 2; (each once)
// #endregion readme:idempotent-writer
