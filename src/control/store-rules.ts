// Validation and integrity rules every DeploymentStore implementation applies identically.
import { z } from "zod";
import { fail, ok, type Result } from "../errors";
import { WEIGHT_TOTAL } from "./allocation";
import { type Artifact, artifactSchema, publishIssues } from "./artifact";
import { CanonicalJsonError, canonicalJson, digestOf } from "./canonical-json";
import { ENVIRONMENTS, type Environment, type Page, type ThreadPin } from "./deployment-store";
import { fieldIssues } from "./field-issues";

export const MAX_ALLOCATIONS = 50;

const visibility = z.enum(["public", "private"]);
const origins = z.array(z.string().min(1).max(2048)).max(100);
const publicKey = z.string().min(1).max(256);

export const newAgentSchema = z.object({
  slug: z
    .string()
    .regex(
      /^[a-z0-9][a-z0-9-]{0,62}$/,
      "must be lowercase letters, digits or '-', starting with a letter or digit",
    ),
  name: z.string().min(1).max(200),
  visibility,
  allowedOrigins: origins,
  publicKey,
});

export const agentPatchSchema = z.object({
  name: z.string().min(1).max(200).optional(),
  status: z.enum(["active", "disabled"]).optional(),
  visibility: visibility.optional(),
  allowedOrigins: origins.optional(),
  publicKey: publicKey.optional(),
  retention: z
    .object({ maxAgeDays: z.number().int().min(1).max(3650) })
    .nullable()
    .optional(),
});

export const releaseInputSchema = z
  .object({
    environment: z.enum(ENVIRONMENTS),
    runtimeRevision: z.string().min(1).max(200),
    allocations: z
      .array(
        z.object({
          version: z.number().int().min(1),
          weight: z.number().int().min(1).max(WEIGHT_TOTAL),
        }),
      )
      .min(1)
      .max(MAX_ALLOCATIONS),
  })
  .superRefine((input, ctx) => {
    const total = input.allocations.reduce((sum, a) => sum + a.weight, 0);
    if (total !== WEIGHT_TOTAL) {
      ctx.addIssue({
        code: "custom",
        path: ["allocations"],
        message: `weights must sum to exactly ${WEIGHT_TOTAL} (got ${total})`,
      });
    }
    const seen = new Set<number>();
    input.allocations.forEach((a, i) => {
      if (seen.has(a.version)) {
        ctx.addIssue({ code: "custom", path: ["allocations", i, "version"], message: "duplicate version" });
      }
      seen.add(a.version);
    });
  });

export const assignmentSchema = z.object({
  agentId: z.string().min(1).max(200),
  environment: z.enum(ENVIRONMENTS),
  threadId: z.string().min(1).max(256),
});

export const revisionSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** zod-parses store input, or returns the `bad_request` naming each failing field. */
export function parseInput<S extends z.ZodType>(
  schema: S,
  value: unknown,
  what: string,
): Result<z.output<S>> {
  const parsed = schema.safeParse(value);
  return parsed.success
    ? ok(parsed.data)
    : fail("bad_request", `${what} is invalid.`, fieldIssues(parsed.error));
}

export function badRevision(path: string): Result<never> {
  return fail("bad_request", "Revision must be a non-negative integer.", [
    { path, message: "must be a non-negative integer" },
  ]);
}

/** A draft is any JSON object that canonical JSON can hold; returns its canonical text. */
export function canonicalDraft(definition: unknown): Result<string> {
  if (definition === null || typeof definition !== "object" || Array.isArray(definition)) {
    return fail("bad_request", "Draft definition must be a JSON object.", [
      { path: "(root)", message: "must be a JSON object" },
    ]);
  }
  try {
    return ok(canonicalJson(definition));
  } catch (error) {
    if (error instanceof CanonicalJsonError) {
      return fail("bad_request", "Draft definition is not valid JSON.", [
        { path: "(root)", message: error.message },
      ]);
    }
    throw error;
  }
}

export const draftDefinitionSchema = z.record(z.string(), z.unknown());

/** Strict validation at publish time: a failure names every field path, and is never a conflict. */
export function artifactFromDefinition(definition: unknown): Result<Artifact> {
  const parsed = artifactSchema.safeParse(definition);
  if (!parsed.success) {
    return fail("bad_request", "Draft is not a valid agent artifact.", fieldIssues(parsed.error));
  }
  const issues = publishIssues(parsed.data);
  return issues.length === 0
    ? ok(parsed.data)
    : fail("bad_request", "Draft is not a valid agent artifact.", issues);
}

const TAMPERED = "Stored artifact failed its digest check.";

/** Re-verifies a stored artifact against the digest it was written with before anything uses it. */
export async function verifyStoredArtifact(text: string, digest: string): Promise<Result<Artifact>> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail("internal", TAMPERED);
  }
  let actual: string;
  try {
    actual = await digestOf(raw);
  } catch {
    return fail("internal", TAMPERED);
  }
  if (actual !== digest) return fail("internal", TAMPERED);
  const parsed = artifactSchema.safeParse(raw);
  return parsed.success ? ok(parsed.data) : fail("internal", TAMPERED);
}

export function unknownRuntime(runtimeRevision: string): Result<never> {
  return fail("bad_request", "Release is invalid.", [
    { path: "runtimeRevision", message: `unknown runtime revision '${runtimeRevision}'` },
  ]);
}

export function missingVersion(index: number, version: number): Result<never> {
  return fail("bad_request", "Release is invalid.", [
    { path: `allocations.${index}.version`, message: `version ${version} does not exist for this agent` },
  ]);
}

export function unsupportedVersion(index: number, schemaVersion: number, runtime: string): Result<never> {
  return fail("bad_request", "Release is invalid.", [
    {
      path: `allocations.${index}.version`,
      message: `artifact schemaVersion ${schemaVersion} is not supported by runtime '${runtime}'`,
    },
  ]);
}

export const runtimeSchema = z.object({
  id: z.string().min(1).max(200),
  supportedSchemaVersions: z.array(z.number().int().min(1)).min(1),
  capabilities: z
    .array(
      z
        .string()
        .regex(/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/)
        .max(64),
    )
    .max(64)
    .refine((list) => new Set(list).size === list.length, "duplicate capability"),
});

/** Runtime revisions come from the Worker's own code, so a bad one is a bug and throws. */
export function checkRuntime(runtime: unknown): z.output<typeof runtimeSchema> {
  return runtimeSchema.parse(runtime);
}

/** An existing pin answers only the agent and environment it was made for. */
export function matchPin(
  pin: ThreadPin,
  input: { agentId: string; environment: Environment },
): Result<ThreadPin> {
  return pin.agentId === input.agentId && pin.environment === input.environment
    ? ok(pin)
    : fail("conflict", "Thread is already pinned to another agent or environment.");
}

export const staleDraft = (): Result<never> =>
  fail("precondition_failed", "Draft revision does not match the current draft.");
export const agentNotFound = (): Result<never> => fail("not_found", "Agent not found.");
export const noActiveRelease = (): Result<never> =>
  fail("not_found", "No active release for this agent and environment.");
export const slugTaken = (): Result<never> =>
  fail("conflict", "An agent with this slug already exists.", [{ path: "slug", message: "already exists" }]);
export const publicKeyTaken = (): Result<never> =>
  fail("conflict", "Public key is already in use.", [{ path: "publicKey", message: "already in use" }]);

/** Lists read one item more than asked: its presence is what says there is a next page. */
export function pageOf<T>(rows: T[], limit: number, cursorOf: (item: T) => string): Page<T> {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  return { items, next: cursorOf(items[items.length - 1]!) };
}

export const versionNotFound = (): Result<never> => fail("not_found", "Version not found.");

/** Version numbers start at 1; anything else (NaN from a bad path segment, say) names no version. */
export const isVersionNumber = (version: number): boolean => Number.isSafeInteger(version) && version >= 1;
