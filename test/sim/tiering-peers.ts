// What a simulated node tiers with (docs/tiering.md): its tiering location, and its RPC to the other nodes,
// which a round uses to read the buckets they lead. Each call is a pending `net` operation: it reaches the
// node when the scheduler picks it, at the node's newest incarnation (now and then an older one still
// running, as client requests do: a Durable Object instance that has not noticed it was replaced); a node
// that is down refuses it and an incarnation that dies while answering resets it (workerd's RPC throws),
// and the caller hears nothing once it crashed itself. The calls go through the scheduler only: no clock,
// no randomness but the seed's.
import type { NodeRuntime } from "../../src/node/runtime/node-runtime.ts";
import type { NodeRuntimeDeps } from "../../src/node/runtime/wiring.ts";
import type { Incarnation, SimCluster } from "./cluster.ts";
import type { Prng } from "./prng.ts";
import type { IoQueue } from "./scheduler.ts";
import { never } from "./sim-meta.ts";
import type { Trace } from "./trace.ts";

/** The bucket every node tiers into (as the node tier's tests name it): icebird reads `s3://mink/...`. */
export const TIERING_BUCKET = "mink";

export interface PeerDeps {
  readonly io: IoQueue;
  readonly trace: Trace;
  readonly prng: Prng;
  /** Probability that a call goes to an older, still running incarnation of the node. */
  readonly zombieRouting: number;
}

export type SimTiering = NonNullable<NodeRuntimeDeps["tiering"]>;

/** The tiering deps of `caller`: its changelog reads of other nodes' buckets go through `peerCall`. */
export function simTiering(cluster: SimCluster, caller: Incarnation, deps: PeerDeps): SimTiering {
  return {
    storeUri: `s3://${TIERING_BUCKET}`,
    peers: (nodeId) => ({
      readBucketChangelog: (table, partition, bucket, fromPosition, maxBytes) =>
        peerCall(cluster, caller, nodeId, deps, `readBucketChangelog ${table} ${partition ?? "-"}/${bucket} from ${fromPosition}`, (runtime) =>
          runtime.readBucketChangelog(table, partition, bucket, fromPosition, maxBytes),
        ),
    }),
  };
}

function peerCall<T extends { readonly ok: boolean }>(
  cluster: SimCluster,
  caller: Incarnation,
  nodeId: string,
  deps: PeerDeps,
  what: string,
  invoke: (runtime: NodeRuntime) => Promise<T>,
): Promise<T> {
  if (caller.gate.crashed) return never<T>();
  return new Promise<T>((resolve, reject) => {
    const answer = (target: string, outcome: string, settle: () => void): void => {
      if (caller.gate.crashed) return;
      deps.trace.write(`  rpc ${caller.label} ${what} <- ${target} ${outcome}`);
      settle();
    };
    deps.io.add({
      kind: "net",
      owner: caller.label,
      label: `rpc ${what} -> ${nodeId}`,
      run: () => {
        const live = cluster.live(nodeId);
        if (live.length === 0) {
          answer(nodeId, "refused: node down", () => reject(new Error(`rpc to ${nodeId} refused: node down`)));
          return;
        }
        const target = live.length > 1 && deps.prng.chance(deps.zombieRouting) ? deps.prng.pick(live.slice(0, -1)) : live.at(-1)!;
        const fail = (reason: string): void => answer(target.label, reason, () => reject(new Error(reason)));
        target.inflight.add(fail);
        const call = async (): Promise<T> => {
          if (target.state === "starting" && !(await target.started)) throw new Error(`${target.label} failed to start`);
          if (target.runtime === null || target.ended) throw new Error(`rpc to ${target.label} reset`);
          return invoke(target.runtime);
        };
        call().then(
          (value) => {
            if (target.inflight.delete(fail)) answer(target.label, value.ok ? "ok" : "refused", () => resolve(value));
          },
          (error: unknown) => {
            if (target.inflight.delete(fail)) fail(error instanceof Error ? error.message : String(error));
          },
        );
      },
    });
  });
}
