// Types of layers.mjs for the TypeScript tests that import it.
export type Unit = string | readonly string[];
export interface Rules {
  layers: readonly (readonly Unit[])[];
  programs: Record<string, readonly string[]>;
  shared: string;
  routes: string;
  routeHelpers: readonly string[];
  innerLayers: Record<string, readonly (readonly string[])[]>;
  faced: readonly string[];
  doors: Record<string, { door: string; except: readonly string[] }>;
  maxLines: number;
  onlyIn: readonly { pattern: RegExp; folder: string; says: string }[];
  units: readonly { unit: string; says: string }[];
}
export const RULES: Rules;
export function importsOf(
  file: string,
  text: string,
  exists?: (path: string) => boolean,
): { specifier: string; line: number; target: string }[];
export function onlyInBroken(
  file: string,
  text: string,
  rules?: Rules,
): { found: string; line: number; folder: string }[];
export function tooLong(file: string, text: string, rules?: Rules): string | null;
export function ruleBroken(file: string, target: string, rules?: Rules): string | null;
export function undescribed(tree: readonly string[], rules?: Rules): string[];
export function folderMap(tree: readonly string[], rules?: Rules): string;
export function picture(tree: readonly string[], rules?: Rules): string;
export function generatedSections(
  tree: readonly string[],
  rules?: Rules,
): { doc: string; name: string; body: string }[];
export function withSection(text: string, name: string, body: string): string | null;
