// What a command may touch: two output streams, the environment, fetch and a sleep. main() gets them
// injected, so tests run the CLI in-process; processIo() is the real process.

interface Output {
  write(text: string): unknown;
  /** True on a terminal: the drain shows a progress bar. */
  readonly isTTY?: boolean;
}

export interface CliIo {
  readonly stdout: Output;
  readonly stderr: Output;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** Waits between drain and rebalance rounds; defaults to setTimeout. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Drain and rebalance poll interval (default 1000 ms). */
  readonly pollIntervalMs?: number;
  /** The clock of the rebalance's no-progress deadline; defaults to Date.now. */
  readonly now?: () => number;
  /** How long a rebalance waits without any change before it gives up (default 5 minutes). */
  readonly stallTimeoutMs?: number;
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
