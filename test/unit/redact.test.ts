// Redaction: listed secrets and key-shaped strings never survive, wherever they sit in a value.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRedactor, REDACTED, redact, redactText } from "../../src/storage/redact";

const SECRET = "s3cr3t-tenant-value";

describe("redact", () => {
  it("replaces every occurrence of every secret, deep in values and keys", () => {
    const out = redact(
      {
        a: `${SECRET} and ${SECRET}`,
        list: ["plain", `x${SECRET}y`, 3, true, null],
        nested: { deeper: { [`key-${SECRET}`]: "other-secret here" } },
      },
      [SECRET, "other-secret"],
    );
    expect(out).toEqual({
      a: `${REDACTED} and ${REDACTED}`,
      list: ["plain", `x${REDACTED}y`, 3, true, null],
      nested: { deeper: { [`key-${REDACTED}`]: `${REDACTED} here` } },
    });
  });

  it("removes a secret that contains another secret whole", () => {
    expect(redactText("abc-long-secret-xyz", ["long-secret", "abc-long-secret-xyz"])).toBe(REDACTED);
  });

  it("redacts common key shapes nobody listed", () => {
    const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLXZhbHVl";
    const cases: [string, string][] = [
      ["Authorization: Bearer abc.def-ghi_jkl", `Authorization: Bearer ${REDACTED}`],
      ["bearer 0123456789abcdef", `bearer ${REDACTED}`],
      [`token ${jwt} end`, `token ${REDACTED} end`],
      [`bearer.${jwt}`, `bearer.${REDACTED}`],
      ["key sk_ab12cd34_0123456789abcdefghijklmnopqrstuv", `key ${REDACTED}`],
      ["openai sk-proj-abcdefghijklmnopqrstuvwx", `openai ${REDACTED}`],
      ["gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", `gh ${REDACTED}`],
      ["aws AKIAABCDEFGHIJKLMNOP", `aws ${REDACTED}`],
    ];
    for (const [input, expected] of cases) expect(redactText(input, [])).toBe(expected);
  });

  it("leaves ordinary text alone", () => {
    const text = "Ask the desk_clerk about task_list items; a Bearer of good news; sk_short.";
    expect(redactText(text, [])).toBe(text);
    expect(redact({ text, n: 1.5 }, [])).toEqual({ text, n: 1.5 });
  });

  it("ignores empty secrets instead of redacting everything", () => {
    expect(redactText("hello", ["", "zz"])).toBe("hello");
  });

  it("turns non-JSON values into JSON and guards cycles and depth", () => {
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    const shared = { v: SECRET };
    let deep: unknown = "bottom";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const out = redact(
      {
        cyclic,
        twice: [shared, shared],
        skip: undefined,
        fn: () => 1,
        inArray: [undefined, Number.NaN, Number.POSITIVE_INFINITY],
        when: new Date(Date.UTC(2026, 0, 1)),
        map: new Map([["k", SECRET]]),
        set: new Set([SECRET]),
        big: 10n,
        error: new Error(`failed with ${SECRET}`),
        deep,
      },
      [SECRET],
    );
    expect(out).toMatchObject({
      cyclic: { name: "loop", self: "[Circular]" },
      twice: [{ v: REDACTED }, { v: REDACTED }],
      inArray: [null, null, null],
      when: "2026-01-01T00:00:00.000Z",
      map: { k: REDACTED },
      set: [REDACTED],
      big: "10",
      error: { name: "Error", message: `failed with ${REDACTED}` },
    });
    expect(out).not.toHaveProperty("skip");
    expect(out).not.toHaveProperty("fn");
    expect(JSON.stringify(out)).toContain("[MaxDepth]");
  });

  it("keeps both values when two keys redact to the same key, and never sets a prototype", () => {
    const out = redact(JSON.parse(`{"a-${SECRET}": 1, "a-[REDACTED]": 2, "__proto__": {"polluted": true}}`), [
      SECRET,
    ]);
    expect(out).toEqual({ "a-[REDACTED]": 1, "a-[REDACTED]__2": 2, ["__proto__"]: { polluted: true } });
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("never lets a listed secret through, wherever it is placed (property)", () => {
    const redactor = createRedactor([SECRET]);
    const withSecret = fc.string().map((s) => `${s.slice(0, s.length / 2)}${SECRET}${s.slice(s.length / 2)}`);
    fc.assert(
      fc.property(fc.jsonValue(), withSecret, fc.string(), (value, secretText, key) => {
        const out = redactor.value({ value, [key]: [secretText, { [secretText]: secretText }] });
        expect(JSON.stringify(out)).not.toContain(SECRET);
      }),
      { numRuns: 300 },
    );
  });
});
