// Which tool calls wait for a decision, on what terms, and where a tool runs.
import { describe, expect, it } from "vitest";
import { type ArtifactTool, toolSchema } from "../../src/control/artifact";
import { approvalFor, clientToolTimeoutMs, toolExecutor } from "../../src/control/tool-approval";

const server = {
  name: "refund",
  description: "Refunds an order.",
  url: "https://tools.example.com/refund",
  signingSecret: "refund-signing",
};
const tool = (fields: Record<string, unknown> = {}): ArtifactTool =>
  toolSchema.parse({ ...server, ...fields });
const rules = (...when: { pointer: string; op: string; value?: unknown }[]) => tool({ approval: { when } });
const DEFAULT_NEED = { by: "any", timeoutMs: 600_000, onTimeout: "deny" };

describe("approvalFor", () => {
  it("needs nothing without approval or with never, and the defaults with always or rules without when", () => {
    expect(approvalFor(tool(), { amount: 5 })).toBeNull();
    expect(approvalFor(tool({ approval: "never" }), { amount: 5 })).toBeNull();
    expect(approvalFor(tool({ approval: "always" }), {})).toEqual(DEFAULT_NEED);
    expect(approvalFor(tool({ approval: {} }), {})).toEqual(DEFAULT_NEED);
  });

  it("carries who decides, how long, what silence becomes and the card's texts", () => {
    const need = approvalFor(
      tool({
        approval: {
          by: "user",
          timeoutMs: 60_000,
          onTimeout: "handoff",
          title: "Refund",
          description: "Sends the money back.",
        },
      }),
      {},
    );
    expect(need).toEqual({
      by: "user",
      timeoutMs: 60_000,
      onTimeout: "handoff",
      title: "Refund",
      description: "Sends the money back.",
    });
  });

  it("needs approval when any rule matches, and none when no rule does", () => {
    const refund = rules(
      { pointer: "/amount", op: "gt", value: 100 },
      { pointer: "/currency", op: "eq", value: "BTC" },
    );
    expect(approvalFor(refund, { amount: 101, currency: "EUR" })).toEqual(DEFAULT_NEED);
    expect(approvalFor(refund, { amount: 5, currency: "BTC" })).toEqual(DEFAULT_NEED);
    expect(approvalFor(refund, { amount: 100, currency: "EUR" })).toBeNull();
  });

  it("compares numbers only with gt, gte, lt and lte", () => {
    const cases: [string, unknown, boolean][] = [
      ["gt", 11, true],
      ["gt", 10, false],
      ["gte", 10, true],
      ["gte", 9.5, false],
      ["lt", 9, true],
      ["lt", 10, false],
      ["lte", 10, true],
      ["lte", 11, false],
      ["gt", "11", false],
      ["lt", null, false],
      ["lte", [1], false],
    ];
    for (const [op, amount, needed] of cases) {
      expect(
        approvalFor(rules({ pointer: "/amount", op, value: 10 }), { amount }) !== null,
        `${op} ${amount}`,
      ).toBe(needed);
    }
  });

  it("a missing value matches ne and nothing else", () => {
    for (const op of ["eq", "gt", "gte", "lt", "lte", "in"]) {
      const value = op === "in" ? [null] : op === "eq" ? null : 0;
      expect(approvalFor(rules({ pointer: "/missing", op, value }), { other: 1 }), op).toBeNull();
    }
    expect(approvalFor(rules({ pointer: "/missing", op: "ne", value: 1 }), {})).toEqual(DEFAULT_NEED);
    expect(approvalFor(rules({ pointer: "/a/b", op: "ne", value: 1 }), { a: "text" })).toEqual(DEFAULT_NEED);
    expect(approvalFor(rules({ pointer: "/amount", op: "ne", value: 1 }), { amount: 1 })).toBeNull();
  });

  it("eq and in compare JSON values deeply; in needs the value in the list", () => {
    const eq = rules({ pointer: "/to", op: "eq", value: { iban: "DE1", tags: ["a"] } });
    expect(approvalFor(eq, { to: { tags: ["a"], iban: "DE1" } })).toEqual(DEFAULT_NEED);
    expect(approvalFor(eq, { to: { iban: "DE1", tags: ["b"] } })).toBeNull();
    const within = rules({ pointer: "/currency", op: "in", value: ["EUR", "USD", 7] });
    expect(approvalFor(within, { currency: "USD" })).toEqual(DEFAULT_NEED);
    expect(approvalFor(within, { currency: 7 })).toEqual(DEFAULT_NEED);
    expect(approvalFor(within, { currency: "7" })).toBeNull();
    expect(approvalFor(within, { currency: "GBP" })).toBeNull();
  });

  it("follows pointers through nested objects, arrays by index and escaped names", () => {
    expect(
      approvalFor(rules({ pointer: "/lines/1/qty", op: "gte", value: 10 }), {
        lines: [{ qty: 1 }, { qty: 12 }],
      }),
    ).toEqual(DEFAULT_NEED);
    expect(
      approvalFor(rules({ pointer: "/lines/2/qty", op: "gte", value: 10 }), { lines: [{ qty: 12 }] }),
    ).toBeNull();
    expect(
      approvalFor(rules({ pointer: "/a~1b/c~0d", op: "eq", value: true }), { "a/b": { "c~d": true } }),
    ).toEqual(DEFAULT_NEED);
    expect(approvalFor(rules({ pointer: "/amount", op: "gt", value: 1 }), "not an object")).toBeNull();
  });
});

describe("toolExecutor and clientToolTimeoutMs", () => {
  it("a tool runs on the server unless it says client", () => {
    expect(toolExecutor(tool())).toBe("server");
    expect(toolExecutor(tool({ executor: "server" }))).toBe("server");
    expect(toolExecutor(toolSchema.parse({ name: "pick", description: "Picks.", executor: "client" }))).toBe(
      "client",
    );
  });

  it("a client tool waits 60 s unless its timeoutMs says otherwise", () => {
    const client = { name: "pick", description: "Picks.", executor: "client" };
    expect(clientToolTimeoutMs(toolSchema.parse(client))).toBe(60_000);
    expect(clientToolTimeoutMs(toolSchema.parse({ ...client, timeoutMs: 120_000 }))).toBe(120_000);
  });
});
