// The tablet-storage contract over the in-memory tablets the node test tier and the simulation use: once
// with the default chunk size, once with chunks of 4 keys so every case also splits and empties chunks.
import { MemoryTabletStorage } from "../support/memory-tablet-storage.ts";
import { tabletStorageContract } from "./tablet-storage.contract.ts";

tabletStorageContract("in-memory", async (body) => {
  body(new MemoryTabletStorage());
});

tabletStorageContract("in-memory, chunks of 4 keys", async (body) => {
  body(new MemoryTabletStorage({ chunkMaxKeys: 4 }));
});
