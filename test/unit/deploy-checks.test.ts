// `npm run deploy` refuses before touching anything remote when a secret is unset or the configuration is not
// ready; the wrangler calls are injected fakes here, so no account is needed.
import { describe, expect, it } from "vitest";
import {
  configurationProblem,
  missingSecrets,
  runDeploy,
  tomlValue,
} from "../../scripts/lib/deploy-checks.mjs";

const REQUIRED = [
  "LAUNCH_TOKEN_KEYS",
  "VISITOR_TOKEN_KEY",
  "DO_NAME_KEY",
  "API_KEY_PEPPER",
  "SECRETS_KEY",
  "OPERATOR_TOKEN",
];

const TOML = `
[env.staging.vars]
ENVIRONMENT = "staging"
PUBLIC_HOSTS = "agents-staging.example.com"

[[env.staging.d1_databases]]
binding = "DB"
database_id = "5f0c7a1e-2b3d-4c5e-8f90-123456789abc"

[[env.staging.r2_buckets]]
binding = "ATTACHMENTS"
bucket_name = "agent-threads-attachments-staging"

[env.production.vars]
PUBLIC_HOSTS = ""

[[env.production.d1_databases]]
database_id = "00000000-0000-4000-8000-000000000002"
`;

const listed = (names: readonly string[]) =>
  JSON.stringify(names.map((name) => ({ name, type: "secret_text" })));

/** A deploy whose wrangler is a recording fake. */
function fakeDeploy(options: {
  env?: string;
  secrets?: () => Promise<string>;
  tomlText?: string;
  migrationsFresh?: boolean;
  dryRun?: boolean;
  exitCodes?: number[];
}) {
  const ran: string[][] = [];
  const asked: string[] = [];
  const lines: string[] = [];
  const exitCodes = [...(options.exitCodes ?? [])];
  const done = runDeploy({
    env: options.env ?? "staging",
    dryRun: options.dryRun ?? false,
    tomlText: options.tomlText ?? TOML,
    migrationsFresh: options.migrationsFresh ?? true,
    required: REQUIRED,
    listSecrets: async (env) => {
      asked.push(env);
      return (options.secrets ?? (async () => listed(REQUIRED)))();
    },
    run: async (args) => {
      ran.push(args);
      return exitCodes.shift() ?? 0;
    },
    log: (line) => lines.push(line),
  });
  return { done, ran, asked, lines };
}

describe("npm run deploy", () => {
  it("refuses when a required secret is unset, naming each one, and runs nothing", async () => {
    const deploy = fakeDeploy({
      secrets: async () =>
        listed(["LAUNCH_TOKEN_KEYS", "DO_NAME_KEY", "API_KEY_PEPPER", "OPERATOR_TOKEN", "OTHER"]),
    });
    await expect(deploy.done).rejects.toThrow(/staging is missing secrets: VISITOR_TOKEN_KEY, SECRETS_KEY\./);
    expect(deploy.asked).toEqual(["staging"]);
    expect(deploy.ran).toEqual([]);
  });

  it("runs the remote migrations, then the deploy, once every secret is set", async () => {
    const deploy = fakeDeploy({});
    await deploy.done;
    expect(deploy.ran).toEqual([
      ["d1", "migrations", "apply", "DB", "--remote", "--env", "staging"],
      ["deploy", "--env", "staging"],
    ]);
  });

  it("migrates every D1 binding of the environment (the control plane and each projection shard)", async () => {
    const deploy = fakeDeploy({
      tomlText: `${TOML}
[[env.staging.d1_databases]]
binding = "DB_SHARD_1"
database_id = "6a1d8b2f-3c4e-4d6f-9a01-23456789abcd"
`,
    });
    await deploy.done;
    expect(deploy.ran).toEqual([
      ["d1", "migrations", "apply", "DB", "--remote", "--env", "staging"],
      ["d1", "migrations", "apply", "DB_SHARD_1", "--remote", "--env", "staging"],
      ["deploy", "--env", "staging"],
    ]);
    // A shard left on its placeholder id stops the deploy before anything runs.
    const placeholder = fakeDeploy({
      tomlText: `${TOML}
[[env.staging.d1_databases]]
binding = "DB_SHARD_1"
database_id = "00000000-0000-4000-8000-000000000011"
`,
    });
    await expect(placeholder.done).rejects.toThrow(/placeholder D1 id/);
    expect(placeholder.ran).toEqual([]);
  });

  it.each([
    ["cannot list the secrets", async () => Promise.reject(new Error("not logged in"))],
    ["prints something that is not JSON", async () => "You are not authenticated."],
    ["prints JSON that is not a list of secrets", async () => JSON.stringify({ secrets: REQUIRED })],
  ])("refuses when wrangler %s, and runs nothing", async (_case, secrets) => {
    const deploy = fakeDeploy({ secrets });
    await expect(deploy.done).rejects.toThrow();
    expect(deploy.ran).toEqual([]);
  });

  it("refuses a placeholder D1 id, an empty PUBLIC_HOSTS, a stale migration list or no attachments bucket before asking for secrets", async () => {
    for (const options of [
      { env: "production" },
      { tomlText: TOML.replace('"agents-staging.example.com"', '""') },
      { migrationsFresh: false },
      { tomlText: TOML.replace('binding = "ATTACHMENTS"', 'binding = "OTHER"') },
      { tomlText: TOML.replace('"agent-threads-attachments-staging"', '""') },
    ]) {
      const deploy = fakeDeploy(options);
      await expect(deploy.done).rejects.toThrow();
      expect(deploy.asked).toEqual([]);
      expect(deploy.ran).toEqual([]);
    }
  });

  it("stops at the first wrangler step that fails", async () => {
    const deploy = fakeDeploy({ exitCodes: [3] });
    await expect(deploy.done).rejects.toMatchObject({ exitCode: 3 });
    expect(deploy.ran).toHaveLength(1);
  });

  it("checks the configuration in a dry run but asks for no secrets and runs nothing", async () => {
    const deploy = fakeDeploy({ dryRun: true });
    await deploy.done;
    expect(deploy.asked).toEqual([]);
    expect(deploy.ran).toEqual([]);
    expect(deploy.lines.join("\n")).toContain("wrangler secret list --env staging --format json");
  });
});

describe("deploy checks", () => {
  it("reads wrangler.toml values per section", () => {
    expect(tomlValue(TOML, "env.staging.vars", "PUBLIC_HOSTS")).toBe("agents-staging.example.com");
    expect(tomlValue(TOML, "env.production.vars", "PUBLIC_HOSTS")).toBe("");
    expect(tomlValue(TOML, "env.staging.d1_databases", "database_id")).toMatch(/^5f0c/);
    expect(tomlValue(TOML, "env.preview.vars", "PUBLIC_HOSTS")).toBeNull();
    expect(configurationProblem({ env: "staging", tomlText: TOML, migrationsFresh: true })).toBeNull();
  });

  it("lists the missing secrets from wrangler's JSON", () => {
    expect(missingSecrets(REQUIRED, listed(REQUIRED))).toEqual([]);
    expect(missingSecrets(REQUIRED, "[]")).toEqual(REQUIRED);
  });
});
