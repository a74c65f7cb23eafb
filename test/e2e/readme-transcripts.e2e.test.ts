// The README's first session, tables and access control, and the command blocks of docs/tables.md,
// docs/access.md and docs/deploy.md, run as a newcomer runs them: in page order, in one shell per
// session, against `npm run dev` started fresh (`open`: as it starts; `token`: `AUTH_MODE=token`). Each
// command's output must be what the page shows (test/support/transcripts.ts says how a page shows it).
//
// The one thing a newcomer does differently: the pages say http://127.0.0.1:8787, the test's `npm run dev`
// listens on a free port. Commands get that port in place of 8787, MINK_URL points the CLI at it, and the
// port in an answer reads as 8787 again before the comparison.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outputLines, outputMatches, readTranscripts, TRANSCRIBED_PAGES, type Transcript, type TranscriptCommand } from "../support/transcripts.ts";
import { REPO_ROOT, startDev, type DevProcess } from "./dev-process.ts";
import { signalGroup } from "../support/process-groups.ts";

/** One command's deadline: the CLI's first start through tsx on 2 busy cores is a few seconds. */
const COMMAND_TIMEOUT_MS = 60_000;
const PAGE_PORT = "8787";

/** A bash that keeps its variables between commands, as a newcomer's terminal does. */
class Shell {
  private readonly bash: ChildProcessWithoutNullStreams;
  private buffer = "";
  private waiting: ((text: string) => void) | null = null;
  private readonly sentinel = `__transcript_${process.pid}_${Date.now()}__`;

  constructor(env: NodeJS.ProcessEnv) {
    this.bash = spawn("bash", ["--noprofile", "--norc"], { cwd: REPO_ROOT, env, detached: true });
    this.bash.stdout.on("data", (chunk: Buffer) => this.take(chunk.toString()));
    this.bash.stderr.on("data", (chunk: Buffer) => this.take(chunk.toString()));
  }

  private take(text: string): void {
    this.buffer += text;
    if (this.waiting !== null && this.buffer.includes(`${this.sentinel} `) && /\n$/.test(this.buffer)) this.waiting(this.buffer);
  }

  /** Runs one command (stdin from /dev/null, stderr into stdout); its output and exit status. */
  async run(command: string): Promise<{ output: string; exitCode: number }> {
    this.buffer = "";
    const done = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer within ${COMMAND_TIMEOUT_MS} ms; so far:\n${this.buffer}`)), COMMAND_TIMEOUT_MS);
      this.waiting = (text) => {
        clearTimeout(timer);
        resolve(text);
      };
    });
    this.bash.stdin.write(`{ ${command}\n} </dev/null 2>&1; printf '\\n${this.sentinel} %d\\n' $?\n`);
    const text = await done;
    this.waiting = null;
    const at = text.lastIndexOf(`\n${this.sentinel} `);
    return { output: text.slice(0, at), exitCode: Number(text.slice(at + this.sentinel.length + 2).trim()) };
  }

  stop(): void {
    if (this.bash.pid !== undefined) signalGroup(this.bash.pid, "SIGKILL");
  }
}

const transcripts: Transcript[] = TRANSCRIBED_PAGES.flatMap((page) => readTranscripts(page, readFileSync(join(REPO_ROOT, page), "utf8")).transcripts);

function sessionOf(session: string, env: Readonly<Record<string, string>>): void {
  describe(`the pages' ${session} transcripts against npm run dev${env["AUTH_MODE"] === undefined ? "" : ` with AUTH_MODE=${env["AUTH_MODE"]}`}`, () => {
    let dev: DevProcess;
    let shell: Shell;
    let port: string;
    beforeAll(async () => {
      dev = await startDev({ env });
      port = new URL(dev.baseUrl).port;
      const shellEnv: NodeJS.ProcessEnv = { ...process.env, MINK_URL: dev.baseUrl };
      for (const name of ["MINK_TOKEN", "MINK_ADMIN_TOKEN", "TOKEN", "B"]) delete shellEnv[name];
      shell = new Shell(shellEnv);
    });
    afterAll(async () => {
      shell?.stop();
      await dev?.stop();
    });

    const commands: [string, TranscriptCommand][] = transcripts
      .filter((transcript) => transcript.session === session)
      .flatMap((transcript) => transcript.commands.map((command) => [`${transcript.page}:${command.line} $ ${command.command.split("\n")[0]}`, command] as [string, TranscriptCommand]));

    it.each(commands)("%s", async (_label, command) => {
      const local = command.command.replaceAll(`127.0.0.1:${PAGE_PORT}`, `127.0.0.1:${port}`).replaceAll(`localhost:${PAGE_PORT}`, `localhost:${port}`);
      const { output, exitCode } = await shell.run(local);
      const actual = outputLines(output.replaceAll(`127.0.0.1:${port}`, `127.0.0.1:${PAGE_PORT}`).replaceAll(`localhost:${port}`, `localhost:${PAGE_PORT}`));
      const shown = `the page shows:\n${[...command.expected, ...(command.exitCode === 0 ? [] : [`[exit ${command.exitCode}]`])].join("\n")}\n--- it printed (exit ${exitCode}):\n${actual.join("\n")}`;
      expect(outputMatches(command.expected, actual) && exitCode === command.exitCode, shown).toBe(true);
    });
  });
}

// Sequential: each session runs its commands in page order, one after another.
describe.sequential("the newcomer's pages, run", () => {
  sessionOf("open", {});
  sessionOf("token", { AUTH_MODE: "token" });
});
