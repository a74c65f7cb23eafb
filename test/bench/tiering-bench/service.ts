// bench:tiering, end to end (docs/tiering.md): a fresh three-node mink under the local runtime (the embedded
// S3 endpoint), R rows written through the router (POST /v1/table/<t>/write, 2,500 rows a write, 4 in
// flight), then POST /admin/tables/<t>/tier until a round finds nothing new: the coordinator reads every
// bucket at its leader, writes Parquet and commits, in workerd. Rows per second of tiering, wall clock.
import { startService } from "../../e2e/service.ts";
import { adminHeaders, allLive, expectStatus } from "../../e2e/tables-clients.ts";
import { benchDefinition, benchRow, type TableKind } from "./writer.ts";

const WRITE_ROWS = 2_500;
const WRITES_IN_FLIGHT = 4;

export interface ServiceResult {
  readonly rows: number;
  readonly rounds: number;
  readonly seconds: number;
}

export async function runService(kind: TableKind, rows: number): Promise<ServiceResult> {
  const service = await startService({ nodes: 3 });
  try {
    await allLive(service, 3);
    await expectStatus(service, 201, "PUT", "/v1/table/bench", benchDefinition(kind));
    const op = kind === "log" ? "append" : "upsert";
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITES_IN_FLIGHT }, async () => {
        while (next < rows) {
          const from = next;
          next = Math.min(rows, next + WRITE_ROWS);
          const ops = [];
          for (let id = from; id < next; id++) ops.push({ [op]: benchRow(id) });
          await expectStatus(service, 200, "POST", "/v1/table/bench/write", { ops }, undefined, 60_000);
        }
      }),
    );
    const started = performance.now();
    let rounds = 0;
    for (;;) {
      const answer = await expectStatus(service, 200, "POST", "/admin/tables/bench/tier", undefined, adminHeaders(service), 300_000);
      const report = answer.body as { committed: boolean; rows: number };
      if (!report.committed) break;
      rounds++;
    }
    return { rows, rounds, seconds: (performance.now() - started) / 1000 };
  } finally {
    await service.stop();
  }
}
