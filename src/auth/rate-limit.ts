// Launch rate limits per (agent key, client network) through the Workers Rate Limiting binding, and tenant quotas.
import { AppError } from "../errors";
import { PUBLIC_LAUNCHES, tenantQuota } from "./tenant-quota";

/** The binding's window; a refused caller is told to come back after it. */
const LAUNCH_WINDOW_SECONDS = 60;

/** `CF-Connecting-IP` only: `X-Forwarded-For` is client-controlled. */
export function clientIp(request: Request): string {
  return request.headers.get("CF-Connecting-IP") ?? "unknown";
}

/**
 * The network a client address is limited as: an IPv4 address itself, an IPv6 address its /64 (one subscriber is
 * routinely handed a whole /64, so counting single addresses there limits nothing). An IPv4-mapped IPv6 address is
 * its IPv4 address; anything that is not an address is kept as it came.
 */
export function clientNetwork(ip: string): string {
  if (!ip.includes(":")) return ip;
  const address = ip
    .replace(/^\[|\]$/g, "")
    .split("%")[0]!
    .toLowerCase();
  const hextets = expandIpv6(address);
  if (hextets === null) return ip;
  if (hextets.slice(0, 5).every((h) => h === 0) && hextets[5] === 0xffff) {
    return [hextets[6]! >> 8, hextets[6]! & 255, hextets[7]! >> 8, hextets[7]! & 255].join(".");
  }
  return `${hextets
    .slice(0, 4)
    .map((h) => h.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (`::` and a dotted IPv4 tail allowed), or null. */
function expandIpv6(address: string): number[] | null {
  let text = address;
  const dotted = text.match(/^(.*:)(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/);
  if (dotted !== null) {
    const octets = dotted.slice(2, 6).map(Number);
    if (octets.some((o) => o > 255)) return null;
    text = `${dotted[1]}${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (half: string) => (half === "" ? [] : half.split(":"));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => Number.parseInt(g, 16));
}

export async function enforceLaunchRateLimit(env: Env, agentKey: string, ip: string): Promise<void> {
  const { success } = await env.LAUNCH_LIMITER.limit({ key: `launch:${agentKey}:${clientNetwork(ip)}` });
  if (!success) {
    throw new AppError("rate_limited", "Too many launches; try again shortly.", {
      retryAfter: LAUNCH_WINDOW_SECONDS,
    });
  }
}

export function dailyLaunchQuota(env: Env): number {
  const n = Number(env.TENANT_DAILY_LAUNCH_QUOTA);
  return Number.isInteger(n) && n > 0 ? n : 100_000;
}

/** Gives back a launch `consumeLaunchQuota` took, when the launch failed before storing anything. Best effort. */
export async function refundLaunchQuota(env: Env, tenantId: string, agentId?: string): Promise<void> {
  try {
    await tenantQuota(env, tenantId).refundLaunch(agentId);
  } catch (error) {
    console.error(JSON.stringify({ level: "error", message: "launch refund failed", error: String(error) }));
  }
}

/**
 * A new launch's quota: one unit of the tenant's daily launches and, for a public launch (`agentId`), one of the
 * public launches and one of that agent's share, in one call to the tenant's quota object (docs/decisions.md,
 * "Launch budgets"). A disabled tenant's launch is `403`; a refusal consumes nothing.
 */
export async function consumeLaunchQuota(env: Env, tenantId: string, agentId?: string): Promise<void> {
  const decision = await tenantQuota(env, tenantId).consumeLaunch(dailyLaunchQuota(env), agentId);
  if (decision.ok) return;
  if (decision.disabled) throw new AppError("forbidden", "This account is disabled.");
  throw new AppError(
    "quota_exceeded",
    decision.kind === "launches"
      ? "The daily launch quota for this account is used up."
      : decision.kind === PUBLIC_LAUNCHES
        ? "The daily launch quota for this account's public launches is used up."
        : "The daily launch budget for this agent is used up.",
    { retryAfter: decision.retryAfterSeconds },
  );
}

/** How long a tenant whose launch a limiter refused has its launches limited before their quota is taken. */
const REFUSAL_MEMORY_MS = LAUNCH_WINDOW_SECONDS * 1000;
const REFUSAL_MEMORY_MAX = 10_000;
/** Tenant id → until when (epoch ms), in this isolate. */
const refusedTenants = new Map<string, number>();

function refusedRecently(tenantId: string, now: number): boolean {
  const until = refusedTenants.get(tenantId);
  if (until === undefined) return false;
  if (until > now) return true;
  refusedTenants.delete(tenantId);
  return false;
}

function rememberRefusal(tenantId: string, now: number): void {
  refusedTenants.delete(tenantId);
  if (refusedTenants.size >= REFUSAL_MEMORY_MAX) {
    const oldest = refusedTenants.keys().next();
    if (!oldest.done) refusedTenants.delete(oldest.value);
  }
  refusedTenants.set(tenantId, now + REFUSAL_MEMORY_MS);
}

/**
 * A new launch's rate limits (`limits`, throwing the refusal) and its quota (`consumeLaunchQuota`), side by side: the
 * quota taken beside a launch the limits refuse is given back before the refusal is answered, so such a launch
 * still consumes no quota (docs/decisions.md, "Launch latency"). A limits refusal wins over a quota refusal, as when
 * they ran in turn. Once a limit refused one of a tenant's launches in this isolate, that tenant's launches run the
 * limits first again for the rest of the window: a flood the limiter stops costs its quota object nothing.
 */
export async function admitNewLaunch(
  env: Env,
  tenantId: string,
  agentId: string | undefined,
  limits: () => Promise<void>,
  now: number = Date.now(),
): Promise<void> {
  const remember = (error: unknown) => {
    if (error instanceof AppError && error.code === "rate_limited") rememberRefusal(tenantId, now);
    throw error;
  };
  if (refusedRecently(tenantId, now)) {
    await limits().catch(remember);
    await consumeLaunchQuota(env, tenantId, agentId);
    return;
  }
  const [limited, counted] = await Promise.allSettled([limits(), consumeLaunchQuota(env, tenantId, agentId)]);
  if (limited.status === "rejected") {
    if (counted.status === "fulfilled") await refundLaunchQuota(env, tenantId, agentId);
    remember(limited.reason);
  }
  if (counted.status === "rejected") throw counted.reason;
}
