// Issuing a tenant API key, shared by the tenant's own key route and the operator's tenant route.
import { apiKeyDigest, generateApiKey } from "../auth/api-keys";
import { apiKeyView } from "../http/api-key-view";
import type { ApiKeyScope, CreatedApiKeyResponse } from "../shared/api";
import { type ApiKeyRecord, insertApiKey } from "../storage/d1/tenant-credentials";

/** Creates and stores a key; the returned plaintext must go to its owner once and nowhere else. */
export async function issueApiKey(
  env: Env,
  tenantId: string,
  input: { name: string; scope: ApiKeyScope },
  now = new Date(),
): Promise<CreatedApiKeyResponse> {
  const key = generateApiKey();
  const record: Omit<ApiKeyRecord, "revokedAt"> = {
    tenantId,
    id: key.id,
    name: input.name,
    scope: input.scope,
    digest: await apiKeyDigest(env.API_KEY_PEPPER, key.secret),
    prefix: key.prefix,
    last4: key.last4,
    createdAt: now.toISOString(),
  };
  await insertApiKey(env.DB, record);
  return { ...apiKeyView({ ...record, revokedAt: null }), apiKey: key.plaintext };
}
