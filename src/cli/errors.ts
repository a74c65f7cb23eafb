// The CLI's failures and their exit codes: 2 for a usage error (nothing was sent), 1 for anything the
// server or the network said. Every failure becomes one message on stderr; nothing else sets the exit code.

/** The command line itself is wrong: nothing was sent. Exit 2. */
export class UsageError extends Error {
  /** The command whose help to point at, when known. */
  readonly command: string | undefined;
  constructor(message: string, command?: string) {
    super(message);
    this.name = "UsageError";
    this.command = command;
  }
}

/** The server answered with an error status (the body is mink's `{"error": {...}}` shape when it can be read). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryable: boolean;
  readonly details: unknown;
  /** Whether the request carried a token (decides what a 401 says). */
  readonly sentToken: boolean;
  constructor(init: { status: number; code: string; message: string; retryable: boolean; details?: unknown; sentToken: boolean }) {
    super(init.message);
    this.name = "ApiError";
    this.status = init.status;
    this.code = init.code;
    this.retryable = init.retryable;
    this.details = init.details;
    this.sentToken = init.sentToken;
  }
}

/** The server could not be reached, timed out, or answered something that is not mink's JSON. */
export class NetworkError extends Error {
  readonly url: string;
  constructor(url: string, message: string) {
    super(message);
    this.name = "NetworkError";
    this.url = url;
  }
}

/** A command ran and the outcome is a failure that is neither of the above (e.g. a drain cancelled meanwhile). */
export class CommandFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CommandFailed";
  }
}

export const EXIT_OK = 0;
const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

/** The exit code and the stderr text (ending in a newline) for any error thrown while running a command. */
export function describeFailure(error: unknown): { exitCode: number; message: string } {
  if (error instanceof UsageError) {
    const hint = error.command === undefined ? "mink --help" : `mink ${error.command} --help`;
    return { exitCode: EXIT_USAGE, message: `mink: ${error.message}\nRun '${hint}' for usage.\n` };
  }
  if (error instanceof ApiError) {
    if (error.status === 401) {
      const why = error.sentToken
        ? "the admin token was rejected (wrong token?)"
        : "no admin token given: pass --token or set MINK_ADMIN_TOKEN";
      return { exitCode: EXIT_FAILURE, message: `mink: unauthorized (HTTP 401): ${why}\n` };
    }
    const details = error.details === undefined ? "" : `\n  details: ${JSON.stringify(error.details)}`;
    const retry = error.retryable ? " (retryable: try again shortly)" : "";
    return { exitCode: EXIT_FAILURE, message: `mink: ${error.code} (HTTP ${error.status}): ${error.message}${retry}${details}\n` };
  }
  if (error instanceof NetworkError) {
    return { exitCode: EXIT_FAILURE, message: `mink: ${error.message}\n` };
  }
  if (error instanceof CommandFailed) {
    return { exitCode: EXIT_FAILURE, message: `mink: ${error.message}\n` };
  }
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { exitCode: EXIT_FAILURE, message: `mink: unexpected error: ${text}\n` };
}
