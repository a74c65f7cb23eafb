// The MetaLog's group commit (src/metadata/group-commit.ts): proposals that arrive while a window is open
// are applied at its end, together and in arrival order; a lone proposal is applied at once; the waiting
// queue is bounded. The scheduler is a list the test runs by hand, so each window's end is explicit.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { GroupCommit } from "../../src/metadata/group-commit.ts";

function harness(maxWaiting = 100) {
  const applied: number[] = [];
  const turns: (() => void)[] = [];
  const group = new GroupCommit<number, string>(
    (input) => {
      if (input < 0) throw new Error(`refused ${input}`);
      applied.push(input);
      return `applied ${input}`;
    },
    { maxWaiting, later: (task) => void turns.push(task), whenFull: (waiting) => `full at ${waiting}` },
  );
  /** Runs the next scheduled turn; false when none is scheduled. */
  const turn = (): boolean => {
    const task = turns.shift();
    task?.();
    return task !== undefined;
  };
  /** The answer as a promise either way (applied at once, or at a window's end). */
  const submit = (input: number): Promise<string> => Promise.resolve(group.submit(input));
  return { group, applied, turns, turn, submit };
}

describe("group commit", () => {
  it("applies a proposal that finds no window open at once, and opens a window", () => {
    const { group, applied, turns } = harness();
    expect(group.submit(1)).toBe("applied 1");
    expect(applied).toEqual([1]);
    expect(turns).toHaveLength(1);
  });

  it("applies the proposals that arrive in an open window at its end, together, in arrival order", async () => {
    const { group, applied, turn, submit } = harness();
    void submit(1);
    const waiting = [submit(2), submit(3), submit(4)];
    expect(applied).toEqual([1]);
    turn();
    expect(applied).toEqual([1, 2, 3, 4]);
    expect(await Promise.all(waiting)).toEqual(["applied 2", "applied 3", "applied 4"]);
    expect(group.stats).toEqual({ immediate: 1, grouped: 3, groups: 1, refused: 0 });
  });

  it("keeps the window open one more turn after a group, and closes it at a turn that finds nothing waiting", () => {
    const { group, turn, turns, submit } = harness();
    void submit(1);
    void submit(2);
    turn(); // applies 2, reopens
    expect(turns).toHaveLength(1);
    void submit(3); // waits: the window is still open
    turn(); // applies 3, reopens
    turn(); // nothing waited: closes
    expect(turns).toHaveLength(0);
    expect(group.submit(4)).toBe("applied 4");
  });

  it("answers whenFull at once when maxWaiting proposals wait, and applies none of the refused", async () => {
    const { group, applied, turn, submit } = harness(2);
    void submit(1);
    const waiting = [submit(2), submit(3)];
    expect(group.submit(4)).toBe("full at 2");
    turn();
    await Promise.all(waiting);
    expect(applied).toEqual([1, 2, 3]);
    expect(group.stats.refused).toBe(1);
  });

  it("a proposal that throws rejects its own answer only: the rest of its group is applied", async () => {
    const { applied, turn, submit } = harness();
    void submit(1);
    const answers = [submit(2), submit(-1), submit(3)];
    turn();
    expect(applied).toEqual([1, 2, 3]);
    await expect(answers[1]).rejects.toThrow("refused -1");
    expect(await answers[0]).toBe("applied 2");
    expect(await answers[2]).toBe("applied 3");
  });

  it("applies every proposal exactly once and in arrival order, however arrivals and turns interleave", async () => {
    // A script: true submits the next input, false runs a turn. Whatever the script, the inputs are applied
    // in the order they were submitted, each once, and each answer is its own input's.
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { maxLength: 60 }), async (script) => {
        const { applied, turn, submit } = harness();
        const answers: Promise<string>[] = [];
        let next = 0;
        for (const submitNext of script) {
          if (submitNext) answers.push(submit(next++));
          else turn();
        }
        while (turn()) {
          /* drain the windows */
        }
        expect(applied).toEqual([...Array(next).keys()]);
        expect(await Promise.all(answers)).toEqual([...Array(next).keys()].map((i) => `applied ${i}`));
      }),
    );
  });
});
