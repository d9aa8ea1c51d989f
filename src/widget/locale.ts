// The bundled translations of this build: JSON assets, fetched only when the widget speaks their language.

/** Language tag → path of its content-hashed JSON asset; substituted by scripts/build-widget.mjs. */
declare const __LOCALES__: Record<string, string> | undefined;

const LOCALES: Readonly<Record<string, string>> = typeof __LOCALES__ === "object" ? __LOCALES__ : {};

/** The languages this build has translations for (English is built in). */
export const BUNDLED_LOCALES: readonly string[] = Object.keys(LOCALES);

export function browserLocales(): readonly string[] {
  return navigator.languages?.length ? navigator.languages : [navigator.language];
}

const loaded = new Map<string, Promise<unknown>>();

/**
 * The strings of a bundled locale, fetched once per page as JSON (never evaluated, so strict CSP holds; it needs
 * only `connect-src` to the service). Null for English, or when the file cannot be had: the widget stays English.
 */
export function loadLocale(tag: string, base: string): Promise<unknown> {
  const path = Object.hasOwn(LOCALES, tag) ? LOCALES[tag] : undefined;
  if (path === undefined) return Promise.resolve(null);
  let pending = loaded.get(tag);
  if (pending === undefined) {
    pending = fetch(new URL(path, base).href, { credentials: "omit" })
      .then((res) => (res.ok ? res.json() : null))
      .catch(() => null);
    loaded.set(tag, pending);
  }
  return pending;
}
