// A launch's tool policy (docs/tools.md#tool-policy): one stored spelling, deny over allow, and a stored policy that
// cannot be read hides every tool rather than none.
import { describe, expect, it } from "vitest";
import { parseToolPolicyText, toolPermitted, toolPolicyText } from "../../src/control/tool-policy";

describe("tool policy", () => {
  it("is stored as one spelling: names sorted once, an empty deny dropped, no policy as null", () => {
    expect(toolPolicyText({ deny: ["b", "a", "b"] })).toBe('{"deny":["a","b"]}');
    expect(toolPolicyText({ allow: ["x"], deny: [] })).toBe('{"allow":["x"]}');
    expect(toolPolicyText({ allow: [] })).toBe('{"allow":[]}');
    expect(toolPolicyText({})).toBeNull();
    expect(toolPolicyText({ deny: [] })).toBeNull();
    expect(toolPolicyText(null)).toBeNull();
  });

  it("permits what allow names (all when absent) unless deny names it", () => {
    expect(toolPermitted(null, "lookup")).toBe(true);
    expect(toolPermitted({ deny: ["refund"] }, "lookup")).toBe(true);
    expect(toolPermitted({ deny: ["refund"] }, "refund")).toBe(false);
    expect(toolPermitted({ allow: ["lookup"] }, "refund")).toBe(false);
    expect(toolPermitted({ allow: ["lookup"], deny: ["lookup"] }, "lookup")).toBe(false);
    expect(toolPermitted({ allow: [] }, "lookup")).toBe(false);
  });

  it("reads back what it stored, and an unreadable policy as one hiding every tool", () => {
    expect(parseToolPolicyText('{"deny":["a"]}')).toEqual({ deny: ["a"] });
    expect(parseToolPolicyText(null)).toBeNull();
    for (const broken of ["{", '{"deny":"a"}', '{"only":["a"]}']) {
      expect(parseToolPolicyText(broken)).toEqual({ allow: [] });
    }
  });
});
