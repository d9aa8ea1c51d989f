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

/** A pattern's canonical spelling (lower-case, `scheme://[*.]host[:port]`), or null when it is not one we accept. */
export function canonicalOriginPattern(raw: string): string | null {
  const pattern = parseOriginPattern(raw.toLowerCase());
  if (pattern === null) return null;
  return `${pattern.scheme}://${pattern.wildcard ? "*." : ""}${pattern.host}${pattern.port ? `:${pattern.port}` : ""}`;
}

/**
 * The canonical patterns that would admit `origin` (a request's Origin): itself, and the single-label wildcard of its
 * parent host (`https://a.example.com` → `https://*.example.com`). Empty when `origin` is not an origin. These are
 * the keys an index of allowed patterns is searched with, so matching stays an equality look-up.
 */
export function originLookupKeys(origin: string): string[] {
  const parsed = parseOriginPattern(origin);
  if (parsed === null || parsed.wildcard) return [];
  const port = parsed.port ? `:${parsed.port}` : "";
  const exact = `${parsed.scheme}://${parsed.host}${port}`;
  const labels = parsed.host.split(".");
  return labels.length > 2 ? [exact, `${parsed.scheme}://*.${labels.slice(1).join(".")}${port}`] : [exact];
}
