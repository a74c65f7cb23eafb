// A free TCP port on 127.0.0.1 for a service a test starts.
//
// Ports are taken below the kernel's ephemeral range (32768-60999 here): a port from `listen(0)` is an
// ephemeral one, and between choosing it and workerd binding it the kernel could hand it to any outgoing
// connection on the machine (the conformance runs open thousands), which failed a CI run with EADDRINUSE.
// Below the range only another test choosing the same random port could collide, and each candidate is
// bound once first to see that it is free.
import { createServer } from "node:net";

const PORT_RANGE = { from: 20_000, to: 32_000 };

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = PORT_RANGE.from + Math.floor(Math.random() * (PORT_RANGE.to - PORT_RANGE.from));
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${PORT_RANGE.from}-${PORT_RANGE.to} after 100 tries`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}
