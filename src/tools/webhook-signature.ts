// Standard Webhooks signatures on outbound tool calls, so a tool can prove a request came from this platform unaltered.
import { type HmacUsage, hmacKey } from "../shared/bytes";

export const WEBHOOK_SECRET_PREFIX = "whsec_";
/** How far a receiver lets `webhook-timestamp` drift from its clock (the Standard Webhooks default). */
export const WEBHOOK_TOLERANCE_SECONDS = 5 * 60;

export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

export class WebhookSecretError extends Error {}

const encoder = new TextEncoder();

function base64Encode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Standard or URL-safe base64, padding optional; `null` for anything else. */
function base64Decode(text: string): Uint8Array<ArrayBuffer> | null {
  const plain = text.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (!/^[A-Za-z0-9+/]*$/.test(plain) || plain.length % 4 === 1) return null;
  const binary = atob(plain);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/**
 * The HMAC key inside a `whsec_<base64>` secret (the prefix is optional, as in the reference libraries), or `null`
 * when the secret is not one. Standard Webhooks recommends 24 to 64 bytes; any non-empty key is accepted.
 */
export function webhookSigningKey(secret: string): Uint8Array<ArrayBuffer> | null {
  const encoded = secret.trim().startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.trim().slice(WEBHOOK_SECRET_PREFIX.length)
    : secret.trim();
  const key = base64Decode(encoded);
  return key === null || key.byteLength === 0 ? null : key;
}

function importKey(secret: string, usage: HmacUsage): Promise<CryptoKey> {
  const raw = webhookSigningKey(secret);
  if (raw === null)
    throw new WebhookSecretError("The signing secret is not a Standard Webhooks secret (whsec_…).");
  // Not cached: these are tenants' own secrets, one per tool, and keeping them in the isolate would only grow.
  return hmacKey(raw, [usage], { cache: false });
}

const signedContent = (id: string, timestamp: number | string, body: string) =>
  encoder.encode(`${id}.${timestamp}.${body}`);

/** Headers for one delivery: `v1,` + base64 HMAC-SHA256 over `<id>.<timestamp>.<body>`. Throws for a bad secret. */
export async function signWebhook(input: {
  secret: string;
  id: string;
  /** Unix seconds. */
  timestamp: number;
  body: string;
}): Promise<WebhookHeaders> {
  const key = await importKey(input.secret, "sign");
  const timestamp = Math.floor(input.timestamp);
  const mac = await crypto.subtle.sign("HMAC", key, signedContent(input.id, timestamp, input.body));
  return {
    "webhook-id": input.id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${base64Encode(new Uint8Array(mac))}`,
  };
}

export type WebhookVerification =
  | { ok: true; id: string; timestamp: number }
  | {
      ok: false;
      reason:
        | "invalid_secret"
        | "missing_headers"
        | "invalid_timestamp"
        | "timestamp_out_of_range"
        | "bad_signature";
    };

/**
 * What a tool's receiver does: checks the headers against the exact body bytes it received. Signatures are compared
 * by `crypto.subtle.verify`, which runs in constant time.
 */
export async function verifyWebhook(input: {
  secret: string;
  headers: Headers | Partial<Record<keyof WebhookHeaders, string>>;
  body: string;
  /** Receiver's clock in milliseconds; the timestamp window is not checked when absent. */
  now?: number;
  toleranceSeconds?: number;
}): Promise<WebhookVerification> {
  const header = (name: keyof WebhookHeaders): string | undefined =>
    input.headers instanceof Headers ? (input.headers.get(name) ?? undefined) : input.headers[name];
  const id = header("webhook-id");
  const timestampText = header("webhook-timestamp");
  const signatures = header("webhook-signature");
  if (!id || !timestampText || !signatures) return { ok: false, reason: "missing_headers" };
  if (!/^[0-9]{1,15}$/.test(timestampText)) return { ok: false, reason: "invalid_timestamp" };
  const timestamp = Number(timestampText);
  if (input.now !== undefined) {
    const tolerance = input.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS;
    if (Math.abs(Math.floor(input.now / 1000) - timestamp) > tolerance) {
      return { ok: false, reason: "timestamp_out_of_range" };
    }
  }
  let key: CryptoKey;
  try {
    key = await importKey(input.secret, "verify");
  } catch (error) {
    if (error instanceof WebhookSecretError) return { ok: false, reason: "invalid_secret" };
    throw error;
  }
  const content = signedContent(id, timestampText, input.body);
  // A header may carry several space-separated signatures (during a secret rotation); one match is enough.
  for (const entry of signatures.split(" ")) {
    const [version, encoded] = entry.split(",", 2);
    if (version !== "v1" || encoded === undefined) continue;
    const mac = base64Decode(encoded);
    if (mac === null || mac.byteLength !== 32) continue;
    if (await crypto.subtle.verify("HMAC", key, mac, content)) return { ok: true, id, timestamp };
  }
  return { ok: false, reason: "bad_signature" };
}

/**
 * The spellings of a signing secret a tool response could echo: the whole secret and its key in base64 (as written
 * and re-encoded, with or without padding, standard and URL-safe), for the redaction list.
 */
export function webhookSecretRedactions(secret: string): string[] {
  const trimmed = secret.trim();
  if (trimmed === "") return [];
  const key = webhookSigningKey(trimmed);
  if (key === null) return [trimmed];
  const written = (
    trimmed.startsWith(WEBHOOK_SECRET_PREFIX) ? trimmed.slice(WEBHOOK_SECRET_PREFIX.length) : trimmed
  ).replace(/=+$/, "");
  const spellings = [trimmed];
  for (const encoded of [written, base64Encode(key).replace(/=+$/, "")]) {
    spellings.push(
      encoded,
      encoded.replace(/\+/g, "-").replace(/\//g, "_"),
      encoded.replace(/-/g, "+").replace(/_/g, "/"),
    );
  }
  return [...new Set(spellings)];
}

/** A new endpoint secret: `whsec_` + 32 random bytes in base64, as Standard Webhooks' reference libraries expect. */
export function newWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${base64Encode(crypto.getRandomValues(new Uint8Array(32)))}`;
}
