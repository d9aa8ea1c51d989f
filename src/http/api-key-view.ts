// An API key as the API shows it: never its digest, only what identifies it to its owner.
import type { ApiKeyResponse } from "../shared/api";
import type { ApiKeyRecord } from "../storage/d1/tenant-credentials";

export function apiKeyView(key: ApiKeyRecord): ApiKeyResponse {
  return {
    id: key.id,
    name: key.name,
    scope: key.scope,
    prefix: key.prefix,
    last4: key.last4,
    createdAt: key.createdAt,
    revokedAt: key.revokedAt,
  };
}
