// The stream-table contract over the tables the node tier can run: the in-memory table of the pure core,
// and the stored table (an overlay over rows) over rows in a Map, settled by writing its overlay.
import { MemoryStreamTable } from "../../src/core/meta/index.ts";
import { StoredStreamTable } from "../../src/metadata/stored-stream-table.ts";
import { MemoryStreamRows } from "../support/memory-stream-rows.ts";
import { streamTableContract } from "./stream-table.contract.ts";

streamTableContract("in memory (the pure core's)", async (body) => {
  body({ empty: () => MemoryStreamTable.empty(), settle: (table) => table });
});

streamTableContract("stored, over rows in a Map", async (body) => {
  body({
    empty: () => new StoredStreamTable(new MemoryStreamRows(), 0),
    settle: (table) => (table as StoredStreamTable).persist(),
  });
});
