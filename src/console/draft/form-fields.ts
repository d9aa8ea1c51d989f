// The artifact's fields the form shows, by path, and where in the form an issue's path belongs: data only, so the
// placement can be tested without a browser.
import { getAt, type Path, pathKey } from "./json-path";

export interface Spec {
  path: Path;
  label: string;
  kind: "text" | "textarea" | "number" | "select" | "check" | "color";
  options?: readonly string[];
  /** The empty choice of an optional select, e.g. "(default: reject)". */
  none?: string;
  hint?: string;
  required?: boolean;
  rows?: number;
  placeholder?: string;
}

const PROVIDERS = ["local", "workers-ai", "openai-compatible", "anthropic"] as const;

export const BASICS: Spec[] = [
  { path: ["name"], label: "Name", kind: "text", required: true },
  {
    path: ["instructions"],
    label: "Instructions",
    kind: "textarea",
    rows: 6,
    required: true,
    hint: "The system prompt. {{name}} expands a context variable of a private launch.",
  },
  {
    path: ["greeting"],
    label: "Greeting",
    kind: "textarea",
    rows: 2,
    hint: "Shown on an empty conversation.",
  },
];

export const MODEL: Spec[] = [
  { path: ["model", "provider"], label: "Provider", kind: "select", options: PROVIDERS, required: true },
  {
    path: ["model", "model"],
    label: "Model",
    kind: "text",
    required: true,
    hint: "The provider's model name; the local provider's \u201cecho\u201d repeats the message.",
  },
  { path: ["model", "temperature"], label: "Temperature", kind: "number", hint: "0 to 2." },
  { path: ["model", "maxOutputTokens"], label: "Max output tokens", kind: "number" },
  {
    path: ["model", "baseUrl"],
    label: "Base URL",
    kind: "text",
    placeholder: "https://api.example.com/v1",
    hint: "Required for openai-compatible.",
  },
  {
    path: ["model", "apiKeySecret"],
    label: "API key secret",
    kind: "text",
    hint: "The alias of a tenant secret (Secrets), never the key itself.",
  },
];

export const WIDGET: Spec[] = [
  { path: ["widget", "title"], label: "Title", kind: "text", hint: "Defaults to the agent's name." },
  {
    path: ["widget", "theme"],
    label: "Theme",
    kind: "select",
    options: ["light", "dark", "auto"],
    none: "(default: auto)",
  },
  { path: ["widget", "accentColor"], label: "Accent colour", kind: "color", placeholder: "#3b3bd6" },
  {
    path: ["widget", "position"],
    label: "Position",
    kind: "select",
    options: ["bottom-right", "bottom-left"],
    none: "(default)",
  },
  {
    path: ["widget", "locale"],
    label: "Locale",
    kind: "text",
    placeholder: "en",
    hint: "A language tag: es, pt-BR.",
  },
];

export const CONVERSATION: Spec[] = [
  {
    path: ["conversation", "multitask"],
    label: "While a reply is running, a new message…",
    kind: "select",
    options: ["reject", "enqueue", "interrupt", "rollback"],
    none: "(default: reject)",
  },
  { path: ["handoff", "enabled"], label: "A person of your team can take over (handoff)", kind: "check" },
  {
    path: ["upgrades"],
    label: "Offer newer versions to open threads",
    kind: "select",
    options: ["never", "offer"],
    none: "(default: never)",
  },
];

export const LIMITS: Spec[] = [
  { path: ["limits", "maxMessageChars"], label: "Max message characters", kind: "number" },
  { path: ["limits", "maxSendsPerMinute"], label: "Max sends per minute", kind: "number" },
  { path: ["limits", "maxSocketsPerThread"], label: "Max sockets per thread", kind: "number" },
  { path: ["limits", "idleTimeoutSeconds"], label: "Idle timeout (seconds)", kind: "number" },
  { path: ["limits", "maxContextTokens"], label: "Max context tokens", kind: "number" },
  {
    path: ["limits", "retention", "mode"],
    label: "Retention mode",
    kind: "select",
    options: ["standard", "zero"],
    none: "(default: standard)",
  },
  { path: ["limits", "retention", "maxAgeDays"], label: "Keep threads for (days)", kind: "number" },
  { path: ["limits", "retention", "maxMessagesPerThread"], label: "Max messages per thread", kind: "number" },
  {
    path: ["limits", "retention", "idleMinutes"],
    label: "Zero retention: blank text after (minutes idle)",
    kind: "number",
  },
];

export const TOOL_FIELDS: Spec[] = [
  { path: ["name"], label: "Name", kind: "text", required: true },
  { path: ["description"], label: "Description", kind: "textarea", rows: 2, required: true },
  {
    path: ["url"],
    label: "URL",
    kind: "text",
    required: true,
    placeholder: "https://tools.example.com/lookup",
  },
  { path: ["signingSecret"], label: "Signing secret", kind: "text", required: true, hint: "A secret alias." },
  { path: ["timeoutMs"], label: "Timeout (ms)", kind: "number" },
];

/** Fieldsets an issue can be shown at when no single field holds its path. */
const SECTIONS = ["model", "suggestedPrompts", "widget", "conversation", "limits", "tools"];
export const MAX_PROMPTS = 8;
export const MAX_TOOLS = 32;

/** Every path the form has a place for, given the current value (list items included). */
export function anchorsOf(value: unknown): Set<string> {
  const keys = new Set<string>(SECTIONS);
  for (const spec of [...BASICS, ...MODEL, ...WIDGET, ...CONVERSATION, ...LIMITS])
    keys.add(pathKey(spec.path));
  const prompts = getAt(value, ["suggestedPrompts"]);
  if (Array.isArray(prompts)) for (let i = 0; i < prompts.length; i++) keys.add(`suggestedPrompts.${i}`);
  const tools = getAt(value, ["tools"]);
  if (Array.isArray(tools)) {
    tools.forEach((_, i) => {
      keys.add(`tools.${i}`);
      for (const spec of TOOL_FIELDS) keys.add(pathKey(["tools", i, ...spec.path]));
    });
  }
  return keys;
}

/** The nearest place in the form for an issue's path, or null when only the JSON view can show it. */
export function anchorOf(path: string, anchors: Set<string>): string | null {
  const parts = path.split(".");
  for (let n = parts.length; n > 0; n--) {
    const key = parts.slice(0, n).join(".");
    if (anchors.has(key)) return key;
  }
  return null;
}

export const fieldId = (key: string): string => `field-${key}`;
