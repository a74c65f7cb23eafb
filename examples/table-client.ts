// A primary-key table through mink/client: create it, write two ops (an upsert and a delete), read the
// rows back at the offsets the write returned (read your writes), then list a key prefix.
//
//   npx tsx examples/table-client.ts
//
// MINK_URL is mink's address (default http://127.0.0.1:8787, `npm run dev`); MINK_TOKEN, when set, is sent
// as the bearer token (AUTH_MODE=token: a token with the prefix __ds/table/members/ and read, append,
// create). In a clone, `npm install` builds mink/client (the `prepare` script). A second run writes the
// same rows again: the definition is the same, so the create answers as before.

// #region readme:client
import { TableClient } from "mink/client";

const client = new TableClient({ baseUrl: process.env.MINK_URL ?? "http://127.0.0.1:8787", token: process.env.MINK_TOKEN });
const members = client.table("members"); // not the curl example's `users`: another definition (409 definition_differs)
await members.create({
  columns: [{ name: "org", type: "string" }, { name: "id", type: "int" }, { name: "name", type: "string", nullable: true }],
  primaryKey: ["org", "id"],
  bucketKey: ["org"],
  buckets: 8,
});
const { minOffsets } = await members.write([{ upsert: { org: "acme", id: 1, name: "Ada" } }, { delete: { org: "acme", id: 2 } }]);
const [ada, gone] = await members.lookup([{ org: "acme", id: 1 }, { org: "acme", id: 2 }], { minOffsets }); // read your writes
console.log(JSON.stringify({ ada, gone })); // {"ada":{"org":"acme","id":1,"name":"Ada"},"gone":null}
const page = await members.prefix({ org: "acme" }, { limit: 100 }); // { rows, cursor }
console.log(JSON.stringify(page.rows)); // [{"org":"acme","id":1,"name":"Ada"}]
// #endregion readme:client
