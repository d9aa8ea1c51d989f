// Durable Object names are an HMAC of verified claims: opaque, unguessable, and never chosen by a client.

import { secretBytes } from "../../auth/signing-keys";
import { hmacSha256 } from "../../shared/bytes";
import { toHex } from "../../shared/hex";
import type { ThreadAddress } from "./claims";

const encoder = new TextEncoder();

/** Length-prefixed, so no two different claim tuples can encode to the same bytes. */
function encodeParts(parts: readonly string[]): Uint8Array<ArrayBuffer> {
  const encoded = parts.map((part) => encoder.encode(part));
  const out = new Uint8Array(encoded.reduce((n, p) => n + 4 + p.length, 0));
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const part of encoded) {
    view.setUint32(offset, part.length);
    out.set(part, offset + 4);
    offset += 4 + part.length;
  }
  return out;
}

export async function threadObjectName(secret: string, address: ThreadAddress): Promise<string> {
  const parts = [address.tenantId, address.environment, address.agentId, address.threadId];
  return `t_${toHex(await hmacSha256(secretBytes(secret), encodeParts(parts)))}`;
}
