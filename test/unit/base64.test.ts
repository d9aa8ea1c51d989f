// File bytes reach providers (and the audit digest) as standard base64: every length's padding must be exact.
import { describe, expect, it } from "vitest";
import { base64Decode, base64Encode } from "../../src/shared/bytes";

const reference = (bytes: Uint8Array): string => btoa(String.fromCharCode(...bytes));

describe("base64", () => {
  it("encodes like btoa and decodes back, for every length around the 3-byte groups", () => {
    for (let n = 0; n < 64; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 97 + n * 13) & 0xff);
      const text = base64Encode(bytes);
      expect(text, `length ${n}`).toBe(reference(bytes));
      expect(base64Decode(text), `length ${n}`).toEqual(bytes);
    }
  });

  it("refuses text that is not base64 with null", () => {
    expect(base64Decode("not base64!")).toBeNull();
  });
});
