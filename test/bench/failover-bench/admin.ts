// The admin API as the failover benchmark uses it (the same calls as test/e2e/failover.e2e.test.ts): the
// nodes' view, a stream's owner, fault injection (POST /admin/faults, FAULTS_ENABLED=1), and the waits for
// three live nodes and for a healed node to be back at a new epoch.
import type { Service } from "../../e2e/service.ts";
import { eventually, NotYet } from "../../support/eventually.ts";

export interface AdminNode {
  id: string;
  epoch: number;
  live: boolean;
  coordinator: boolean;
  declaredDead: { epoch: number } | null;
  streams: number;
}

export interface AdminNodes {
  coordinator: { holder: string; coordinatorEpoch: number; expired: boolean } | null;
  nodes: AdminNode[];
}

const ADMIN_TIMEOUT_MS = 15_000;

export class Admin {
  constructor(private readonly service: Service) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.service.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.service.adminToken}`, "content-type": "application/json" },
      signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return JSON.parse(text) as T;
  }

  nodes(): Promise<AdminNodes> {
    return this.call<AdminNodes>("GET", "/admin/nodes");
  }

  async ownerOf(name: string): Promise<string> {
    return (await this.call<{ owner: string }>("GET", `/admin/streams/${name}`)).owner;
  }

  fault(node: string, mode: "crash" | "heal"): Promise<unknown> {
    return this.call("POST", "/admin/faults", { node, mode });
  }

  /** Three live nodes, none declared dead, and a coordinator whose lease holds. */
  allLive(count: number, wakeName: string, timeoutMs: number): Promise<AdminNodes> {
    return eventually(
      async () => {
        // Any stream request makes the router start every node (a node registers when it starts).
        await (await fetch(`${this.service.baseUrl}/v1/stream/${wakeName}?offset=-1`, { signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) })).arrayBuffer();
        const view = await this.nodes();
        if (view.nodes.length !== count || !view.nodes.every((node) => node.live && node.declaredDead === null) || view.coordinator?.expired !== false) {
          throw new NotYet(JSON.stringify(view));
        }
        return view;
      },
      { timeoutMs, what: `${count} live nodes and a coordinator` },
    );
  }

  /** After a heal: `node` live again at an epoch past the one its death raised (`epoch` + 1), not declared dead. */
  healed(node: string, epoch: number, someStream: string, timeoutMs: number): Promise<AdminNode> {
    return eventually(
      async () => {
        // A request to its address wakes it (the heal also sets an alarm).
        await fetch(`${this.service.baseUrl}/n/${node}/v1/stream/${someStream}?offset=-1`, { redirect: "manual", signal: AbortSignal.timeout(ADMIN_TIMEOUT_MS) })
          .then((response) => response.arrayBuffer())
          .catch(() => undefined);
        const view = (await this.nodes()).nodes.find((n) => n.id === node);
        if (view === undefined || !view.live || view.epoch <= epoch + 1 || view.declaredDead !== null) throw new NotYet(JSON.stringify(view));
        return view;
      },
      { timeoutMs, what: `${node} live again at a new epoch` },
    );
  }
}
