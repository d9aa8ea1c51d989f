// `limits.runTimeoutMs`: its bounds and description in the artifact schema, and the 5-minute default a thread runs at.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { artifactSchema, DEFAULT_RUN_TIMEOUT_MS } from "../../src/control/artifact";
import type { ThreadBinding } from "../../src/storage/thread/pin-store";
import { threadLimits } from "../../src/thread/run/thread-limits";

const minimal = {
  schemaVersion: 1,
  name: "Support",
  instructions: "Answer briefly.",
  model: { provider: "local", model: "echo" },
};
const withTimeout = (runTimeoutMs: unknown) => ({ ...minimal, limits: { runTimeoutMs } });

describe("limits.runTimeoutMs", () => {
  it("admits 1 s to 15 min in whole milliseconds and refuses anything else, naming the field", () => {
    for (const ms of [1000, 1001, 300_000, 900_000])
      expect(artifactSchema.safeParse(withTimeout(ms)).success).toBe(true);
    for (const ms of [0, 999, 900_001, 1500.5, "300000", null]) {
      const result = artifactSchema.safeParse(withTimeout(ms));
      expect(result.success, String(ms)).toBe(false);
      expect(result.error?.issues.map((i) => i.path.join("."))).toEqual(["limits.runTimeoutMs"]);
    }
  });

  it("is described in the artifact's JSON Schema", () => {
    const schema = z.toJSONSchema(artifactSchema, { io: "input", unrepresentable: "any" });
    const field = z
      .object({
        properties: z.object({
          limits: z.object({
            properties: z.object({
              runTimeoutMs: z.object({ minimum: z.number(), maximum: z.number(), description: z.string() }),
            }),
          }),
        }),
      })
      .parse(schema).properties.limits.properties.runTimeoutMs;
    expect(field).toMatchObject({ minimum: 1000, maximum: 900_000 });
    expect(field.description).toContain("300000");
  });

  it("defaults to five minutes for a thread whose version sets none", () => {
    const binding = (artifact: unknown): ThreadBinding => ({
      tenantId: "ten_a",
      environment: "development",
      agentId: "agt_a",
      threadId: "thr_a",
      versionId: "ver_a",
      version: 1,
      digest: "sha256:0",
      artifact: artifactSchema.parse(artifact),
      boundAt: 0,
    });
    expect(DEFAULT_RUN_TIMEOUT_MS).toBe(300_000);
    expect(threadLimits(binding(minimal)).runTimeoutMs).toBe(300_000);
    expect(threadLimits(binding(withTimeout(5000))).runTimeoutMs).toBe(5000);
  });
});
