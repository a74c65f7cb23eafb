// The deadline wheel (src/waits/deadline-wheel.ts): any number of deadlines on one timer, none early, each
// at most one slot late; and KeyedWaiters on it holds 20,000 waiters with one timer (workerd's limit per
// Durable Object is 10,000 active timeouts).
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { DeadlineWheel } from "../../src/waits/deadline-wheel.ts";
import { KeyedWaiters } from "../../src/waits/keyed-waiters.ts";

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("DeadlineWheel", () => {
  test("20,000 deadlines hold one timer", () => {
    const wheel = new DeadlineWheel<number>(() => undefined, 50);
    for (let i = 0; i < 20_000; i++) wheel.add(i, 1_000 + (i % 30_000));
    expect(wheel.size).toBe(20_000);
    expect(vi.getTimerCount()).toBe(1);
  });

  test("each item is due at or after its deadline, at most one slot late, in deadline order", () => {
    const dueAt = new Map<string, number>();
    const wheel = new DeadlineWheel<string>((item) => dueAt.set(item, Date.now()), 50);
    const start = Date.now();
    wheel.add("late", 300);
    wheel.add("early", 120);
    wheel.add("zero", 0);
    vi.advanceTimersByTime(400);
    expect([...dueAt.keys()]).toEqual(["zero", "early", "late"]);
    for (const [item, deadline] of [["zero", 0], ["early", 120], ["late", 300]] as const) {
      const at = dueAt.get(item)! - start;
      expect(at, item).toBeGreaterThanOrEqual(deadline);
      expect(at, item).toBeLessThanOrEqual(deadline + 50);
    }
    expect(wheel.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  test("a removed item never comes due, and the last removal clears the timer", () => {
    const due: string[] = [];
    const wheel = new DeadlineWheel<string>((item) => due.push(item), 50);
    wheel.add("a", 100);
    wheel.add("b", 200);
    wheel.remove("a");
    vi.advanceTimersByTime(150);
    expect(due).toEqual([]);
    wheel.remove("b");
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(500);
    expect(due).toEqual([]);
  });

  test("an earlier deadline added later re-arms the one timer for itself", () => {
    const due: string[] = [];
    const wheel = new DeadlineWheel<string>((item) => due.push(item), 50);
    wheel.add("far", 10_000);
    wheel.add("near", 100);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(150);
    expect(due).toEqual(["near"]);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(10_000);
    expect(due).toEqual(["near", "far"]);
  });
});

describe("KeyedWaiters on the wheel", () => {
  test("20,000 waiters on 100 keys use one timer; a notify wakes its key's waiters, the timeout the rest", async () => {
    const waiters = new KeyedWaiters(20_000);
    const reasons = Array.from({ length: 20_000 }, (_, i) => waiters.wait(`k${i % 100}`, 30_000));
    expect(waiters.size).toBe(20_000);
    expect(vi.getTimerCount()).toBe(1);
    waiters.notify("k7");
    expect(waiters.size).toBe(19_800);
    vi.advanceTimersByTime(30_050);
    const all = await Promise.all(reasons);
    expect(all.filter((reason) => reason === "changed")).toHaveLength(200);
    expect(all.filter((reason) => reason === "timeout")).toHaveLength(19_800);
    expect(waiters.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
