// SECURITY.md's token and claim cases as builders over a real session, shared by the upgrade and thread HTTP tests.
import { env } from "cloudflare:workers";
import { signVisitorToken } from "../../src/auth/visitor-token";
import { readToken } from "./edge-gate";
import { type Launch, type LiveAgent, launch, ORIGIN } from "./threads";
import { b64url, forgeToken, launchKeys, visitorKeys } from "./tokens";

/** A real launch plus the claims the server signed, to forge near-valid variants from. */
export interface Session {
  agent: LiveAgent;
  launch: Launch;
  claims: Record<string, unknown>;
}

export async function session(agent: LiveAgent, origin = ORIGIN): Promise<Session> {
  const launched = await launch(agent.publicKey, {}, origin);
  return { agent, launch: launched, claims: { ...readToken(launched.token).claims } };
}

export const now = () => Math.floor(Date.now() / 1000);
export const keyOf = (kid: string) => launchKeys().keys[kid]!;

export function segments(token: string): [string, string, string] {
  const [h, p, s] = token.split(".");
  return [h!, p!, s!];
}

/** A token with the given header and payload JSON and an arbitrary (or no) signature. */
function assemble(header: unknown, payload: unknown, signature = ""): string {
  return `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}.${signature}`;
}

/** Each case builds a token for a fresh, real session; every one must be refused with 401 before upgrade. */
export const tokenCases: [string, (s: Session) => Promise<string>][] = [
  ["abc", async () => "abc"],
  ["a.b", async () => "a.b"],
  ["a.b.c.d", async () => "a.b.c.d"],
  ["an empty token", async () => ""],
  ["three empty segments", async () => ".."],
  ...["none", "None", "NONE", "nOnE"].flatMap((alg): [string, (s: Session) => Promise<string>][] => [
    [
      `alg ${alg} without a signature`,
      async (s) => assemble({ alg, typ: "agent-launch+jwt", kid: "k2" }, s.claims),
    ],
    [
      `alg ${alg} with the original signature`,
      async (s) =>
        assemble({ alg, typ: "agent-launch+jwt", kid: "k2" }, s.claims, segments(s.launch.token)[2]),
    ],
  ]),
  ["a missing alg", (s) => forgeToken({ claims: s.claims, header: { alg: undefined } })],
  ["HS512 with the right key", (s) => forgeToken({ claims: s.claims, header: { alg: "HS512" } })],
  [
    "RS256 in the header over an HS256 signature",
    (s) => forgeToken({ claims: s.claims, header: { alg: "RS256" } }),
  ],
  ["the signature removed", async (s) => `${segments(s.launch.token).slice(0, 2).join(".")}.`],
  ["the signature segment removed", async (s) => segments(s.launch.token).slice(0, 2).join(".")],
  ["the signature truncated by 3 characters", async (s) => s.launch.token.slice(0, -3)],
  ...["tenantId", "threadId", "agentEntityId", "sub", "environment", "exp"].map(
    (claim): [string, (s: Session) => Promise<string>] => [
      `${claim} edited under the old signature`,
      async (s) => {
        const [h, , sig] = segments(s.launch.token);
        const value = claim === "exp" ? now() + 3600 : claim === "environment" ? "production" : "thr_other";
        return `${h}.${b64url(JSON.stringify({ ...s.claims, [claim]: value }))}.${sig}`;
      },
    ],
  ),
  // HMAC pads keys with zeros to the block size, so 64 zero bytes signs exactly as an empty key would.
  ["a signature with an empty key", (s) => forgeToken({ claims: s.claims, key: new Uint8Array(64) })],
  ["a signature with the key `secret`", (s) => forgeToken({ claims: s.claims, key: "secret" })],
  ["a signature with the tenant's API key", (s) => forgeToken({ claims: s.claims, key: s.agent.apiKey })],
  [
    "a signature with the visitor-token key",
    (s) => forgeToken({ claims: s.claims, key: visitorKeys().keys[visitorKeys().current]! }),
  ],
  ["k1's key under kid k2", (s) => forgeToken({ claims: s.claims, key: keyOf("k1"), header: { kid: "k2" } })],
  [
    "an embedded jwk",
    (s) =>
      forgeToken({
        claims: s.claims,
        key: "attacker-key-attacker-key-attacker-key",
        header: { jwk: { kty: "oct", k: b64url("attacker-key-attacker-key-attacker-key") } },
      }),
  ],
  [
    "a jku header",
    (s) => forgeToken({ claims: s.claims, header: { jku: "https://attacker.test/jwks.json" } }),
  ],
  [
    "an x5u header",
    (s) => forgeToken({ claims: s.claims, header: { x5u: "https://attacker.test/cert.pem" } }),
  ],
  ["a crit header", (s) => forgeToken({ claims: s.claims, header: { crit: ["exp"] } })],
  ["b64: false", (s) => forgeToken({ claims: s.claims, header: { b64: false, crit: ["b64"] } })],
  ["an unknown kid", (s) => forgeToken({ claims: s.claims, header: { kid: "k9" }, key: keyOf("k2") })],
  ["a missing kid", (s) => forgeToken({ claims: s.claims, header: { kid: undefined } })],
  ["a numeric kid", (s) => forgeToken({ claims: s.claims, header: { kid: 2 } })],
  ["a missing typ", (s) => forgeToken({ claims: s.claims, header: { typ: undefined } })],
  ["typ JWT", (s) => forgeToken({ claims: s.claims, header: { typ: "JWT" } })],
  ["the visitor token's typ", (s) => forgeToken({ claims: s.claims, header: { typ: "agent-visitor+jwt" } })],
  ["an access token's typ", (s) => forgeToken({ claims: s.claims, header: { typ: "at+jwt" } })],
  ["the visitor token itself", async (s) => s.launch.visitorToken!],
  [
    "a visitor token signed for this thread's subject",
    async (s) =>
      (
        await signVisitorToken(env, {
          sub: String(s.claims.sub),
          tenantId: s.agent.tenantId,
          agentId: s.agent.agentId,
        })
      ).token,
  ],
  ["a token over 4 KiB", (s) => forgeToken({ claims: { ...s.claims, pad: "x".repeat(4200) } })],
  [
    "the signature re-spelled with different unused bits",
    async (s) => {
      const [h, p, sig] = segments(s.launch.token);
      // 32 bytes are 43 characters whose last one carries 2 unused bits: flip one and the bytes stay the same.
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const last = alphabet.indexOf(sig.at(-1)!);
      return `${h}.${p}.${sig.slice(0, -1)}${alphabet[last ^ 1]}`;
    },
  ],
  [
    "the payload segment padded with =",
    async (s) => {
      const [h, p, sig] = segments(s.launch.token);
      return `${h}.${p}=.${sig}`;
    },
  ],
];

/** Claim edits signed with the right key: each must still be refused (401) unless stated. */
export const claimCases: [string, (c: Record<string, unknown>) => Record<string, unknown>][] = [
  ["exp past the leeway", (c) => ({ ...c, iat: now() - 100, exp: now() - 40 })],
  ["exp past the leeway by a day", (c) => ({ ...c, iat: now() - 86_700, exp: now() - 86_400 })],
  ["a missing exp", (c) => ({ ...c, exp: undefined })],
  ["a string exp", (c) => ({ ...c, exp: String(now() + 200) })],
  ["a null exp", (c) => ({ ...c, exp: null })],
  ["exp true", (c) => ({ ...c, exp: true })],
  ["a negative exp", (c) => ({ ...c, exp: -1 })],
  ["a fractional exp", (c) => ({ ...c, exp: now() + 200.5 })],
  ["nbf in the future", (c) => ({ ...c, nbf: now() + 120 })],
  ["iat in the future", (c) => ({ ...c, iat: now() + 120, exp: now() + 400 })],
  ["a missing iat", (c) => ({ ...c, iat: undefined })],
  ["a string iat", (c) => ({ ...c, iat: String(now()) })],
  ["a lifetime over the TTL", (c) => ({ ...c, iat: now(), exp: now() + 3600 })],
  ["a lifetime of zero", (c) => ({ ...c, iat: now(), exp: now() })],
  ["a wrong iss", (c) => ({ ...c, iss: "someone-else" })],
  ["a missing iss", (c) => ({ ...c, iss: undefined })],
  ["a wrong aud", (c) => ({ ...c, aud: "agent-threads:production" })],
  ["a missing aud", (c) => ({ ...c, aud: undefined })],
  ["a staging token", (c) => ({ ...c, environment: "staging", aud: "agent-threads:staging" })],
  ["a staging environment claim", (c) => ({ ...c, environment: "staging" })],
  ["a missing environment", (c) => ({ ...c, environment: undefined })],
  ["a missing jti", (c) => ({ ...c, jti: undefined })],
  ["an empty jti", (c) => ({ ...c, jti: "" })],
  ...["tenantId", "agentEntityId", "threadId", "sub"].flatMap(
    (claim): [string, (c: Record<string, unknown>) => Record<string, unknown>][] => [
      [`a missing ${claim}`, (c) => ({ ...c, [claim]: undefined })],
      [`an empty ${claim}`, (c) => ({ ...c, [claim]: "" })],
      [`a numeric ${claim}`, (c) => ({ ...c, [claim]: 42 })],
      [`a null ${claim}`, (c) => ({ ...c, [claim]: null })],
      [`an array ${claim}`, (c) => ({ ...c, [claim]: [c[claim]] })],
    ],
  ),
  ["another subject", (c) => ({ ...c, sub: "vis_ffffffffffffffffffffffffffffffff" })],
];
