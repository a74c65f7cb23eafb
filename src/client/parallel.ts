// Work over many buckets with a bound on how much is in flight at once: a write or lookup touching every
// bucket of a 1,024-bucket table must not open 1,024 requests together.

/** Most buckets one write or lookup talks to at the same time. */
export const MAX_PARALLEL_BUCKETS = 16;

/** `work` over every item, at most `limit` at a time; each outcome in item order, none thrown. */
export async function settleBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<PromiseSettledResult<R>[]> {
  const outcomes: PromiseSettledResult<R>[] = new Array<PromiseSettledResult<R>>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      try {
        outcomes[index] = { status: "fulfilled", value: await work(items[index]!) };
      } catch (reason) {
        outcomes[index] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return outcomes;
}

/** Like settleBounded, rejecting with the first failure (in item order) once all have settled. */
export async function allBounded<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const outcomes = await settleBounded(items, limit, work);
  const failure = outcomes.find((outcome) => outcome.status === "rejected");
  if (failure !== undefined) throw failure.reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<R>).value);
}
