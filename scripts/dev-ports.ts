// The ports `npm run dev` listens on, checked before anything starts: a port another program holds (MinIO
// on 9000 is the usual one, another `npm run dev` on 8787 the next) is said in one line that names the
// variable that sets it and how to pick another, instead of Miniflare's ERR_ADDRESS_IN_USE stack with a
// `--port` hint that npm run dev does not take. The same words for the error Miniflare throws if another
// program takes the port between the check and the start.
import { createServer } from "node:net";

export interface DevPort {
  /** The environment variable that sets it. */
  readonly variable: "PORT" | "MINK_S3_PORT";
  readonly port: number;
  /** What listens there. */
  readonly what: string;
}

/** The line that says a port is taken, which variable sets it and how to pick another. */
export function portTakenMessage(taken: DevPort): string {
  const usual = taken.variable === "MINK_S3_PORT" ? " (MinIO listens on 9000 by default)" : "";
  return (
    `npm run dev: port ${taken.port} is already in use by another program${usual}; it is ${taken.variable}, ${taken.what}. ` +
    `Pick another: ${taken.variable}=${taken.port + 1} npm run dev`
  );
}

/** The line for a variable that does not hold a port number. */
export function badPortMessage(variable: DevPort["variable"], text: string): string {
  return `npm run dev: ${variable} must be a port number from 1 to 65535 (got '${text}')`;
}

/** A port number from the environment, or null when the value is not one. */
export function portFromEnv(text: string | undefined, fallback: number): number | null {
  if (text === undefined || text === "") return fallback;
  const port = Number(text);
  return Number.isInteger(port) && port > 0 && port <= 65_535 ? port : null;
}

/** Whether an error is a listen that failed because the address is taken (Node's or Miniflare's). */
export function isAddressInUse(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === "EADDRINUSE" || code === "ERR_ADDRESS_IN_USE" || (typeof message === "string" && /address already in use|EADDRINUSE/i.test(message));
}

/** Whether something already listens on 127.0.0.1:`port` (a listen there fails with EADDRINUSE). */
async function isTaken(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve, reject) => {
    server.once("error", (error) => (isAddressInUse(error) ? resolve(true) : reject(error)));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/** The ports among `ports` that another program holds now. */
export async function takenPorts(ports: readonly DevPort[]): Promise<DevPort[]> {
  const taken: DevPort[] = [];
  for (const port of ports) if (await isTaken(port.port)) taken.push(port);
  return taken;
}
