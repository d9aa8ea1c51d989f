// The control-plane service: the deployment port over HTTP for Workers holding the workload credential
// (docs/control-plane.md#routes). A Hono app with no Node specifics, so tests run it in-process too.
import { Hono } from "hono";
import { tokenError } from "../auth/jwt";
import { requireScope, verifyWorkloadToken, type WorkloadClaims } from "../auth/workload-token";
import {
  DEPLOYMENT_ROUTE_PREFIX,
  DEPLOYMENT_ROUTES,
  type DeploymentMethod,
  FAILURE_HEADER,
  RESULT_METHODS,
  scopeOfCall,
} from "../control/control-plane-routes";
import type { DeploymentStore } from "../control/deployment-store";
import { AppError, type Failure } from "../errors";

export interface ControlPlaneOptions {
  store: DeploymentStore;
  /** The verifying key set (`{current, keys, retired?}`), the one the Worker's CONTROL_PLANE_TOKEN signs with. */
  keys: string;
  audience?: string;
  /** Readiness: null when the database answers and is migrated, else why not. */
  ready: () => Promise<string | null>;
  now?: () => Date;
  log?: (line: Record<string, unknown>) => void;
}

type ServiceEnv = { Variables: { claims: WorkloadClaims } };

const METHOD_BY_PATH = new Map(
  (
    Object.entries(DEPLOYMENT_ROUTES) as [DeploymentMethod, (typeof DEPLOYMENT_ROUTES)[DeploymentMethod]][]
  ).map(([method, route]) => [route.path, method]),
);

function errorBody(error: AppError | Failure, requestId: string) {
  return {
    error: {
      code: error.code,
      ...(error.reason !== undefined ? { reason: error.reason } : {}),
      message: error.message,
      requestId,
      ...(error.details !== undefined ? { details: error.details } : {}),
    },
  };
}

export function createControlPlaneApp(options: ControlPlaneOptions) {
  const now = options.now ?? (() => new Date());
  const log = options.log ?? ((line) => console.log(JSON.stringify(line)));
  const app = new Hono<ServiceEnv>();

  app.onError((error, c) => {
    const requestId = crypto.randomUUID();
    if (error instanceof AppError) return c.json(errorBody(error, requestId), error.status as 400);
    log({
      level: "error",
      msg: "control-plane request failed",
      path: c.req.path,
      requestId,
      error: String(error),
    });
    return c.json(errorBody(new AppError("internal", "Internal error."), requestId), 500);
  });
  app.notFound((c) =>
    c.json(errorBody(new AppError("not_found", "Route not found."), crypto.randomUUID()), 404),
  );

  app.get("/health", (c) => c.json({ ok: true }));
  app.get("/ready", async (c) => {
    const problem = await options.ready().catch((error: unknown) => String(error));
    return problem === null ? c.json({ ready: true }) : c.json({ ready: false, problem }, 503);
  });

  // The authorizer: a valid token first (signature by kid, audience, expiry), then its scope against the body.
  app.use(`${DEPLOYMENT_ROUTE_PREFIX}*`, async (c, next) => {
    const header = c.req.header("authorization") ?? "";
    const token = header.startsWith("Bearer ") ? header.slice(7) : "";
    const verified = await verifyWorkloadToken(options.keys, token, {
      ...(options.audience !== undefined ? { audience: options.audience } : {}),
      now: now(),
    });
    if (!verified.ok) {
      log({ level: "warn", msg: "workload token refused", reason: verified.reason, path: c.req.path });
      throw tokenError(verified);
    }
    c.set("claims", verified.claims);
    await next();
  });

  app.post(`${DEPLOYMENT_ROUTE_PREFIX}*`, async (c) => {
    const method = METHOD_BY_PATH.get(c.req.path.slice(DEPLOYMENT_ROUTE_PREFIX.length));
    if (method === undefined) throw new AppError("not_found", "Route not found.");
    const route = DEPLOYMENT_ROUTES[method];
    const raw: unknown = await c.req.json().catch(() => {
      throw new AppError("bad_request", "The body must be JSON.");
    });
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      throw new AppError("bad_request", "The body must be a JSON object.");
    }
    const body = raw as Record<string, unknown>;
    // Only the tenant is read here, for the scope; the store validates the rest as every adapter does.
    const args = route.params.map((name) => body[name]);
    const scope = scopeOfCall(method, body);
    if (scope === null) throw new AppError("bad_request", "The body names no tenant.");
    requireScope(c.get("claims"), scope);

    const call = (options.store[method] as (...a: unknown[]) => Promise<unknown>).bind(options.store);
    let value: unknown;
    try {
      value = await call(...args);
    } catch (error) {
      // An error the store raised on purpose (a bad cursor, a tampered row) crosses as itself, marked as the store's.
      if (error instanceof AppError) c.header(FAILURE_HEADER, "thrown");
      throw error;
    }
    if (RESULT_METHODS.has(method)) {
      const result = value as { ok: true; value: unknown } | Failure;
      if (!result.ok) {
        c.header(FAILURE_HEADER, "1");
        return c.json(errorBody(result, crypto.randomUUID()), new AppError(result.code, "").status as 400);
      }
      return c.json({ value: result.value });
    }
    return c.json({ value: value ?? null });
  });

  return app;
}
