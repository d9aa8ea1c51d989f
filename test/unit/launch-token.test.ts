// Launch-token verification against SECURITY.md's token cases: every forgery is refused, valid tokens pass.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { signLaunchToken, verifyLaunchToken } from "../../src/auth/launch-token";
import { signVisitorToken } from "../../src/auth/visitor-token";
import { b64url, baseLaunchClaims, forgeToken, launchKeys, signWithJose } from "../helpers/tokens";

const grant = {
  tenantId: "ten_a",
  agentId: "agt_a",
  threadId: "thr_0123456789abcdef0123456789abcdef",
  sub: "vis_0123456789abcdef0123456789abcdef",
  subjectKind: "visitor" as const,
};

async function refused(token: string, now?: Date) {
  const result = await verifyLaunchToken(env, token, now);
  expect(result.ok).toBe(false);
  return result;
}

describe("launch tokens", () => {
  it("verifies a token it signed, with all claims", async () => {
    const { token } = await signLaunchToken(env, grant);
    const result = await verifyLaunchToken(env, token);
    expect(result.ok).toBe(true);
    if (result.ok) expect(result.claims).toMatchObject({ ...grant, environment: "development" });
  });

  it("accepts a forged-by-us baseline token (positive control for the forgery helper)", async () => {
    expect((await verifyLaunchToken(env, await forgeToken())).ok).toBe(true);
  });

  it.each(["", "abc", "a.b", "a.b.c", "a.b.c.d", "..", "a..c"])(
    "refuses the malformed token %j",
    async (token) => {
      await refused(token);
    },
  );

  it.each(["none", "None", "NONE", "nOnE"])("refuses alg %s", async (alg) => {
    const good = await forgeToken();
    const [, payload] = good.split(".");
    const header = b64url(JSON.stringify({ alg, typ: "agent-launch+jwt", kid: launchKeys().current }));
    await refused(`${header}.${payload}.`);
    await refused(`${header}.${payload}.${good.split(".")[2]}`);
  });

  it("refuses a missing alg", async () => {
    await refused(await forgeToken({ header: { alg: undefined } }));
  });

  it("refuses HS512 signed with the right key", async () => {
    const keys = launchKeys();
    const header = b64url(JSON.stringify({ alg: "HS512", typ: "agent-launch+jwt", kid: keys.current }));
    const payload = b64url(JSON.stringify(baseLaunchClaims()));
    const key = await crypto.subtle.importKey(
      "raw",
      new TextEncoder().encode(keys.keys[keys.current]),
      { name: "HMAC", hash: "SHA-512" },
      false,
      ["sign"],
    );
    const sig = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${header}.${payload}`));
    await refused(`${header}.${payload}.${b64url(new Uint8Array(sig))}`);
  });

  it("refuses a removed or truncated signature", async () => {
    const token = await forgeToken();
    const [h, p, s] = token.split(".");
    await refused(`${h}.${p}.`);
    await refused(`${h}.${p}`);
    await refused(`${h}.${p}.${s!.slice(0, -3)}`);
  });

  it.each(["tenantId", "threadId", "agentEntityId", "sub"])(
    "refuses an edited %s under the old signature",
    async (claim) => {
      const token = await forgeToken();
      const [h, , s] = token.split(".");
      const edited = b64url(JSON.stringify({ ...baseLaunchClaims(), [claim]: "someone-else" }));
      await refused(`${h}.${edited}.${s}`);
    },
  );

  it.each([
    ["empty", ""],
    ["'secret'", "secret"],
    ["an API key", "sk_aaaaaaaaaaaaaaaaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"],
  ])("refuses a token signed with a wrong key (%s)", async (_label, key) => {
    // HMAC pads keys with zeros to the block size, so 64 zero bytes is the empty key WebCrypto will not import.
    await refused(await forgeToken({ key: key === "" ? new Uint8Array(64) : key }));
  });

  it.each([
    ["jwk", { kty: "oct", k: "c2VjcmV0" }],
    ["jku", "https://evil.test/jwks.json"],
    ["x5u", "https://evil.test/cert.pem"],
    ["crit", ["exp"]],
  ])("refuses a header carrying %s", async (name, value) => {
    await refused(await forgeToken({ header: { [name]: value } }));
  });

  it("refuses an unknown or retired kid and accepts the previous kid", async () => {
    const keys = launchKeys();
    await refused(await forgeToken({ header: { kid: "k-unknown" } }));
    await refused(await forgeToken({ header: { kid: undefined } }));
    const previous = Object.keys(keys.keys).find((kid) => kid !== keys.current)!;
    const previousToken = await forgeToken({ header: { kid: previous }, key: keys.keys[previous]! });
    expect((await verifyLaunchToken(env, previousToken)).ok).toBe(true);
    const retiredEnv = {
      ...env,
      LAUNCH_TOKEN_KEYS: JSON.stringify({ ...keys, retired: [previous] }),
    };
    expect((await verifyLaunchToken(retiredEnv, previousToken)).ok).toBe(false);
  });

  it.each([[undefined], ["JWT"], ["agent-visitor+jwt"], ["jwt"]])("refuses typ %j", async (typ) => {
    await refused(await forgeToken({ header: { typ } }));
  });

  it("refuses a visitor token used as a launch token", async () => {
    const { token } = await signVisitorToken(env, {
      sub: "vis_0123456789abcdef0123456789abcdef",
      tenantId: "ten_a",
      agentId: "agt_a",
    });
    await refused(token);
  });

  it("refuses a token over 4 KiB", async () => {
    await refused(await forgeToken({ claims: { pad: "x".repeat(4200) } }));
  });

  it("refuses expiry past the leeway but accepts inside it", async () => {
    const now = Math.floor(Date.now() / 1000);
    const expired = await refused(await forgeToken({ claims: { iat: now - 400, exp: now - 31 } }));
    expect(expired).toMatchObject({ expired: true });
    expect(
      (await verifyLaunchToken(env, await forgeToken({ claims: { iat: now - 300, exp: now - 10 } }))).ok,
    ).toBe(true);
  });

  it.each([
    ["missing", undefined],
    ["a string", "9999999999"],
    ["null", null],
    ["true", true],
    ["negative", -1],
  ])("refuses exp %s", async (_label, exp) => {
    await refused(await forgeToken({ claims: { exp } }));
  });

  it("refuses nbf or iat in the future, and a missing iat", async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(await forgeToken({ claims: { nbf: now + 120 } }));
    await refused(await forgeToken({ claims: { iat: now + 120, exp: now + 400 } }));
    await refused(await forgeToken({ claims: { iat: undefined } }));
  });

  it("refuses a lifetime longer than the TTL", async () => {
    const now = Math.floor(Date.now() / 1000);
    await refused(await forgeToken({ claims: { iat: now, exp: now + 3600 } }));
  });

  it.each([
    ["iss", "someone-else"],
    ["iss", undefined],
    ["aud", "agent-threads:production"],
    ["aud", undefined],
    ["jti", undefined],
    ["jti", ""],
  ])("refuses %s = %j", async (claim, value) => {
    await refused(await forgeToken({ claims: { [claim]: value } }));
  });

  it("refuses a staging token on development (another environment)", async () => {
    await refused(await forgeToken({ claims: { environment: "staging", aud: "agent-threads:staging" } }));
    await refused(await forgeToken({ claims: { environment: "staging" } }));
  });

  it.each(["tenantId", "agentEntityId", "threadId", "sub"])(
    "refuses %s missing, empty or not a string",
    async (c) => {
      await refused(await forgeToken({ claims: { [c]: undefined } }));
      await refused(await forgeToken({ claims: { [c]: "" } }));
      await refused(await forgeToken({ claims: { [c]: 42 } }));
      await refused(await forgeToken({ claims: { [c]: ["x"] } }));
    },
  );

  it("signs with the current kid", async () => {
    const { token } = await signLaunchToken(env, grant);
    const header = JSON.parse(atob(token.split(".")[0]!.replace(/-/g, "+").replace(/_/g, "/")));
    expect(header).toEqual({ alg: "HS256", typ: "agent-launch+jwt", kid: launchKeys().current });
  });

  it("jose-signed token with an unknown kid is refused", async () => {
    await refused(await signWithJose(baseLaunchClaims(), "nope", "x".repeat(40)));
  });
});
