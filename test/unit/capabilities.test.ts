// What a version needs of its runtime, from the artifact alone (docs/api.md#runtime-revisions), and the 409 naming it.
import { describe, expect, it } from "vitest";
import { artifactSchema } from "../../src/control/artifact";
import {
  missingCapabilities,
  requiredCapabilities,
  runtimeIncompatible,
} from "../../src/control/capabilities";
import { CURRENT_RUNTIME } from "../../src/control/runtime";

const base = artifactSchema.parse({
  schemaVersion: 1,
  name: "Support",
  instructions: "Answer briefly.",
  model: { provider: "local", model: "echo" },
});

// An older build, registered before attachments existed.
const older = {
  id: "runtime-older",
  supportedSchemaVersions: [1],
  capabilities: CURRENT_RUNTIME.capabilities.filter((c) => c !== "attachments"),
};

describe("requiredCapabilities", () => {
  it("needs nothing for a plain artifact, whatever the runtime", () => {
    expect(requiredCapabilities(base)).toEqual([]);
    expect(missingCapabilities(requiredCapabilities(base), { ...older, capabilities: [] })).toEqual([]);
  });

  it("needs attachments when the artifact enables them, which an older revision without them lacks", () => {
    const enabled = Object.assign(structuredClone(base), { attachments: { enabled: true } });
    expect(requiredCapabilities(enabled)).toEqual(["attachments"]);
    expect(missingCapabilities(requiredCapabilities(enabled), older)).toEqual(["attachments"]);
    expect(missingCapabilities(requiredCapabilities(enabled), CURRENT_RUNTIME)).toEqual([]);
    const disabled = Object.assign(structuredClone(base), { attachments: { enabled: false } });
    expect(requiredCapabilities(disabled)).toEqual([]);
  });

  it("lists each need once, in the registry's order", () => {
    const artifact = artifactSchema.parse({
      ...base,
      instructions: "Greet {{ name }}.",
      handoff: { enabled: true },
      tools: [
        { name: "a", description: "A.", executor: "client", approval: "always" },
        { name: "b", description: "B.", executor: "client", approval: "never" },
      ],
    });
    expect(requiredCapabilities(artifact)).toEqual(["tools.client", "approvals", "handoff", "context"]);
  });

  it("does not read braces that are no placeholder as context", () => {
    expect(requiredCapabilities({ ...base, instructions: "Answer in JSON like {{}} or { {a} }." })).toEqual(
      [],
    );
  });
});

describe("runtimeIncompatible", () => {
  it("is a 409 conflict with reason runtime_incompatible naming every missing capability and version", () => {
    const refusal = runtimeIncompatible("runtime-older", [
      { index: 0, version: 3, missing: ["attachments"] },
      { index: 2, version: 5, missing: ["attachments", "tools.client"] },
    ]);
    expect(refusal).toMatchObject({
      ok: false,
      code: "conflict",
      reason: "runtime_incompatible",
      message: "Runtime 'runtime-older' lacks attachments, tools.client, needed by versions 3, 5.",
    });
    expect(refusal.details).toEqual([
      {
        path: "allocations.0.version",
        message: "version 3 needs attachments, which runtime 'runtime-older' lacks",
        missing: ["attachments"],
      },
      {
        path: "allocations.2.version",
        message: "version 5 needs attachments, tools.client, which runtime 'runtime-older' lacks",
        missing: ["attachments", "tools.client"],
      },
    ]);
  });
});
