// Origin allow-lists: exact scheme/host/port match after URL parsing, or one leftmost single-label wildcard.

export interface OriginPattern {
  scheme: "http" | "https";
  /** Host without the wildcard label, lower-case. */
  host: string;
  port: string;
  wildcard: boolean;
}

const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** Parses an allowed-origin pattern; returns null when it is not one we accept. */
export function parseOriginPattern(pattern: string): OriginPattern | null {
  const match = pattern.match(/^(https?):\/\/(\*\.)?([^/?#*@\s]+)$/);
  if (!match) return null;
  const [, scheme, star, rest] = match;
  let url: URL;
  try {
    url = new URL(`${scheme}://${rest}`);
  } catch {
    return null;
  }
  if (url.username || url.password || url.pathname !== "/" || url.search || url.hash) return null;
  if (`${scheme}://${rest}`.toLowerCase() !== url.origin.toLowerCase()) return null;
  if (scheme === "http" && !LOCAL_HOSTS.has(url.hostname)) return null;
  const wildcard = star !== undefined;
  if (wildcard && (url.hostname.split(".").length < 2 || LOCAL_HOSTS.has(url.hostname))) return null;
  return { scheme: scheme as "http" | "https", host: url.hostname, port: url.port, wildcard };
}

function parseOrigin(origin: string): { scheme: string; host: string; port: string } | null {
  if (origin === "null") return null;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return null;
  }
  if (url.origin === "null" || url.origin !== origin.toLowerCase().replace(/\/$/, "")) return null;
  return { scheme: url.protocol.slice(0, -1), host: url.hostname, port: url.port };
}

/** True when `origin` (the request's Origin header) is allowed by one of `patterns`. */
export function originAllowed(origin: string | null | undefined, patterns: readonly string[]): boolean {
  if (!origin) return false;
  const parsed = parseOrigin(origin);
  if (!parsed) return false;
  for (const raw of patterns) {
    const pattern = parseOriginPattern(raw);
    if (!pattern || pattern.scheme !== parsed.scheme || pattern.port !== parsed.port) continue;
    if (!pattern.wildcard) {
      if (pattern.host === parsed.host) return true;
      continue;
    }
    const suffix = `.${pattern.host}`;
    if (!parsed.host.endsWith(suffix)) continue;
    const label = parsed.host.slice(0, -suffix.length);
    if (label.length > 0 && !label.includes(".")) return true;
  }
  return false;
}
