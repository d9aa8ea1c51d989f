import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signLaunchToken, verifyLaunchToken } from "../../src/auth/launch-token";
import { parseThreadClaims } from "../../src/thread/contract";

const claims = {
  tenantId: "ten_a",
  environment: "development",
  agentId: "agt_a",
  threadId: "thr_0123456789abcdef0123456789abcdef",
  sub: "vis_0123456789abcdef0123456789abcdef",
  subjectKind: "visitor",
} as const;

describe("thread claims", () => {
  it("reads claims a socket stored before the agent was called agentId", () => {
    const { agentId, ...rest } = claims;
    expect(parseThreadClaims(JSON.stringify({ ...rest, agentEntityId: agentId }))).toEqual(claims);
    expect(parseThreadClaims(JSON.stringify(claims))).toEqual(claims);
  });

  it("still refuses unknown keys and missing ones", () => {
    expect(parseThreadClaims(JSON.stringify({ ...claims, admin: true }))).toBeNull();
    const { agentId: _agentId, ...withoutAgent } = claims;
    expect(parseThreadClaims(JSON.stringify(withoutAgent))).toBeNull();
  });

  it("keeps the SPEC's claim name agentEntityId on the wire of a launch token", async () => {
    const { token } = await signLaunchToken(env, {
      tenantId: claims.tenantId,
      agentId: claims.agentId,
      threadId: claims.threadId,
      sub: claims.sub,
      subjectKind: "visitor",
    });
    const payload = JSON.parse(atob(token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/")));
    expect(payload.agentEntityId).toBe(claims.agentId);
    expect(payload).not.toHaveProperty("agentId");
    const verified = await verifyLaunchToken(env, token);
    expect(verified.ok && verified.claims.agentId).toBe(claims.agentId);
  });
});
