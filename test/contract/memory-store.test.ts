import { MemoryStore } from "../../src/storage/memory-store.ts";
import { objectStoreContract } from "./object-store.contract.ts";

objectStoreContract("in-memory", () => new MemoryStore());
