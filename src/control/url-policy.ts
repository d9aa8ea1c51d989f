// Where an agent tool, model or event webhook may send a request: public https hosts only, checked at configuration
// and again at call time; in development also local plain http (docs/webhooks.md), so a local receiver works with `npm run dev`.

export interface ToolUrlOptions {
  /** Hosts of this platform (the Worker's own host); a tool pointing at them, or below them, is refused. */
  platformHosts?: readonly string[];
  /** Also allow `http://localhost[:port]` and `http://127.0.0.1[:port]`: only where `localHttpAllowed` says so. */
  allowLocalHttp?: boolean;
}

export type ModelUrlOptions = ToolUrlOptions;

export const MAX_TOOL_URL_LENGTH = 2048;

/**
 * Names that resolve to the caller's own machine or network rather than the public internet: special-use and
 * private-use names, and public wildcard DNS services whose whole purpose is to answer with any (loopback) address.
 */
const PRIVATE_SUFFIXES = [
  "local",
  "internal",
  "localdomain",
  "lan",
  "home",
  "corp",
  "intranet",
  "private",
  "arpa",
];
/**
 * Public DNS names whose every subdomain answers with a loopback (or any requested) address, so "a public host" by
 * name is this machine: the embedded-address services (`nip.io`, `sslip.io`, `xip.io`, `traefik.me`, `local.gd`)
 * and the well-known loopback wildcards developers use instead of editing a hosts file (`localhost.direct`, which
 * even has a public TLS certificate, `localtest.me`, `lvh.me`, `vcap.me`, `fuf.me`, `lacolhost.com`, `yoogle.com`,
 * `localho.st`). Names under `localhost` itself are refused separately (RFC 6761); docs/tools.md lists them.
 */
export const LOOPBACK_DNS_SERVICES = [
  "localhost.direct",
  "nip.io",
  "sslip.io",
  "xip.io",
  "traefik.me",
  "local.gd",
  "localtest.me",
  "lvh.me",
  "vcap.me",
  "fuf.me",
  "lacolhost.com",
  "yoogle.com",
  "localho.st",
] as const;

/** Lower case, without trailing dots or a port; `null` for something that is not a host. */
function normaliseHost(host: string): string | null {
  const trimmed = host.trim();
  if (trimmed === "") return null;
  try {
    return new URL(`https://${trimmed}`).hostname.replace(/\.+$/, "");
  } catch {
    return null;
  }
}

const isAtOrBelow = (host: string, domain: string): boolean => host === domain || host.endsWith(`.${domain}`);

type Cidr4 = readonly [a: number, b: number, c: number, d: number, bits: number, reason: string];

const LOOPBACK = "must not point to a loopback address";
const PRIVATE = "must not point to a private network address";
const LINK_LOCAL = "must not point to a link-local or cloud metadata address";
const UNSPECIFIED = "must not point to an unspecified address";
const MULTICAST = "must not point to a multicast or broadcast address";
const RESERVED = "must not point to a reserved or non-public address";

const BLOCKED_IPV4: readonly Cidr4[] = [
  [0, 0, 0, 0, 8, UNSPECIFIED],
  [10, 0, 0, 0, 8, PRIVATE],
  [100, 64, 0, 0, 10, PRIVATE],
  [127, 0, 0, 0, 8, LOOPBACK],
  [169, 254, 0, 0, 16, LINK_LOCAL],
  [172, 16, 0, 0, 12, PRIVATE],
  [192, 0, 0, 0, 24, RESERVED],
  [192, 0, 2, 0, 24, RESERVED],
  [192, 88, 99, 0, 24, RESERVED],
  [192, 168, 0, 0, 16, PRIVATE],
  [198, 18, 0, 0, 15, RESERVED],
  [198, 51, 100, 0, 24, RESERVED],
  [203, 0, 113, 0, 24, RESERVED],
  [224, 0, 0, 0, 4, MULTICAST],
  [255, 255, 255, 255, 32, MULTICAST],
  [240, 0, 0, 0, 4, RESERVED],
];

const toUint32 = (o: readonly number[]): number =>
  (((o[0] ?? 0) << 24) | ((o[1] ?? 0) << 16) | ((o[2] ?? 0) << 8) | (o[3] ?? 0)) >>> 0;

function parseIPv4(text: string): number[] | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const octets = parts.map((p) => (/^[0-9]{1,3}$/.test(p) ? Number(p) : Number.NaN));
  return octets.every((o) => o >= 0 && o <= 255) ? octets : null;
}

function ipv4Problem(octets: readonly number[]): string | null {
  const address = toUint32(octets);
  for (const [a, b, c, d, bits, reason] of BLOCKED_IPV4) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((address & mask) >>> 0 === (toUint32([a, b, c, d]) & mask) >>> 0) return reason;
  }
  return null;
}

/** Eight 16-bit groups; accepts `::` compression and a trailing dotted quad. */
function parseIPv6(text: string): number[] | null {
  let body = text;
  const lastColon = body.lastIndexOf(":");
  if (lastColon === -1) return null;
  if (body.slice(lastColon + 1).includes(".")) {
    const v4 = parseIPv4(body.slice(lastColon + 1));
    if (v4 === null) return null;
    const hex = (a = 0, b = 0) => ((a << 8) | b).toString(16);
    body = `${body.slice(0, lastColon + 1)}${hex(v4[0], v4[1])}:${hex(v4[2], v4[3])}`;
  }
  const halves = body.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (half: string): number[] =>
    half === ""
      ? []
      : half.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN));
  const head = groupsOf(halves[0] ?? "");
  let groups = head;
  if (halves.length === 2) {
    const rest = groupsOf(halves[1] ?? "");
    const missing = 8 - head.length - rest.length;
    if (missing < 1) return null;
    groups = [...head, ...new Array<number>(missing).fill(0), ...rest];
  }
  if (groups.length !== 8 || groups.some((g) => Number.isNaN(g))) return null;
  return groups;
}

function embeddedIPv4(groups: readonly number[], at: number): number[] {
  const hi = groups[at] ?? 0;
  const lo = groups[at + 1] ?? 0;
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff];
}

function ipv6Problem(groups: readonly number[]): string | null {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const zeroPrefix = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 0) return UNSPECIFIED;
  if (zeroPrefix && g5 === 0 && g6 === 0 && g7 === 1) return LOOPBACK;
  // IPv4 written inside IPv6 (mapped, compatible, NAT64, 6to4) reaches that IPv4 host: judge it as one, and refuse
  // the spelling even for a public one — the plain IPv4 address works and is easier to audit.
  const embedded = (at: number) =>
    ipv4Problem(embeddedIPv4(groups, at)) ?? "must not use an IPv4 address written as IPv6";
  if (zeroPrefix && (g5 === 0xffff || g5 === 0)) return embedded(6);
  if (g0 === 0x64 && g1 === 0xff9b) return embedded(6);
  if (g0 === 0x2002) return embedded(1);
  if ((g0 & 0xfe00) === 0xfc00) return PRIVATE;
  if ((g0 & 0xffc0) === 0xfe80) return LINK_LOCAL;
  if ((g0 & 0xffc0) === 0xfec0) return PRIVATE;
  if ((g0 & 0xff00) === 0xff00) return MULTICAST;
  // Only global unicast (2000::/3) is public; inside it, the protocol (Teredo, ORCHID…) and documentation ranges
  // are not.
  if ((g0 & 0xe000) !== 0x2000) return RESERVED;
  if (g0 === 0x2001 && (g1 < 0x0200 || g1 === 0x0db8)) return RESERVED;
  if (g0 === 0x3fff && g1 < 0x1000) return RESERVED;
  return null;
}

/** Why a host name or address is not a public destination, or `null`. The host must already be normalised. */
function hostProblem(host: string, platformHosts: readonly string[]): string | null {
  if (host.startsWith("[") && host.endsWith("]")) {
    const groups = parseIPv6(host.slice(1, -1));
    return groups === null ? "must name a valid host" : ipv6Problem(groups);
  }
  const v4 = parseIPv4(host);
  if (v4 !== null) return ipv4Problem(v4);
  // The URL parser turns every name ending in a number into an IPv4 address or an error; none may remain.
  if (/\.[0-9]+$|^[0-9]+$/.test(host)) return "must name a valid host";
  if (isAtOrBelow(host, "localhost")) return LOOPBACK;
  if (host === "" || !host.includes(".")) return "must name a public, fully qualified host";
  if (PRIVATE_SUFFIXES.some((suffix) => isAtOrBelow(host, suffix))) return "must name a public host";
  if (LOOPBACK_DNS_SERVICES.some((service) => isAtOrBelow(host, service))) return LOOPBACK;
  for (const platform of platformHosts) {
    const own = normaliseHost(platform);
    if (own !== null && own !== "" && isAtOrBelow(host, own)) return "must not point to this platform";
  }
  return null;
}

/**
 * Why a tool URL is refused, or `null` when it is allowed. The URL is judged after the WHATWG parser has
 * normalised it, so decimal, octal, hex and IPv6-embedded spellings of an address are judged as that address.
 * Only the default https port is allowed.
 */
export function toolUrlProblem(url: string, options: ToolUrlOptions = {}): string | null {
  if (url.length > MAX_TOOL_URL_LENGTH) return `must be at most ${MAX_TOOL_URL_LENGTH} characters`;
  if (options.allowLocalHttp === true && isLocalHttpUrl(url)) return null;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "must be an absolute https URL";
  }
  if (parsed.protocol !== "https:") return "must use https";
  if (parsed.username !== "" || parsed.password !== "") return "must not contain a user name or password";
  if (parsed.port !== "") return "must use the default https port (443)";
  const host = parsed.hostname.toLowerCase().replace(/\.+$/, "");
  return hostProblem(host, options.platformHosts ?? []);
}

/** docs/webhooks.md's exception: only a `development` deployment may call local plain-http endpoints. */
export function localHttpAllowed(environment: string): boolean {
  return environment === "development";
}

/** Plain http to this machine by name or loopback address, without credentials: a local development endpoint. */
function isLocalHttpUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (
    parsed.protocol === "http:" &&
    (parsed.hostname === "localhost" || parsed.hostname === "127.0.0.1") &&
    parsed.username === "" &&
    parsed.password === ""
  );
}

/**
 * Why a model's `baseUrl` is refused, or `null`: the tools' policy (an API key travels with every call), except that
 * `allowLocalHttp` admits a local plain-http endpoint. Publishing judges it twice: in any environment with
 * `allowLocalHttp` (`publishIssues`), then with this deployment's environment and hosts (`modelUrlIssues`); every
 * call judges it again.
 */
export function modelUrlProblem(url: string, options: ModelUrlOptions = {}): string | null {
  return toolUrlProblem(url, options);
}

/** The hosts a request was addressed to, for `platformHosts`: the request URL's host and any configured ones. */
export function platformHostsOf(requestUrl: string, configured: readonly string[] = []): string[] {
  const hosts = new Set<string>();
  const own = normaliseHost(new URL(requestUrl).host);
  if (own !== null && own !== "") hosts.add(own);
  for (const host of configured) {
    const normalised = normaliseHost(host);
    if (normalised !== null && normalised !== "") hosts.add(normalised);
  }
  return [...hosts];
}

/** This platform's own hosts: the configured `PUBLIC_HOSTS` and, where known, the host a request reached it on. */
export function platformHosts(env: { PUBLIC_HOSTS: string }, requestHost?: string | null): string[] {
  const hosts = new Set(publicHosts(env));
  const own = requestHost ? normaliseHost(requestHost) : null;
  if (own !== null && own !== "") hosts.add(own);
  return [...hosts];
}

/**
 * The issue (`model.baseUrl`) of a draft definition whose model endpoint this deployment refuses although the schema
 * admits it: local plain http outside development, or a host of this platform.
 */
export function modelUrlIssues(
  definition: unknown,
  options: { platformHosts: readonly string[]; allowLocalHttp: boolean },
): { path: string; message: string }[] {
  if (typeof definition !== "object" || definition === null || !("model" in definition)) return [];
  const model = definition.model;
  const baseUrl = typeof model === "object" && model !== null && "baseUrl" in model ? model.baseUrl : null;
  if (typeof baseUrl !== "string") return [];
  // A URL refused in every environment is reported once, by `publishIssues`.
  if (modelUrlProblem(baseUrl, { allowLocalHttp: true }) !== null) return [];
  const problem = modelUrlProblem(baseUrl, options);
  return problem === null ? [] : [{ path: "model.baseUrl", message: problem }];
}

/**
 * Issues (`tools.N.url`) for tools of a draft definition that this deployment refuses although the schema admits
 * them: a host of this platform (only the request knows it), or local plain http outside development. The artifact
 * schema already refuses every other bad URL, so the publish route adds only these.
 */
export function platformToolUrlIssues(
  definition: unknown,
  platformHosts: readonly string[],
  allowLocalHttp = false,
): { path: string; message: string }[] {
  if (typeof definition !== "object" || definition === null || !("tools" in definition)) return [];
  const tools = definition.tools;
  if (!Array.isArray(tools)) return [];
  const issues: { path: string; message: string }[] = [];
  tools.forEach((tool: unknown, index) => {
    if (typeof tool !== "object" || tool === null || !("url" in tool) || typeof tool.url !== "string") return;
    // Judged as the schema does first: a URL the schema refuses is reported once, by the schema.
    if (toolUrlProblem(tool.url, { allowLocalHttp: true }) !== null) return;
    const problem = toolUrlProblem(tool.url, { platformHosts, allowLocalHttp });
    if (problem !== null) issues.push({ path: `tools.${index}.url`, message: problem });
  });
  return issues;
}

/** The Worker's own hosts from the `PUBLIC_HOSTS` var (comma-separated). */
export function publicHosts(env: { PUBLIC_HOSTS: string }): string[] {
  return env.PUBLIC_HOSTS.split(",")
    .map((host) => host.trim().toLowerCase())
    .filter((host) => host.length > 0);
}
