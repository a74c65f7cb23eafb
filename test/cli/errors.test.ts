// Every failure maps to one stderr message and an exit code: 2 for usage, 1 for the server or network,
// with the server's code and message, and a 401 that says whether the token was missing or wrong.
import { describe, expect, it } from "vitest";
import { ApiError, CommandFailed, describeFailure, NetworkError, UsageError } from "../../src/cli/errors.ts";

describe("describeFailure", () => {
  it("exits 2 on a usage error and points at the command's help", () => {
    expect(describeFailure(new UsageError("missing <n>", "slots"))).toEqual({
      exitCode: 2,
      message: "mink: missing <n>\nRun 'mink slots --help' for usage.\n",
    });
    expect(describeFailure(new UsageError("no command given")).message).toContain("Run 'mink --help'");
  });

  it("exits 1 on a server error with its code, status and message", () => {
    const failure = describeFailure(new ApiError({ status: 404, code: "not_found", message: "no stream demo/x", retryable: false, sentToken: true }));
    expect(failure).toEqual({ exitCode: 1, message: "mink: not_found (HTTP 404): no stream demo/x\n" });
  });

  it("says when a server error is retryable and shows its details", () => {
    const failure = describeFailure(
      new ApiError({ status: 503, code: "unavailable", message: "meta log busy", retryable: true, details: { node: "node-1" }, sentToken: true }),
    );
    expect(failure.exitCode).toBe(1);
    expect(failure.message).toBe('mink: unavailable (HTTP 503): meta log busy (retryable: try again shortly)\n  details: {"node":"node-1"}\n');
  });

  it("says the token is missing on a 401 to a request without one", () => {
    const failure = describeFailure(new ApiError({ status: 401, code: "unauthorized", message: "x", retryable: false, sentToken: false }));
    expect(failure.exitCode).toBe(1);
    expect(failure.message).toMatch(/no admin token given: pass --token or set MINK_ADMIN_TOKEN/);
  });

  it("says the token is wrong on a 401 to a request with one", () => {
    const failure = describeFailure(new ApiError({ status: 401, code: "unauthorized", message: "x", retryable: false, sentToken: true }));
    expect(failure.message).toMatch(/admin token was rejected/);
  });

  it("exits 1 on a network failure and a failed command", () => {
    expect(describeFailure(new NetworkError("http://x/admin/nodes", "cannot reach http://x"))).toEqual({ exitCode: 1, message: "mink: cannot reach http://x\n" });
    expect(describeFailure(new CommandFailed("node-1 is no longer draining"))).toEqual({ exitCode: 1, message: "mink: node-1 is no longer draining\n" });
  });

  it("exits 1 on anything unexpected, with its text", () => {
    const failure = describeFailure(new TypeError("boom"));
    expect(failure.exitCode).toBe(1);
    expect(failure.message).toMatch(/^mink: unexpected error: TypeError: boom/);
  });
});
