// Webhook URL safety (SUB-3). The server POSTs to the URL a subscriber registers, so a URL that points
// inside the deployment (metadata endpoints, private networks, the node itself) would turn subscriptions
// into a request-forgery tool. Rule: `https` to a public host; loopback hosts (plain `http` or `https`)
// only behind the development flag WEBHOOK_ALLOW_LOOPBACK (the conformance suite's receiver listens on
// 127.0.0.1); never the service itself (its callback token would be posted into its own streams); never
// credentials in the URL (they would be stored, shown by every GET and sent on every delivery). The core
// cannot parse URLs (no URL in ES2023): the shell splits the URL with WHATWG `new URL()`, which also
// canonicalizes odd IPv4 spellings such as `0x7f.1` to `127.0.0.1`, and hands over the parts.
//
// This classifies literal addresses and well-known local names only: a public name that resolves to a
// private address (DNS rebinding) is the fetch layer's concern. Deliveries follow no redirect (a 3xx is a
// failed delivery: src/subscriptions/effects.ts), so a public URL cannot bounce a POST inside either.
import { fail, ok, type Checked } from "./errors.ts";

export interface WebhookUrlParts {
  /** Lower-case, without the colon: `https`. */
  readonly scheme: string;
  /** WHATWG `hostname`: lower-case, IPv6 literals in brackets. */
  readonly host: string;
  /** WHATWG `origin` (`https://host[:port]`, default port dropped); absent: not compared with the service's. */
  readonly origin?: string;
  /** Whether the URL carries a user name or password (`https://user:pass@host/`). */
  readonly hasCredentials?: boolean;
}

/** What the deployment allows beyond the fixed rules; the shell builds it from its vars and the request. */
export interface WebhookPolicy {
  /** WEBHOOK_ALLOW_LOOPBACK: loopback hosts are allowed (development and the conformance suite only). */
  readonly allowLoopback: boolean;
  /** The service's own origins (PUBLIC_ORIGIN and the request's), WHATWG-normalized. */
  readonly serviceOrigins: readonly string[];
}

/** The production policy: no loopback, no known service origin (the shell adds its own). */
export const STRICT_WEBHOOK_POLICY: WebhookPolicy = { allowLoopback: false, serviceOrigins: [] };

function hostOfOrigin(origin: string): string {
  return origin.replace(/^[a-z][a-z0-9+.-]*:\/\//i, "").replace(/:\d+$/, "").toLowerCase();
}

/** The port an origin names, or its scheme's default. */
function portOfOrigin(origin: string): string {
  const explicit = /:(\d+)$/.exec(origin.replace(/^[a-z][a-z0-9+.-]*:\/\//i, ""))?.[1];
  return explicit ?? (origin.toLowerCase().startsWith("https:") ? "443" : "80");
}

/**
 * Whether the URL reaches the service itself: the same origin, or, for a public host, the same host on
 * any port or scheme (a CDN in front of the Worker serves a hostname on several ports). Loopback hosts
 * compare ports: in development the service and the receiver share the machine on two ports, and every
 * loopback spelling (`localhost`, `127.0.0.1`, `[::1]`, `127.1.2.3`) reaches the same one.
 */
function isServiceOrigin(url: WebhookUrlParts, hostClass: HostClass, serviceOrigins: readonly string[]): boolean {
  const origin = url.origin?.toLowerCase();
  return serviceOrigins.some((service) => {
    const own = service.toLowerCase().replace(/\/+$/, "");
    if (origin !== undefined && origin === own) return true;
    if (hostClass === "loopback" && origin !== undefined && classifyHost(hostOfOrigin(own)) === "loopback") {
      return portOfOrigin(origin) === portOfOrigin(own);
    }
    return hostClass === "public" && hostOfOrigin(own) === url.host.toLowerCase().replace(/\.$/, "");
  });
}

export type HostClass =
  | "public"
  | "loopback"
  | "private"
  | "link_local"
  | "unspecified"
  | "multicast"
  /** Documentation, benchmarking, broadcast and other special-purpose ranges. */
  | "reserved"
  /** Names that only resolve inside a network: `*.local`, `*.internal`, single-label names. */
  | "local_name";

/** The four octets of a dotted-quad IPv4 literal, or null. */
function parseIpv4(host: string): readonly [number, number, number, number] | null {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (match === null) return null;
  const octets = [match[1], match[2], match[3], match[4]].map(Number);
  if (octets.some((o) => !(o >= 0 && o <= 255))) return null;
  const [a = 0, b = 0, c = 0, d = 0] = octets;
  return [a, b, c, d];
}

/** The eight 16-bit groups of an IPv6 literal (brackets optional, embedded IPv4 allowed), or null. */
export function parseIpv6(host: string): readonly number[] | null {
  const text = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (!text.includes(":") || text.includes("%")) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const pieces = part.split(":");
    for (const [index, piece] of pieces.entries()) {
      if (index === pieces.length - 1 && piece.includes(".")) {
        const v4 = parseIpv4(piece);
        if (v4 === null) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
        out.push(parseInt(piece, 16));
      } else {
        return null;
      }
    }
    return out;
  };
  const head = groupsOf(halves[0] ?? "");
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? "") : [];
  if (head === null || tail === null) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

function classifyIpv4([a, b, c]: readonly [number, number, number, number]): HostClass {
  if (a === 127) return "loopback";
  if (a === 0) return "unspecified";
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return "private";
  if (a === 100 && b >= 64 && b <= 127) return "private"; // carrier-grade NAT, 100.64.0.0/10
  if (a === 169 && b === 254) return "link_local";
  if (a >= 224 && a <= 239) return "multicast";
  const documentation =
    (a === 192 && b === 0 && c === 2) || (a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113);
  // IETF protocol assignments, the 6to4 relay anycast 192.88.99.0/24, benchmarking.
  const special = (a === 192 && b === 0 && c === 0) || (a === 192 && b === 88 && c === 99) || (a === 198 && (b === 18 || b === 19));
  if (a >= 240 || special || documentation) {
    return "reserved";
  }
  return "public";
}

/**
 * Table WU-H: IPv6 ranges that are not plain public unicast. Transition forms embed or reach an IPv4
 * address through a relay or translator the URL check cannot see past, so each is refused: as the class of
 * the IPv4 address it embeds when that is not public (a mapped loopback stays loopback for the development
 * flag), else as `reserved` (a public IPv4 address is reachable as itself, without the translation).
 * | row   | range                                            | class                                   |
 * | WU-H1 | ::1                                              | loopback                                |
 * | WU-H2 | ::                                               | unspecified                             |
 * | WU-H3 | ::ffff:0:0/96 IPv4-mapped, ::ffff:0:0:0/96 IPv4-translated | embedded IPv4's class, public → reserved |
 * | WU-H4 | 64:ff9b::/96 NAT64, 64:ff9b:1::/48 local NAT64   | embedded IPv4's class (last 32 bits), public or loopback → reserved |
 * | WU-H5 | 2002::/16 6to4                                   | embedded IPv4's class (bits 16-47), public or loopback → reserved |
 * | WU-H6 | 2001::/23 IETF protocol assignments: Teredo 2001::/32, benchmarking, ORCHID | reserved  |
 * | WU-H7 | ::/96 IPv4-compatible (deprecated), the rest of ::/8, 100::/8 (discard 100::/64) | reserved |
 * | WU-H8 | fc00::/7 unique local, fec0::/10 site-local      | private                                 |
 * | WU-H9 | fe80::/10                                        | link_local                              |
 * | WU-H10 | ff00::/8                                        | multicast                               |
 * | WU-H11 | 2001:db8::/32, 3fff::/20 documentation, 5f00::/16 SRv6 | reserved                          |
 * | WU-H12 | everything else                                 | public                                  |
 */
function classifyIpv6(groups: readonly number[]): HostClass {
  const g = (i: number): number => groups[i] ?? 0;
  const zero = (...indexes: number[]): boolean => indexes.every((i) => g(i) === 0);
  if (zero(0, 1, 2, 3, 4, 5, 6) && g(7) === 1) return "loopback";
  if (groups.every((x) => x === 0)) return "unspecified";
  const v4At = (i: number): [number, number, number, number] => [g(i) >> 8, g(i) & 0xff, g(i + 1) >> 8, g(i + 1) & 0xff];
  const mapped = zero(0, 1, 2, 3, 4) && g(5) === 0xffff;
  const translated = zero(0, 1, 2, 3, 5) && g(4) === 0xffff;
  const nat64 = g(0) === 0x64 && g(1) === 0xff9b && (zero(2, 3, 4, 5) || g(2) === 1);
  if (mapped || translated) return embeddedClass(v4At(6));
  if (nat64) return relayedClass(v4At(6));
  if (g(0) === 0x2002) return relayedClass(v4At(1));
  return classifyIpv6Prefix(g(0), g(1));
}

/** A transition form's class: its embedded IPv4 address's, or `reserved` when that one is public. */
function embeddedClass(v4: readonly [number, number, number, number]): HostClass {
  const embedded = classifyIpv4(v4);
  return embedded === "public" ? "reserved" : embedded;
}

/**
 * A form sent through a relay or translator (NAT64, 6to4): as `embeddedClass`, but an embedded loopback is
 * `reserved`, not `loopback`: it is some translator's loopback, never this machine's, so the development
 * flag must not let it through.
 */
function relayedClass(v4: readonly [number, number, number, number]): HostClass {
  const embedded = embeddedClass(v4);
  return embedded === "loopback" ? "reserved" : embedded;
}

/** WU-H6..WU-H12: the class of an IPv6 address that embeds no IPv4 address, by its first 32 bits. */
function classifyIpv6Prefix(first: number, second: number): HostClass {
  if (first < 0x0200) return "reserved"; // ::/8 (IPv4-compatible and the rest) and 100::/8 (discard), IETF-reserved
  if (first === 0x2001 && second < 0x0200) return "reserved"; // 2001::/23: Teredo, benchmarking, ORCHID
  if ((first & 0xfe00) === 0xfc00) return "private"; // unique local fc00::/7
  if ((first & 0xffc0) === 0xfe80) return "link_local";
  if ((first & 0xffc0) === 0xfec0) return "private"; // site-local, deprecated
  if ((first & 0xff00) === 0xff00) return "multicast";
  if (first === 0x2001 && second === 0x0db8) return "reserved"; // documentation
  if ((first === 0x3fff && second < 0x1000) || first === 0x5f00) return "reserved"; // documentation 3fff::/20, SRv6 SIDs
  return "public";
}

/** What kind of host a WHATWG hostname names. */
export function classifyHost(rawHost: string): HostClass {
  const host = rawHost.toLowerCase().replace(/\.$/, "");
  const v4 = parseIpv4(host);
  if (v4 !== null) return classifyIpv4(v4);
  const v6 = parseIpv6(host);
  if (v6 !== null) return classifyIpv6(v6);
  if (host === "localhost" || host.endsWith(".localhost")) return "loopback";
  if (!host.includes(".") || /\.(local|internal|lan|home\.arpa)$/.test(host)) return "local_name";
  return "public";
}

/**
 * Table WU — SUB-3: whether the server may POST to this URL. Rejections carry code `webhook_url_rejected`.
 * | row | condition                                                        | result                          |
 * | WU1 | user name or password in the URL                                 | rejected {reason: "credentials"} |
 * | WU2 | the service's own origin (public host: its host on any port)     | rejected {reason: "service_origin"} |
 * | WU3 | loopback host, WEBHOOK_ALLOW_LOOPBACK on, http or https          | allowed                          |
 * | WU4 | loopback host, flag off                                          | rejected {hostClass: "loopback"} |
 * | WU5 | other http                                                       | rejected {hostClass}             |
 * | WU6 | not https                                                        | rejected {scheme}                |
 * | WU7 | https to a host that is not public                               | rejected {hostClass}             |
 * | WU8 | https to a public host                                           | allowed                          |
 */
export function checkWebhookUrl(url: WebhookUrlParts, policy: WebhookPolicy = STRICT_WEBHOOK_POLICY): Checked<WebhookUrlParts> {
  if (url.hasCredentials === true) {
    return fail("webhook_url_rejected", "webhook URLs must not carry a user name or password", { reason: "credentials" });
  }
  const hostClass = classifyHost(url.host);
  if (isServiceOrigin(url, hostClass, policy.serviceOrigins)) {
    return fail("webhook_url_rejected", "a webhook URL must not point at this service itself", { reason: "service_origin" });
  }
  if (hostClass === "loopback" && (url.scheme === "http" || url.scheme === "https")) {
    if (policy.allowLoopback) return ok(url);
    return fail("webhook_url_rejected", "loopback webhook URLs are only allowed in development (WEBHOOK_ALLOW_LOOPBACK)", {
      hostClass,
    });
  }
  if (url.scheme === "http") {
    return fail("webhook_url_rejected", "webhook URLs must use https to a public host", { hostClass });
  }
  if (url.scheme !== "https") {
    return fail("webhook_url_rejected", "webhook URLs must use https", { scheme: url.scheme });
  }
  if (hostClass !== "public") {
    return fail("webhook_url_rejected", "webhook URLs must target a public host", { hostClass });
  }
  return ok(url);
}
