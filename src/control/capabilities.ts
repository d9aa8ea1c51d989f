// What a runtime revision can run, and what a version's artifact needs of it: a release is refused when they differ (docs/api.md#runtime-revisions).
import { z } from "zod";
import type { Failure } from "../errors";
import type { Artifact } from "./artifact";
import { expandContext } from "./context-template";
import type { RuntimeRevision } from "./deployment-store";
import { toolExecutor } from "./tool-approval";

/** Every capability this codebase knows, as a runtime registers it; wire strings, never renamed. */
export const RUNTIME_CAPABILITIES = [
  "tools.server",
  "tools.client",
  "approvals",
  "attachments",
  "handoff",
  "upgrades",
  "context",
] as const;

export type RuntimeCapability = (typeof RUNTIME_CAPABILITIES)[number];

const attachmentsOn = z.object({ enabled: z.literal(true) });

/** A template uses the launch's context when expanding it with no variables changes it (a placeholder became ""). */
const usesContext = (template: string | undefined): boolean =>
  template !== undefined && expandContext(template, {}) !== template;

/**
 * The capabilities a version needs, in RUNTIME_CAPABILITIES order: a server or client tool, a tool that may wait for
 * approval, `handoff` (enabled, or an approval whose timeout hands off), `attachments.enabled`, `upgrades: "offer"`,
 * and `{{…}}` placeholders in `instructions` or `greeting`.
 */
export function requiredCapabilities(artifact: Artifact): RuntimeCapability[] {
  const needed = new Set<RuntimeCapability>();
  for (const tool of artifact.tools ?? []) {
    needed.add(toolExecutor(tool) === "client" ? "tools.client" : "tools.server");
    const approval = tool.approval;
    if (approval === undefined || approval === "never") continue;
    needed.add("approvals");
    if (typeof approval === "object" && approval.onTimeout === "handoff") needed.add("handoff");
  }
  if (artifact.handoff?.enabled) needed.add("handoff");
  // Read as unknown and parsed: the artifact's `attachments` section may be newer than this module.
  if (attachmentsOn.safeParse(Reflect.get(artifact, "attachments")).success) needed.add("attachments");
  if (artifact.upgrades === "offer") needed.add("upgrades");
  if (usesContext(artifact.instructions) || usesContext(artifact.greeting)) needed.add("context");
  return RUNTIME_CAPABILITIES.filter((c) => needed.has(c));
}

/** What `required` names that `runtime` did not register. */
export function missingCapabilities(required: readonly string[], runtime: RuntimeRevision): string[] {
  const has = new Set(runtime.capabilities);
  return required.filter((c) => !has.has(c));
}

/** One allocated version the runtime cannot run: its place in the allocations and what it lacks. */
export interface Shortfall {
  index: number;
  version: number;
  missing: string[];
}

/** 409 `runtime_incompatible`: the message and each allocation's `missing` name the capabilities. */
export function runtimeIncompatible(runtimeId: string, shortfalls: Shortfall[]): Failure {
  const missing = [...new Set(shortfalls.flatMap((s) => s.missing))];
  const versions = shortfalls.map((s) => s.version).join(", ");
  return {
    ok: false,
    code: "conflict",
    reason: "runtime_incompatible",
    message: `Runtime '${runtimeId}' lacks ${missing.join(", ")}, needed by version${shortfalls.length > 1 ? "s" : ""} ${versions}.`,
    details: shortfalls.map((s) => ({
      path: `allocations.${s.index}.version`,
      message: `version ${s.version} needs ${s.missing.join(", ")}, which runtime '${runtimeId}' lacks`,
      missing: s.missing,
    })),
  };
}
