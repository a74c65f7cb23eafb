// The benchmarks' settings from the environment (MINK_BENCH_*): a positive integer or the default.
export function positiveInt(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === "") return fallback;
  const value = Number.parseInt(text, 10);
  if (!Number.isInteger(value) || value < 1 || String(value) !== text.trim()) throw new Error(`${name}: not a positive integer: ${text}`);
  return value;
}
