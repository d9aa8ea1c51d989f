// Types of doc-paths.mjs for the TypeScript tests that import it.
export function srcPaths(text: string): { line: number; path: string; now: string | null }[];
export function stalePaths(doc: string, text: string, exists: (path: string) => boolean): string[];
export function anchorOf(heading: string): string;
export function anchorsOf(markdown: string): Set<string>;
export function brokenAnchors(
  file: string,
  text: string,
  anchorsIn: (doc: string) => Set<string> | null,
): string[];
