// Table AD (src/core/meta/admission.ts): MAX_STREAMS refuses a new name at the door, never a repeat, never
// another command, and never an entry on replay.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  admitCommand,
  admitGrowth,
  admitTables,
  apply,
  emptyState,
  MAX_TABLE_DEFINITION_BYTES,
  replay,
  type Command,
  type CommandOf,
  type LogEntry,
  type MetaState,
} from "../../../src/core/meta/index.ts";
import { build, create, CTX, register } from "./fixtures.ts";

const LIMITS = { maxStreams: 2, maxMetaBytes: 1_000_000 };
const full = build([register("a"), create("one"), create("two")]);

describe("table AD: admission", () => {
  it("AD1: a create of a new name when MAX_STREAMS streams exist is limit_reached, naming the limit and its max", () => {
    expect(admitCommand(full, create("three"), LIMITS)).toEqual({
      code: "limit_reached",
      message: expect.any(String) as string,
      details: { limit: "MAX_STREAMS", max: 2 },
    });
  });

  it("AD2: a create of a registered name is admitted when full (a repeat answers 200, another config 409)", () => {
    expect(admitCommand(full, create("one"), LIMITS)).toBeNull();
    expect(admitCommand(full, create("two", { other: 1 }), LIMITS)).toBeNull();
  });

  it("AD3: other commands are admitted when full (a delete is how a slot frees)", () => {
    const commands: Command[] = [
      { type: "PlaceStream", streamId: "s1" },
      { type: "DeleteStream", streamId: "s1" },
      register("b"),
    ];
    for (const command of commands) expect(admitCommand(full, command, LIMITS)).toBeNull();
  });

  it("AD4: a create, table or partition that grows the metadata bytes past MAX_META_BYTES is limit_reached", () => {
    const table: Command = { type: "CreateTable", name: "t", definition: {}, buckets: [], streamConfig: {} } as unknown as Command;
    for (const command of [create("three"), table]) {
      expect(admitGrowth(command, 1_000_001, 10, LIMITS)).toEqual({
        code: "limit_reached",
        message: expect.any(String) as string,
        details: { limit: "MAX_META_BYTES", max: 1_000_000 },
      });
      expect(admitGrowth(command, 1_000_000, 10, LIMITS)).toBeNull();
    }
  });

  it("AD5: other changes, and changes that do not grow the bytes, are admitted over MAX_META_BYTES", () => {
    expect(admitGrowth({ type: "PlaceStream", streamId: "s1" }, 2_000_000, 10, LIMITS)).toBeNull();
    expect(admitGrowth({ type: "DeleteStream", streamId: "s1" }, 2_000_000, -10, LIMITS)).toBeNull();
    expect(admitGrowth(create("one"), 2_000_000, 0, LIMITS)).toBeNull();
  });

  it("AD6: a table whose definition brings all definitions past MAX_TABLE_DEFINITION_BYTES is limit_reached; other tables and commands are admitted", () => {
    const coordinator = { nodeId: "a", nodeEpoch: 1, coordinatorEpoch: 1 };
    // Definitions of about 15 KiB (under the 16 KiB a definition may be) until the bytes run out.
    const table = (i: number): CommandOf<"CreateTable"> => ({
      type: "CreateTable",
      name: `t${i}`,
      definition: { columns: ["id"], comment: "x".repeat(15_000) },
      leaders: ["a"],
      streamConfig: {},
      coordinator,
    });
    let state: MetaState = build([register("a"), { type: "AcquireLease", nodeId: "a", nodeEpoch: 1, ttlMs: 60_000 }]);
    let admitted = 0;
    for (let i = 0; ; i++) {
      const applied = apply(state, table(i), CTX);
      expect(applied.result.ok).toBe(true);
      const refused = admitTables(table(i), state, applied.state);
      if (refused !== null) {
        expect(refused).toEqual({ code: "limit_reached", message: expect.any(String) as string, details: { limit: "MAX_TABLE_DEFINITION_BYTES", max: MAX_TABLE_DEFINITION_BYTES } });
        break;
      }
      state = applied.state;
      admitted++;
    }
    expect(admitted).toBe(Math.floor(MAX_TABLE_DEFINITION_BYTES / JSON.stringify(table(0).definition).length));
    // A repeat of an existing table changes nothing and is admitted; so is any other command.
    const repeat = apply(state, table(0), CTX);
    expect(admitTables(table(0), state, repeat.state)).toBeNull();
    const created = apply(state, create("s"), CTX);
    expect(admitTables(create("s"), state, created.state)).toBeNull();
  });

  it("a malformed create is left to apply, which refuses it as invalid", () => {
    const malformed = { type: "CreateStream", name: 7, config: {} } as unknown as Command;
    expect(admitCommand(full, malformed, LIMITS)).toBeNull();
  });

  it("a delete frees a slot for a new name", () => {
    const { state } = apply(full, { type: "DeleteStream", streamId: "s1" }, CTX);
    expect(admitCommand(state, create("three"), LIMITS)).toBeNull();
  });

  it("replay accepts a log holding more streams than today's MAX_STREAMS (admission never judges old entries)", () => {
    const commands: Command[] = [register("a"), create("x"), create("y"), create("z")];
    const entries: LogEntry[] = commands.map((command, i) => ({ index: i + 1, command, nowMs: CTX.nowMs }));
    const state = replay(emptyState(), entries);
    expect(state.streams.size).toBe(3);
    expect(admitCommand(state, create("w"), LIMITS)).not.toBeNull();
  });

  it("admitting every create that passes never holds more than MAX_STREAMS streams", () => {
    const step = fc.oneof(
      fc.integer({ min: 0, max: 9 }).map((i): Command => create(`n${i}`)),
      fc.integer({ min: 1, max: 12 }).map((i): Command => ({ type: "DeleteStream", streamId: `s${i}` })),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(step, { maxLength: 40 }), (maxStreams, steps) => {
        let state = build([register("a")]);
        for (const command of steps) {
          if (admitCommand(state, command, { maxStreams, maxMetaBytes: 1_000_000 }) !== null) continue;
          state = apply(state, command, CTX).state;
          expect(state.streams.size).toBeLessThanOrEqual(maxStreams);
        }
      }),
    );
  });
});
