// Creates a JSON stream and appends messages to it with @durable-streams/client, then reads it back.
//
//   npx tsx examples/producer.ts [stream] [count]      # default demo/events, 3 messages
//
// MINK_URL is mink's address (default http://127.0.0.1:8787, `npm run dev`); MINK_TOKEN, when set, is sent
// as the bearer token (AUTH_MODE=token: it needs create, append and read on the name). A second run
// appends more: a PUT with the same configuration answers 200 and leaves the stream as it is. A refused
// request (a token without create, say) prints one line with the status, mink's error and what to do, and
// exits 1 (support/explain-failure.ts).
import "./support/explain-failure.ts";

// #region readme:producer
import { DurableStream } from "@durable-streams/client";

const base = process.env.MINK_URL ?? "http://127.0.0.1:8787";
const headers: Record<string, string> = process.env.MINK_TOKEN ? { Authorization: `Bearer ${process.env.MINK_TOKEN}` } : {};
const name = process.argv[2] ?? "demo/events";
const count = Number(process.argv[3] ?? 3);

const url = `${base}/v1/stream/${name}`;
const stream = await DurableStream.create({ url, contentType: "application/json", headers });
for (let n = 1; n <= count; n++) {
  // Resolves once the message is durable in the object store.
  await stream.append(JSON.stringify({ type: "greeting", n, text: `hello ${n}` }));
}
const session = await stream.stream({ offset: "-1", live: false });
console.log(JSON.stringify(await session.json())); // [{"type":"greeting","n":1,"text":"hello 1"},...]
// #endregion readme:producer
