// Fresh key material for Worker secrets: 256 random bits, base64url, as the Worker expects.
import { randomBytes } from "node:crypto";

export function randomSecret(bytes = 32) {
  return randomBytes(bytes).toString("base64url");
}
