// Server-generated identifiers: a type prefix plus 128 random bits, so ids are unguessable and self-describing.

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

export type IdPrefix = "ten" | "agt" | "ver" | "rel" | "whk" | "dlv" | "era" | "att";

/** Lowercase RFC 4648 base32 without padding: URL-safe and case-insensitive. */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32[(buffer >>> bits) & 31];
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(buffer << (5 - bits)) & 31];
  return out;
}

/** `<prefix>_` + 26 base32 characters (128 bits from the platform CSPRNG). */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${base32(crypto.getRandomValues(new Uint8Array(16)))}`;
}
