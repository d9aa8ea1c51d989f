// Types of doc-paths.mjs for the TypeScript tests that import it.
export function srcPaths(text: string): { line: number; path: string; now: string | null }[];
export function stalePaths(doc: string, text: string, exists: (path: string) => boolean): string[];
