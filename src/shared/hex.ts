// Lower-case hex of bytes, apart from bytes.ts so the browser widget can use it without the Worker's crypto.
export function toHex(bytes: Uint8Array): string {
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}
