// Types of deploy-checks.mjs for the TypeScript tests that import it.
export function missingSecrets(required: readonly string[], listOutput: string): string[];
export function tomlValue(tomlText: string, section: string, key: string): string | null;
export function tomlValues(tomlText: string, section: string, key: string): string[];
export function d1Bindings(tomlText: string, env: string): string[];
export function configurationProblem(input: {
  env: string;
  tomlText: string;
  migrationsFresh: boolean;
}): string | null;
export function runDeploy(input: {
  env: string;
  dryRun: boolean;
  tomlText: string;
  migrationsFresh: boolean;
  required: readonly string[];
  listSecrets: (env: string) => Promise<string>;
  run: (args: string[]) => Promise<number>;
  log: (line: string) => void;
}): Promise<void>;
