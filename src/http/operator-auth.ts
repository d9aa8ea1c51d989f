// Operator authentication: only the Worker's OPERATOR_TOKEN opens the operator API, compared in constant time.
import { createMiddleware } from "hono/factory";
import { AppError } from "../errors";
import { constantTimeEqual, hmacSha256, randomBytes } from "../shared/bytes";
import { toHex } from "../shared/hex";
import { bearerToken } from "./bearer";
import type { AppEnv } from "./context";

// A per-isolate random key: both sides are hashed to equal length first, so the comparison leaks no length.
// Created on first use: workerd refuses random values in global scope.
let comparisonKey: ReturnType<typeof randomBytes> | undefined;

export async function isOperatorToken(env: Env, authorization: string | undefined): Promise<boolean> {
  const expected = env.OPERATOR_TOKEN ?? "";
  const presented = bearerToken(authorization, 512);
  // An unset or trivially short operator token opens nothing.
  if (expected.length < 16 || presented === null) return false;
  comparisonKey ??= randomBytes(32);
  const [a, b] = await Promise.all([
    hmacSha256(comparisonKey, presented),
    hmacSha256(comparisonKey, expected),
  ]);
  return constantTimeEqual(toHex(a), toHex(b));
}

export const operatorAuth = createMiddleware<AppEnv>(async (c, next) => {
  if (!(await isOperatorToken(c.env, c.req.header("Authorization")))) {
    throw new AppError("unauthenticated", "A valid operator token is required.");
  }
  await next();
});
