// Tails a JSON stream live (server-sent events) with @durable-streams/client, printing each message as
// one line, and stops once it has printed at least a number of messages, or at a deadline, whichever
// comes first. Messages arrive in batches (what was there already, or appended together, comes as one)
// and only a whole batch has an offset after it, so the tail prints each batch whole: it may print a few
// more than `count`, and the next offset it prints is the one right after the last message printed, so a
// tail started from it goes on with the next message, none skipped or repeated.
//
//   npx tsx examples/live-tail.ts [stream] [count] [offset]    # default demo/events, 10, now
//
// `offset` is where to start: `now` (only what is appended from here on), `-1` (from the beginning) or an
// offset a previous read returned. Run examples/producer.ts in another shell to see messages arrive.
// TAIL_DEADLINE_MS bounds the wait (default 60000); MINK_URL and MINK_TOKEN as in producer.ts; a refused
// request prints one line and exits 1 as there.
import "./support/explain-failure.ts";

// #region readme:live-tail
import { stream } from "@durable-streams/client";

const base = process.env.MINK_URL ?? "http://127.0.0.1:8787";
const headers: Record<string, string> = process.env.MINK_TOKEN ? { Authorization: `Bearer ${process.env.MINK_TOKEN}` } : {};
const name = process.argv[2] ?? "demo/events";
const count = Number(process.argv[3] ?? 10);
const offset = process.argv[4] ?? "now";
const deadlineMs = Number(process.env.TAIL_DEADLINE_MS ?? 60_000);

const deadline = AbortSignal.timeout(deadlineMs);
const session = await stream({ url: `${base}/v1/stream/${name}`, offset, live: "sse", headers, signal: deadline });
let seen = 0;
let next = session.offset; // right after the last message printed
session.subscribeJson((batch) => {
  if (seen >= count) return; // cancelled already: print nothing more
  // A batch is printed whole: its offset is the only one known, and it follows its last message.
  for (const message of batch.items) console.log(JSON.stringify(message));
  seen += batch.items.length;
  next = batch.offset;
  if (seen >= count) session.cancel(); // enough: close the connection
});
await session.closed.catch(() => undefined); // cancelled, or the deadline aborted it
console.log(`${seen} messages, next offset ${next}`);
process.exitCode = seen >= count ? 0 : 1; // 1: the deadline came first
// #endregion readme:live-tail
