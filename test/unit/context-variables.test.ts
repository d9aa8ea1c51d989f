// Context variables: the launch `context` limits with the field each problem names, and `{{name}}` expansion.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expandContext, type TemplateMeter } from "../../src/control/context-template";
import {
  type ContextVariables,
  contextText,
  contextVariablesSchema,
  parseContextText,
} from "../../src/control/context-variables";

function problems(value: unknown): { path: string; message: string }[] {
  const result = contextVariablesSchema.safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
}

describe("context limits", () => {
  it("accepts up to 32 names of up to 64 characters with string, number and boolean values", () => {
    const value = Object.fromEntries(
      Array.from({ length: 32 }, (_, i) => [`v${i}_${"x".repeat(10)}`, i % 3 === 0 ? i : `s${i}`]),
    );
    expect(problems(value)).toEqual([]);
    expect(problems({ [`_${"a".repeat(63)}`]: true, name: "x".repeat(1000), n: -1.5 })).toEqual([]);
  });

  it.each([
    [
      "33 variables",
      Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`v${i}`, i])),
      "",
      "at most 32",
    ],
    ["a name with a dash", { "first-name": "Ada" }, "first-name", "variable name"],
    ["a name starting with a digit", { "1st": "Ada" }, "1st", "variable name"],
    ["a 65-character name", { [`a${"b".repeat(64)}`]: 1 }, `a${"b".repeat(64)}`, "variable name"],
    ["an empty name", { "": 1 }, "", "variable name"],
    ["__proto__", JSON.parse('{"__proto__": "x"}'), "__proto__", "reserved"],
    ["an object value", { plan: { tier: 1 } }, "plan", "string, number or boolean"],
    ["an array value", { plan: [1] }, "plan", "string, number or boolean"],
    ["a null value", { plan: null }, "plan", "string, number or boolean"],
    ["a 1,001-character string", { name: "x".repeat(1001) }, "name", "at most 1000 characters"],
    ["an infinite number", JSON.parse('{"n": 1e400}'), "n", "finite"],
    [
      "more than 8 KiB in all",
      Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`v${i}`, "é".repeat(500)])),
      "",
      "at most 8192 bytes",
    ],
    ["an array", [], "", "object of variables"],
    ["a string", "name=Ada", "", "object of variables"],
    ["null", null, "", "object of variables"],
  ])("refuses %s, naming it", (_name, value, path, message) => {
    const found = problems(value);
    expect(found.length).toBeGreaterThan(0);
    expect(
      found.some((p) => p.path === path && p.message.includes(message)),
      JSON.stringify(found),
    ).toBe(true);
  });

  it("reports only the count past 32 variables, however many bad names there are", () => {
    const many = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`bad-${i}`, { i }]));
    expect(problems(many)).toHaveLength(1);
  });

  it("stores one canonical text, none for an empty context, and reads back what it stored", () => {
    expect(contextText({ b: 1, a: "x" })).toBe('{"a":"x","b":1}');
    expect(contextText({})).toBeNull();
    expect(contextText(null)).toBeNull();
    expect(parseContextText('{"a":"x","b":1}')).toEqual({ a: "x", b: 1 });
    expect(parseContextText("not json")).toEqual({});
    expect(parseContextText(null)).toEqual({});
  });
});

const vars: ContextVariables = { name: "Ada", plan: "pro", seats: 3, trial: false };

describe("expandContext", () => {
  it("fills each {{name}} with its value as text and unknown names with nothing", () => {
    expect(expandContext("Hi {{name}} ({{plan}}, {{seats}} seats, trial {{trial}}){{missing}}.", vars)).toBe(
      "Hi Ada (pro, 3 seats, trial false).",
    );
    expect(expandContext("{{ name }} and {{  plan}}", vars)).toBe("Ada and pro");
    expect(expandContext("no placeholders", vars)).toBe("no placeholders");
    expect(expandContext("{{name}}", {})).toBe("");
  });

  it("expands once: a value that looks like a placeholder or a replacement pattern is inserted as written", () => {
    const tricky = { a: "{{b}}", b: "B", c: "$& $1 $$ $`" };
    expect(expandContext("{{a}}|{{b}}|{{c}}", tricky)).toBe("{{b}}|B|$& $1 $$ $`");
  });

  it("leaves everything that is not a placeholder as it is", () => {
    for (const text of [
      "{{}}",
      "{{ }}",
      "{{1abc}}",
      "{{a-b}}",
      "{name}",
      "{{name}",
      "{{name",
      `{{a${"b".repeat(64)}}}`,
    ])
      expect(expandContext(text, vars)).toBe(text);
    expect(expandContext("{{{name}}}", vars)).toBe("{Ada}");
    expect(expandContext("{{{{name}}}}", vars)).toBe("{{Ada}}");
  });

  it("uses the default after a bar when the variable is missing or empty, and only then", () => {
    expect(expandContext("Hi {{name|there}}!", {})).toBe("Hi there!");
    expect(expandContext("Hi {{ name | there }}!", {})).toBe("Hi there!");
    expect(expandContext("Hi {{name|there}}!", { name: "" })).toBe("Hi there!");
    expect(expandContext("Hi {{name|there}}!", { name: "Ada" })).toBe("Hi Ada!");
    expect(expandContext("{{seats|0}} seats", { seats: 0 })).toBe("0 seats");
    expect(expandContext("Hi {{name|}}!", {})).toBe("Hi !");
    // A default is plain text: never expanded, never holding braces, at most 200 characters.
    expect(expandContext("{{name|{{plan}}}}", { plan: "pro" })).toBe("{{name|pro}}");
    for (const text of ["{{name|a}b}}", `{{name|${"x".repeat(201)}}}`, "{{name|there"])
      expect(expandContext(text, {})).toBe(text);
  });

  it("never reads a name off the prototype", () => {
    expect(expandContext("[{{constructor}}][{{__proto__}}][{{toString}}][{{hasOwnProperty}}]", vars)).toBe(
      "[][][][]",
    );
  });

  const templateText = fc.string({
    unit: fc.constantFrom(
      "{",
      "}",
      "{{",
      "}}",
      " ",
      "   ",
      "a",
      "Z",
      "_",
      "9",
      "-",
      "name",
      "plan",
      "x".repeat(70),
      "|",
      "there",
      "y".repeat(199),
    ),
    maxLength: 200,
  });
  const reference = (text: string, variables: ContextVariables) =>
    text.replace(
      /\{\{ *([A-Za-z_][A-Za-z0-9_]{0,63}) *(?:\|([^{}]{0,200}))?\}\}/g,
      (_match, key: string, fallback: string | undefined) => {
        const value = Object.hasOwn(variables, key) ? String(variables[key]) : "";
        return value === "" ? (fallback ?? "").trim() : value;
      },
    );

  it("agrees with the equivalent regular expression on adversarial templates", () => {
    fc.assert(
      fc.property(templateText, (text) => {
        expect(expandContext(text, vars)).toBe(reference(text, vars));
      }),
      { numRuns: 2000 },
    );
  });

  it("examines each character of the template at most once, however it is built", () => {
    const repeated = fc
      .tuple(
        fc.constantFrom(
          "{{",
          "{{ ",
          "{{a",
          "{{ a ",
          "{{name",
          "{{name }",
          "{{{",
          "  ",
          "a",
          "{{a|",
          "{{a|x}",
          "{{a|x",
        ),
        fc.nat(5000),
      )
      .map(([piece, n]) => piece.repeat(n + 1));
    fc.assert(
      fc.property(fc.oneof(templateText, repeated), (text) => {
        const meter: TemplateMeter = { steps: 0 };
        expandContext(text, vars, meter);
        expect(meter.steps).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 500 },
    );
  });
});
