// A TypeScript file that no tsconfig includes, saved at the top of the repository as a newcomer saves the
// README's client snippet, is linted with types (tsconfig.stray.json, last in eslint.config.js) instead of
// failing `npm test` with a "parserOptions.project" parsing error. The proof that types were used: a
// floating promise in it is reported, which only typed linting can see. Here rather than in `npm test`:
// the stray program spans the repository (tens of seconds of CPU).
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./dev-process.ts";

const LINT_TIMEOUT_MS = 180_000;

describe("ESLint on a stray TypeScript file", () => {
  it("lints the README's producer, saved at the top of the repository, with types", { timeout: LINT_TIMEOUT_MS }, async () => {
    const snippet = readFileSync(join(REPO_ROOT, "examples", "producer.ts"), "utf8");
    const file = join(REPO_ROOT, `stray-lint-${process.pid}.ts`);
    writeFileSync(file, `${snippet}\nfetch(url);\n`);
    try {
      const [result] = await new ESLint({ cwd: REPO_ROOT }).lintFiles([file]);
      const messages = result!.messages.map((message) => `${message.line}: ${message.ruleId ?? "fatal"} ${message.message}`);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain("@typescript-eslint/no-floating-promises");
    } finally {
      rmSync(file, { force: true });
    }
  });
});
