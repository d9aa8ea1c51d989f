// The tenant admin and operator API contract: zod request and response shapes for `/v1` (docs/api.md, docs/operations.md).
import { z } from "zod";
import { canonicalOriginPattern } from "./origin-policy";

export const ENVIRONMENTS = ["development", "staging", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];
export const environmentSchema = z.enum(ENVIRONMENTS);
export const WEIGHT_TOTAL = 10_000;
export const MAX_ORIGINS_PER_AGENT = 100;

export const slugSchema = z
  .string()
  .regex(
    /^[a-z0-9][a-z0-9-]{0,62}$/,
    "must be 1-63 lowercase letters, digits or '-', starting with a letter or digit",
  );

const agentName = z.string().trim().min(1).max(200);

const ORIGIN_PATTERN_HELP =
  "must be an origin such as https://example.com, https://example.com:8443 or https://*.example.com " +
  "(no path, no default port; http only for localhost or 127.0.0.1)";

/**
 * An origin pattern, validated by the same parser that matches `Origin` at launch, and answered in canonical
 * form (lower-case), so a pattern accepted here is one the launch check understands.
 */
export const originPatternSchema = z
  .string()
  .max(300)
  .transform((value, ctx) => {
    const pattern = canonicalOriginPattern(value);
    if (pattern === null) {
      ctx.addIssue({ code: "custom", message: ORIGIN_PATTERN_HELP });
      return z.NEVER;
    }
    return pattern;
  });

const allowedOrigins = z
  .array(originPatternSchema)
  .max(MAX_ORIGINS_PER_AGENT)
  .transform((origins) => [...new Set(origins)]);

export const createAgentRequest = z.strictObject({
  slug: slugSchema,
  name: agentName,
  visibility: z.enum(["public", "private"]),
  allowedOrigins,
});

export const patchAgentRequest = z.strictObject({
  name: agentName.optional(),
  status: z.enum(["active", "disabled"]).optional(),
  visibility: z.enum(["public", "private"]).optional(),
  allowedOrigins: allowedOrigins.optional(),
  rotatePublicKey: z.literal(true).optional(),
  /** docs/privacy.md: a max age over all of the agent's threads, existing ones too; null clears it. */
  retention: z
    .strictObject({ maxAgeDays: z.number().int().min(1).max(3650) })
    .nullable()
    .optional(),
});

export const publishVersionRequest = z.strictObject({
  draftRevision: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
});

export const createReleaseRequest = z
  .strictObject({
    environment: environmentSchema,
    allocations: z
      .array(
        z.strictObject({
          version: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
          weight: z.number().int().min(1).max(WEIGHT_TOTAL),
        }),
      )
      .min(1)
      .max(50),
  })
  .superRefine((input, ctx) => {
    const total = input.allocations.reduce((sum, a) => sum + a.weight, 0);
    if (total !== WEIGHT_TOTAL) {
      ctx.addIssue({ code: "custom", path: ["allocations"], message: `weights must sum to ${WEIGHT_TOTAL}` });
    }
    const seen = new Set<number>();
    input.allocations.forEach((a, i) => {
      if (seen.has(a.version)) {
        ctx.addIssue({ code: "custom", path: ["allocations", i, "version"], message: "duplicate version" });
      }
      seen.add(a.version);
    });
  });

/** What a tenant API key may do: `admin` writes, `read` only reads. */
export const API_KEY_SCOPES = ["admin", "read"] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

export const createApiKeyRequest = z.strictObject({
  name: z.string().trim().min(1).max(100),
  scope: z.enum(API_KEY_SCOPES).default("admin"),
});

export const SECRET_ALIAS = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const MAX_SECRET_VALUE_BYTES = 8 * 1024;

export const putSecretRequest = z.strictObject({
  value: z
    .string()
    .min(1)
    .refine((value) => new TextEncoder().encode(value).byteLength <= MAX_SECRET_VALUE_BYTES, {
      message: `must be at most ${MAX_SECRET_VALUE_BYTES} bytes`,
    }),
});

export const createTenantRequest = z.strictObject({ name: z.string().trim().min(1).max(200) });

export const TENANT_STATUSES = ["active", "disabled"] as const;
export type TenantStatus = (typeof TENANT_STATUSES)[number];

/** A tenant's own quota: a positive integer; `null` clears it back to the platform default. */
const quotaValue = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullable();

export const patchTenantRequest = z.strictObject({
  status: z.enum(TENANT_STATUSES).optional(),
  quotas: z
    .strictObject({
      launchesPerDay: quotaValue.optional(),
      tokensPerDay: quotaValue.optional(),
      concurrentThreads: quotaValue.optional(),
      /** Percent of the daily launch quota public launches may not use (kept for sk_ launches); default 50. */
      privateLaunchReservePercent: z.number().int().min(0).max(100).nullable().optional(),
      /** Percent of the daily launch quota one agent's public launches may use; default 50. */
      agentPublicLaunchSharePercent: z.number().int().min(1).max(100).nullable().optional(),
      /** Bytes of attachments the tenant may keep (distinct objects, docs/api.md "Attachments"); default 1 GiB. */
      storageBytes: quotaValue.optional(),
    })
    .optional(),
});

/** `POST /v1/operator/tenants/:id/api-keys`: a key the operator issues for a tenant (for example a lost last key). */
export const createTenantApiKeyRequest = z.strictObject({
  name: z.string().trim().min(1).max(100).default("Operator-issued key"),
  scope: z.enum(API_KEY_SCOPES).default("admin"),
});

// Responses.

const timestamp = z.iso.datetime({ offset: true });

export const agentResponse = z.strictObject({
  id: z.string(),
  slug: z.string(),
  name: z.string(),
  status: z.enum(["active", "disabled"]),
  visibility: z.enum(["public", "private"]),
  allowedOrigins: z.array(z.string()),
  publicKey: z.string().startsWith("pk_"),
  /** The agent's own retention (shorter than a version's wins), or null. */
  retention: z.object({ maxAgeDays: z.number().int() }).nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

export const draftResponse = z.strictObject({
  revision: z.number().int(),
  definition: z.record(z.string(), z.unknown()),
  updatedAt: timestamp,
});

export const publishedVersionResponse = z.strictObject({
  versionId: z.string(),
  version: z.number().int(),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
});

export const versionSummaryResponse = publishedVersionResponse.extend({
  draftRevision: z.number().int(),
  createdAt: timestamp,
});

export const versionResponse = versionSummaryResponse.extend({ artifact: z.record(z.string(), z.unknown()) });

export const releaseResponse = z.strictObject({
  id: z.string(),
  agentId: z.string(),
  environment: environmentSchema,
  runtimeRevision: z.string(),
  allocations: z.array(
    z.strictObject({ version: z.number().int(), versionId: z.string(), weight: z.number().int() }),
  ),
  createdAt: timestamp,
  activatedAt: timestamp.nullable(),
  active: z.boolean(),
});

export const apiKeyResponse = z.strictObject({
  id: z.string(),
  name: z.string(),
  scope: z.enum(API_KEY_SCOPES),
  prefix: z.string().startsWith("sk_"),
  last4: z.string().length(4),
  createdAt: timestamp,
  revokedAt: timestamp.nullable(),
});

export const createdApiKeyResponse = apiKeyResponse.extend({ apiKey: z.string().startsWith("sk_") });

export const secretResponse = z.strictObject({
  alias: z.string(),
  createdAt: timestamp,
  updatedAt: timestamp,
});

/** A tenant's own quotas; `null` means the platform default (launches: `TENANT_DAILY_LAUNCH_QUOTA`; others: none). */
export const tenantQuotasResponse = z.strictObject({
  launchesPerDay: z.number().int().nullable(),
  tokensPerDay: z.number().int().nullable(),
  concurrentThreads: z.number().int().nullable(),
  /** `null`: the default private reserve, 50% (see `launchBudget`). */
  privateLaunchReservePercent: z.number().int().nullable(),
  /** `null`: the default per-agent public share, 50% (see `launchBudget`). */
  agentPublicLaunchSharePercent: z.number().int().nullable(),
  /** `null`: the default attachment storage, 1 GiB. */
  storageBytes: z.number().int().nullable(),
});

/** The launches per UTC day the tenant gets now, defaults applied and rounded as enforced (docs/operations.md). */
export const tenantLaunchBudgetResponse = z.strictObject({
  launchesPerDay: z.number().int(),
  privateReservePercent: z.number().int(),
  publicLaunchesPerDay: z.number().int(),
  agentPublicSharePercent: z.number().int(),
  agentPublicLaunchesPerDay: z.number().int(),
});

export const tenantResponse = z.strictObject({
  id: z.string(),
  name: z.string(),
  status: z.enum(TENANT_STATUSES),
  quotas: tenantQuotasResponse,
  launchBudget: tenantLaunchBudgetResponse,
  createdAt: timestamp,
});

/** `POST /v1/operator/tenants/:tenantId/shard`: the D1 shard to move the tenant's projection to. */
export const moveTenantShardRequest = z.strictObject({
  shard: z.string().min(1).max(64),
});

/** Where a tenant's projection lives, and how far a move of it has got (docs/scaling.md, "D1 shards"). */
export const tenantShardResponse = z.strictObject({
  tenantId: z.string(),
  /** Where reads go. */
  shard: z.string(),
  state: z.enum(["active", "moving", "frozen", "draining"]),
  /** While moving or frozen: the shard the projection is moving to. */
  movingTo: z.string().nullable(),
  /** While draining: the shard being emptied. */
  movingFrom: z.string().nullable(),
  /** The step within the state (`mirror`, `copy`, `verify`, `rollup`, `delete`); null at its start. */
  step: z.string().nullable(),
  stepAt: timestamp,
  movedAt: timestamp.nullable(),
});
export type TenantShardResponse = z.infer<typeof tenantShardResponse>;

export const createdTenantResponse = z.strictObject({
  tenantId: z.string(),
  apiKey: z.string().startsWith("sk_"),
});

export function listResponse<T extends z.ZodType>(item: T) {
  return z.strictObject({ items: z.array(item), nextCursor: z.string().optional() });
}

export type AgentResponse = z.infer<typeof agentResponse>;
export type DraftResponse = z.infer<typeof draftResponse>;
export type VersionSummaryResponse = z.infer<typeof versionSummaryResponse>;
export type VersionResponse = z.infer<typeof versionResponse>;
export type ReleaseResponse = z.infer<typeof releaseResponse>;
export type ApiKeyResponse = z.infer<typeof apiKeyResponse>;
export type CreatedApiKeyResponse = z.infer<typeof createdApiKeyResponse>;
export type SecretResponse = z.infer<typeof secretResponse>;
export type TenantQuotas = z.infer<typeof tenantQuotasResponse>;
export type TenantResponse = z.infer<typeof tenantResponse>;
export type TenantPatch = z.infer<typeof patchTenantRequest>;

export const draftSavedResponse = z.strictObject({ revision: z.number().int() });

export const healthResponse = z.strictObject({
  status: z.literal("ok"),
  environment: environmentSchema,
  version: z.string(),
});

export const readyResponse = z.strictObject({
  status: z.enum(["ready", "not_ready"]),
  missing: z.array(z.string()).optional(),
});
