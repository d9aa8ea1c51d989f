// Every error `reason` (docs/api.md, docs/protocol.md, docs/privacy.md): its own module, so a bundle that needs only the codes (the widget) omits it.
/**
 * Why a model provider failed, beside the code `upstream_unavailable` (docs/protocol.md, "Errors"): what a user or the
 * agent's owner can do about it differs (fix the key, shorten the conversation, wait).
 */
export const PROVIDER_ERROR_REASONS = [
  "auth",
  "not_found",
  "rate_limited",
  "context_length",
  "content_filter",
  "timeout",
  "network",
  "other",
] as const;

export type ProviderErrorReason = (typeof PROVIDER_ERROR_REASONS)[number];

/** Every `reason` an error may carry beside its code; wire strings, never renamed. */
export const ERROR_REASONS = [
  ...PROVIDER_ERROR_REASONS,
  "no_active_release",
  "legal_hold",
  // An approval (docs/tools.md#approvals) was decided before, or its time ran out.
  "already_decided",
  "expired",
  // Attachments (docs/api.md, "Attachments"): a media type the agent does not take, bytes that are not the declared
  // type, the tenant's storage quota, and the per-message or per-thread count.
  "type_not_accepted",
  "type_mismatch",
  "storage_quota",
  "attachment_limit",
] as const;

export type ErrorReason = (typeof ERROR_REASONS)[number];
