// The commit a benchmark measured (`git describe --always --dirty`), printed with its figures.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export function gitCommit(): string {
  try {
    const cwd = fileURLToPath(new URL("../../", import.meta.url));
    return execFileSync("git", ["describe", "--always", "--dirty", "--abbrev=7"], { cwd, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}
