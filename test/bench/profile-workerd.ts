// A CPU profile of mink's workerd isolate (the router, the nodes and the MetaLog run in it) through the
// DevTools inspector that `MINK_INSPECTOR_PORT` opens (docs/operations.md): records for a while, writes the
// .cpuprofile (open it in Chrome DevTools or speedscope), and prints where the time went: the busy share,
// the functions with the most self time, and the most inclusive ones.
//
//   MINK_INSPECTOR_PORT=9229 npm run dev            # then, under the load you want to look at:
//   npx tsx test/bench/profile-workerd.ts [--port 9229] [--seconds 15] [--out profile.cpuprofile] [--top 25]
//
// Function names and lines are the bundle's (`wrangler deploy --dry-run --outdir <dir>` builds the same one).
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { WebSocket } from "undici";

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "9229" },
    seconds: { type: "string", default: "15" },
    out: { type: "string", default: "workerd.cpuprofile" },
    top: { type: "string", default: "25" },
  },
});

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** The isolate that runs mink's code: the inspector's target whose title names the user worker. */
async function minkTarget(port: string): Promise<string> {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { title: string; webSocketDebuggerUrl: string }[];
  const target = targets.find((t) => t.title.includes("core:user:")) ?? targets[0];
  if (target === undefined) throw new Error(`no inspector target on port ${port}`);
  return target.webSocketDebuggerUrl;
}

async function record(url: string, seconds: number): Promise<Profile> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve);
    socket.addEventListener("error", reject);
  });
  let nextId = 0;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const send = (method: string, params: object = {}): Promise<unknown> =>
    new Promise((resolve) => {
      const id = ++nextId;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  await send("Profiler.enable");
  await send("Profiler.setSamplingInterval", { interval: 200 });
  await send("Profiler.start");
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const { profile } = (await send("Profiler.stop")) as { profile: Profile };
  socket.close();
  return profile;
}

const label = (node: ProfileNode): string =>
  `${node.callFrame.functionName === "" ? "(anonymous)" : node.callFrame.functionName} ${node.callFrame.url === "" ? "" : `${node.callFrame.url.split("/").pop() ?? ""}:${node.callFrame.lineNumber + 1}`}`.trim();

function summarize(profile: Profile, top: number): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const sampledUs = new Map<number, number>();
  profile.samples.forEach((id, i) => sampledUs.set(id, (sampledUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let totalUs = 0;
  for (const [id, us] of sampledUs) {
    totalUs += us;
    const node = byId.get(id);
    if (node === undefined) continue;
    self.set(label(node), (self.get(label(node)) ?? 0) + us);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = label(byId.get(at)!);
      if (!seen.has(name)) inclusive.set(name, (inclusive.get(name) ?? 0) + us);
      seen.add(name);
    }
  }
  const idleUs = self.get("(idle)") ?? 0;
  console.log(`${(totalUs / 1e6).toFixed(1)} s sampled, busy ${(100 * (1 - idleUs / totalUs)).toFixed(0)}%`);
  const print = (title: string, times: Map<string, number>): void => {
    console.log(`\n${title}`);
    const rows = [...times].filter(([name]) => !["(idle)", "(root)"].includes(name)).sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [name, us] of rows) console.log(`${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${name}`);
  };
  print("self time", self);
  print("inclusive time", inclusive);
}

const profile = await record(await minkTarget(values.port), Number(values.seconds));
writeFileSync(values.out, JSON.stringify(profile));
console.log(`profile written to ${values.out}`);
summarize(profile, Number(values.top));
