// Server-generated ids: prefix, length, alphabet.
import { describe, expect, it } from "vitest";
import { base32, newId } from "../../src/control/ids";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("ids", () => {
  it("encodes RFC 4648 base32 test vectors, lowercase and unpadded", () => {
    expect(["", "f", "fo", "foo", "foob", "fooba", "foobar"].map((t) => base32(bytes(t)))).toEqual([
      "",
      "my",
      "mzxq",
      "mzxw6",
      "mzxw6yq",
      "mzxw6ytb",
      "mzxw6ytboi",
    ]);
  });

  it("prefixes 128 random bits", () => {
    for (const prefix of ["ten", "agt", "ver", "rel"] as const) {
      expect(newId(prefix)).toMatch(new RegExp(`^${prefix}_[a-z2-7]{26}$`));
    }
    const many = new Set(Array.from({ length: 1000 }, () => newId("agt")));
    expect(many.size).toBe(1000);
  });
});
