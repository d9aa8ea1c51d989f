// What the widget trusts from outside: launch sessions, its own saved state (host-writable storage) and strings.
import { describe, expect, it } from "vitest";
import { accentCss } from "../../src/widget/presentation-rules";
import { parseSaved, persistMode } from "../../src/widget/saved";
import { parseSession } from "../../src/widget/session";
import { DEFAULT_STRINGS, format, mergeStrings } from "../../src/widget/strings";

const launch = {
  token: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ2aXMifQ.c2ln-_",
  expiresAt: "2030-01-01T00:05:00.000Z",
  threadId: "thr_abc",
  websocketUrl: "wss://agents.example.com/v1/threads/thr_abc/ws",
  threadUrl: "https://agents.example.com/v1/threads/thr_abc",
  protocol: "agent.v1",
};

describe("parseSession", () => {
  it("takes a launch response as the server sends it", () => {
    expect(parseSession(launch)).toEqual({
      token: launch.token,
      expiresAt: Date.parse(launch.expiresAt),
      threadId: "thr_abc",
      websocketUrl: launch.websocketUrl,
    });
  });

  it("accepts expiresAt as epoch seconds or milliseconds from a host's backend", () => {
    expect(parseSession({ ...launch, expiresAt: 1_900_000_000 })?.expiresAt).toBe(1_900_000_000_000);
    expect(parseSession({ ...launch, expiresAt: 1_900_000_000_000 })?.expiresAt).toBe(1_900_000_000_000);
  });

  it("refuses what could not work or could smuggle something into the subprotocol", () => {
    for (const bad of [
      null,
      "token",
      { ...launch, token: "" },
      { ...launch, token: "a b" },
      { ...launch, token: "a,bearer.b" },
      { ...launch, token: "a/b=" },
      { ...launch, websocketUrl: "https://agents.example.com/ws" },
      { ...launch, websocketUrl: "javascript:alert(1)" },
      { ...launch, expiresAt: "soon" },
      { ...launch, threadId: 7 },
    ]) {
      expect(parseSession(bad), JSON.stringify(bad)).toBeNull();
    }
  });
});

describe("parseSaved", () => {
  it("reads back only the fields the widget writes, each type-checked", () => {
    expect(
      parseSaved(JSON.stringify({ threadId: "thr_1", visitorToken: "v.t.s", runId: "run_1", seq: 4 })),
    ).toEqual({ threadId: "thr_1", visitorToken: "v.t.s", runId: "run_1", seq: 4 });
    expect(parseSaved(JSON.stringify({ threadId: 5, visitorToken: ["x"], seq: -1, extra: "x" }))).toEqual({});
    expect(parseSaved(JSON.stringify({ seq: 1.5, runId: "" }))).toEqual({});
    expect(parseSaved("not json")).toEqual({});
    expect(parseSaved("null")).toEqual({});
    expect(parseSaved(null)).toEqual({});
  });

  it("reads back the panel's open state and the accent rule accentCss writes, and nothing else in their place", () => {
    for (const color of ["#0f766e", "#FDE047", "#777777"]) {
      const accent = accentCss(color);
      expect(parseSaved(JSON.stringify({ open: true, accent }))).toEqual({ open: true, accent });
    }
    expect(
      parseSaved(JSON.stringify({ open: "yes", accent: ":host{--at-accent:red}*{display:none}" })),
    ).toEqual({});
    expect(parseSaved(JSON.stringify({ open: 1, accent: "" }))).toEqual({});
  });

  it("defaults persistence to local and accepts session and memory", () => {
    expect(persistMode(undefined)).toBe("local");
    expect(persistMode("cookie")).toBe("local");
    expect(persistMode("session")).toBe("session");
    expect(persistMode("memory")).toBe("memory");
  });
});

describe("strings", () => {
  it("override known keys with strings only, from JSON text or an object", () => {
    const merged = mergeStrings('{"send":"Envoyer","open":5,"unknown":"x","__proto__":{"send":"p"}}');
    expect(merged.send).toBe("Envoyer");
    expect(merged.open).toBe(DEFAULT_STRINGS.open);
    expect("unknown" in merged).toBe(false);
    expect(mergeStrings({ close: "Schließen" }).close).toBe("Schließen");
    expect(mergeStrings("{broken")).toEqual(DEFAULT_STRINGS);
  });

  it("fill placeholders and leave unknown ones as written", () => {
    expect(format("{agent}: {text} {missing}", { agent: "Ada", text: "hi" })).toBe("Ada: hi {missing}");
    expect(format("{constructor}", {})).toBe("{constructor}");
  });
});
