// Path routing under /console/: the History API, one signal for the current path, and a table of lazy screens.
import { signal } from "@preact/signals";

export const BASE = "/console";

/** The path below /console/, always starting with "/" ("/" is the agents list). */
export const path = signal(currentPath());

function currentPath(): string {
  const rest = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return rest === "" ? "/" : rest;
}

/**
 * Counts navigations (links, history, sign-in): the page that renders after one moves focus to its h1, so a screen
 * reader hears where it arrived and the keyboard starts from the top of the new page. 0 on the first load, which
 * keeps the browser's own starting focus.
 */
export const navigation = signal(0);

/** Asks the next page to take focus, as a navigation does (after sign-in, the form that had focus is gone). */
export function requestFocus(): void {
  navigation.value += 1;
}

addEventListener("popstate", () => {
  const next = currentPath();
  if (next === path.value) return;
  path.value = next;
  requestFocus();
});

/** Goes to a console path ("/agents/ag_1/draft"), keeping the query string given with it. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${to}`;
  if (options.replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  path.value = currentPath();
  requestFocus();
  scrollTo(0, 0);
}

/** The URL of a console path, for `href`. */
export const href = (to: string): string => `${BASE}${to}`;

/** Makes a plain left click on an in-console link navigate without a reload (modifier clicks open new tabs). */
export function onLinkClick(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey)
    return;
  const anchor = (event.target as Element | null)?.closest?.("a");
  if (!anchor || anchor.target || anchor.origin !== location.origin) return;
  // In-page anchors (the skip link) keep the browser's behaviour: scroll to and focus their target.
  if (anchor.hash && anchor.pathname === location.pathname) return;
  if (!anchor.pathname.startsWith(`${BASE}/`) && anchor.pathname !== BASE) return;
  event.preventDefault();
  navigate(anchor.pathname.slice(BASE.length) + anchor.search);
}

export interface Match {
  /** The route's name (its screen). */
  name: string;
  params: Record<string, string>;
}

/** Route patterns, first match wins: `:name` is one path segment. */
const ROUTES: [string, string][] = [
  ["/", "agents"],
  ["/agents", "agents"],
  ["/agents/:agentId", "agent"],
  ["/agents/:agentId/draft", "draft"],
  ["/agents/:agentId/playground", "playground"],
  ["/agents/:agentId/versions", "versions"],
  ["/agents/:agentId/releases", "releases"],
  ["/agents/:agentId/evals", "evals"],
  ["/sessions", "sessions"],
  ["/sessions/:threadId", "session"],
  ["/approvals", "approvals"],
  ["/analytics", "analytics"],
  ["/keys", "keys"],
  ["/secrets", "secrets"],
  ["/webhooks", "webhooks"],
];

export function match(pathname: string): Match | null {
  const parts = pathname.split("/").filter(Boolean);
  for (const [pattern, name] of ROUTES) {
    const want = pattern.split("/").filter(Boolean);
    if (want.length !== parts.length) continue;
    const params: Record<string, string> = {};
    const ok = want.every((segment, i) => {
      const part = parts[i]!;
      if (segment.startsWith(":")) {
        params[segment.slice(1)] = decodeURIComponent(part);
        return true;
      }
      return segment === part;
    });
    if (ok) return { name, params };
  }
  return null;
}
