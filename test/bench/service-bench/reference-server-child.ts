// Child process entry: the reference server `@durable-streams/server`, file-backed, on a free 127.0.0.1
// port. It runs in a process of its own (like mink's workerd) so it does not share the benchmark client's
// event loop. Prints `READY <url>` once listening; stops on SIGTERM/SIGINT or when its stdin closes (the
// parent went away).
//
//   node --import tsx reference-server-child.ts <data-dir> <long-poll-timeout-ms>
import { DurableStreamTestServer } from "@durable-streams/server";

const [dataDir, longPollArg] = process.argv.slice(2);
if (dataDir === undefined || longPollArg === undefined) {
  console.error("usage: reference-server-child.ts <data-dir> <long-poll-timeout-ms>");
  process.exit(2);
}

const server = new DurableStreamTestServer({ host: "127.0.0.1", port: 0, dataDir, longPollTimeout: Number(longPollArg) });
const url = await server.start();
process.stdout.write(`READY ${url}\n`);

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  // Bounded: a server that does not close in 3 s exits anyway.
  setTimeout(() => process.exit(0), 3_000).unref();
  server.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.on("error", stop);
process.stdin.resume();
