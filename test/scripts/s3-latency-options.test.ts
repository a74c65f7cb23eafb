// The embedded S3 endpoint's latency settings (scripts/embedded-s3.ts): MINK_S3_LATENCY_MS and
// MINK_S3_LATENCY_JITTER_MS for `npm run dev` and `npm run dev:wrangler`, --latency-ms and --jitter-ms for
// the endpoint's own command line. A value that is not a whole number of milliseconds from 0 to 60,000 is
// refused in one line that names the variable or the option, before anything starts; so is a latency for
// `npm run dev` whose Worker is pointed at another store (S3_ENDPOINT). The refusals are run for real (npm
// -> tsx), as a newcomer runs them.
import { describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.ts";
import { runInRepo } from "../support/run-in-repo.ts";
import { checkLatencyMs, cliLatency, describeS3Latency, latencyMsFromText, s3LatencyFromEnv } from "../../scripts/embedded-s3.ts";

/** Each refusal comes before any build: a few seconds for npm and tsx to start; a run that did start is killed. */
const RUN_TIMEOUT_MS = 45_000;

describe("latency settings, checked", () => {
  it("takes whole milliseconds from 0 to 60,000; absent or empty is 0", () => {
    expect(latencyMsFromText("MINK_S3_LATENCY_MS", undefined)).toBe(0);
    expect(latencyMsFromText("MINK_S3_LATENCY_MS", "")).toBe(0);
    expect(latencyMsFromText("MINK_S3_LATENCY_MS", "0")).toBe(0);
    expect(latencyMsFromText("MINK_S3_LATENCY_MS", "30")).toBe(30);
    expect(latencyMsFromText("MINK_S3_LATENCY_MS", "60000")).toBe(60_000);
    expect(checkLatencyMs("latencyMs", 0)).toBe(0);
    expect(checkLatencyMs("latencyMs", 60_000)).toBe(60_000);
  });

  it.each(["-5", "1.5", "30ms", " 30", "1e3", "0x10", "+5", "60001", "99999999999999999999"])(
    "refuses %j, naming the variable and saying what it takes",
    (text) => {
      expect(() => latencyMsFromText("MINK_S3_LATENCY_MS", text)).toThrow(
        `MINK_S3_LATENCY_MS must be a whole number of milliseconds from 0 to 60000 (got '${text}')`,
      );
    },
  );

  it.each([-1, 0.5, 60_001, Number.NaN, Number.POSITIVE_INFINITY])("refuses the number %s, naming the option", (value) => {
    expect(() => checkLatencyMs("s3LatencyMs", value)).toThrow(`s3LatencyMs must be a whole number of milliseconds from 0 to 60000 (got ${value})`);
  });

  it("reads MINK_S3_LATENCY_MS and MINK_S3_LATENCY_JITTER_MS from an environment, naming the bad one", () => {
    expect(s3LatencyFromEnv({})).toEqual({ latencyMs: 0, jitterMs: 0 });
    expect(s3LatencyFromEnv({ MINK_S3_LATENCY_MS: "30", MINK_S3_LATENCY_JITTER_MS: "5" })).toEqual({ latencyMs: 30, jitterMs: 5 });
    expect(() => s3LatencyFromEnv({ MINK_S3_LATENCY_MS: "30", MINK_S3_LATENCY_JITTER_MS: "-5" })).toThrow(/^MINK_S3_LATENCY_JITTER_MS must be/);
  });

  it("reads --latency-ms and --jitter-ms, naming the bad one", () => {
    expect(cliLatency({})).toEqual({ latencyMs: 0, jitterMs: 0 });
    expect(cliLatency({ "latency-ms": "30", "jitter-ms": "5" })).toEqual({ latencyMs: 30, jitterMs: 5 });
    expect(() => cliLatency({ "latency-ms": "fast" })).toThrow(/^--latency-ms must be a whole number of milliseconds from 0 to 60000 \(got 'fast'\)$/);
    expect(() => cliLatency({ "jitter-ms": "70000" })).toThrow(/^--jitter-ms must be/);
  });

  it("says the delay in one line when there is one, and nothing when there is none", () => {
    expect(describeS3Latency({ latencyMs: 0, jitterMs: 0 })).toBeUndefined();
    expect(describeS3Latency({ latencyMs: 30, jitterMs: 0 })).toBe("embedded S3: every request delayed 30 ms");
    expect(describeS3Latency({ latencyMs: 30, jitterMs: 5 })).toBe("embedded S3: every request delayed 30 ms (+0-5 ms jitter)");
  });
});

/** Runs `command` in the repository with `env` on top of this process's (S3 latency and endpoint unset first). */
async function run(command: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const base: Record<string, string | undefined> = { ...process.env, PORT: String(await freePort()), MINK_S3_PORT: String(await freePort()) };
  for (const name of ["MINK_S3_LATENCY_MS", "MINK_S3_LATENCY_JITTER_MS", "S3_ENDPOINT"]) delete base[name];
  return runInRepo(command, { ...base, ...env }, { label: "s3-latency", timeoutMs: RUN_TIMEOUT_MS });
}

describe("bad latency settings refused before anything starts", () => {
  const options = { timeout: RUN_TIMEOUT_MS + 5_000 };

  it("npm run dev with MINK_S3_LATENCY_MS=30ms: one line naming the variable, exit 1", options, async () => {
    const result = await run(["npm", "run", "--silent", "dev"], { MINK_S3_LATENCY_MS: "30ms" });
    expect(result.code, result.output).toBe(1);
    expect(result.output.trim()).toBe("npm run dev: MINK_S3_LATENCY_MS must be a whole number of milliseconds from 0 to 60000 (got '30ms')");
  });

  it("npm run dev with a latency and S3_ENDPOINT on another store: one line saying the latency delays the embedded endpoint only, exit 1", options, async () => {
    const result = await run(["npm", "run", "--silent", "dev"], { MINK_S3_LATENCY_MS: "30", S3_ENDPOINT: "https://s3.example.com" });
    expect(result.code, result.output).toBe(1);
    expect(result.output.trim()).toBe(
      "npm run dev: MINK_S3_LATENCY_MS and MINK_S3_LATENCY_JITTER_MS delay the embedded S3 endpoint only, but S3_ENDPOINT=https://s3.example.com points the Worker at another store; unset one or the other",
    );
  });

  it("npm run dev:wrangler with MINK_S3_LATENCY_JITTER_MS=-1: one line naming the variable, exit 1", options, async () => {
    const result = await run(["npm", "run", "--silent", "dev:wrangler"], { MINK_S3_LATENCY_JITTER_MS: "-1" });
    expect(result.code, result.output).toBe(1);
    expect(result.output.trim()).toBe("npm run dev:wrangler: MINK_S3_LATENCY_JITTER_MS must be a whole number of milliseconds from 0 to 60000 (got '-1')");
  });

  it("scripts/embedded-s3.ts --latency-ms 61000: one line naming the option, exit 1", options, async () => {
    const result = await run(["npx", "tsx", "scripts/embedded-s3.ts", "--port", "0", "--latency-ms", "61000"], {});
    expect(result.code, result.output).toBe(1);
    expect(result.output.trim()).toBe("--latency-ms must be a whole number of milliseconds from 0 to 60000 (got '61000')");
  });
});
