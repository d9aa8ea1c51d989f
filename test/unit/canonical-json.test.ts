// Canonical JSON and the artifact digest: what makes a stored artifact verifiable.
import { describe, expect, it } from "vitest";
import { CanonicalJsonError, canonicalJson, digestOf, sha256Hex } from "../../src/control/canonical-json";

describe("canonicalJson", () => {
  it("sorts object keys at every depth and keeps array order", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, 1, { z: true, y: null }], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[3,1,{"y":null,"z":true}]},"b":1}',
    );
  });

  it("sorts keys by code unit, not by locale", () => {
    expect(canonicalJson({ b: 0, B: 0, a: 0, _: 0, "10": 0, "9": 0 })).toBe(
      '{"10":0,"9":0,"B":0,"_":0,"a":0,"b":0}',
    );
  });

  it("drops undefined members of objects", () => {
    expect(canonicalJson({ a: 1, gone: undefined, nested: { gone: undefined } })).toBe('{"a":1,"nested":{}}');
  });

  it("escapes strings as JSON does", () => {
    expect(canonicalJson({ 'q"uote': 'line\n"break"\u2028' })).toBe(
      JSON.stringify({ 'q"uote': 'line\n"break"\u2028' }),
    );
  });

  it("refuses undefined in arrays, naming where", () => {
    expect(() => canonicalJson({ list: [1, undefined] })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ list: [1, undefined] })).toThrow("list[1]");
  });

  it("refuses non-finite numbers", () => {
    for (const n of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => canonicalJson({ n })).toThrow(CanonicalJsonError);
      expect(() => canonicalJson([n])).toThrow(CanonicalJsonError);
    }
  });

  it("refuses values JSON cannot hold", () => {
    expect(() => canonicalJson({ f: () => 1 })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson({ big: 1n })).toThrow(CanonicalJsonError);
    expect(() => canonicalJson(Symbol("s"))).toThrow(CanonicalJsonError);
  });

  it("round-trips through JSON.parse to an equal value", () => {
    const value = { z: [1.5, -0.25, 1e21, "é"], a: { nested: [null, false] } };
    expect(JSON.parse(canonicalJson(value))).toEqual(value);
  });
});

describe("digestOf", () => {
  it("is sha256 over the canonical text, prefixed", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(await digestOf({ b: 2, a: 1 })).toBe(`sha256:${await sha256Hex('{"a":1,"b":2}')}`);
  });

  it("is stable under key reordering and dropped undefined members", async () => {
    const one = { name: "n", model: { provider: "local", model: "echo" }, schemaVersion: 1 };
    const two = {
      schemaVersion: 1,
      model: { model: "echo", provider: "local" },
      name: "n",
      greeting: undefined,
    };
    expect(await digestOf(one)).toBe(await digestOf(two));
  });

  it("changes when any value changes", async () => {
    expect(await digestOf({ a: [1, 2] })).not.toBe(await digestOf({ a: [2, 1] }));
    expect(await digestOf({ a: "1" })).not.toBe(await digestOf({ a: 1 }));
  });
});
