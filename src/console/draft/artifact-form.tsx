// The artifact's common fields as a form. It holds no state of its own beyond what a half-typed number needs: every
// change goes out as (path, value) and comes back as the new definition, so the JSON view and this form show one
// value. A cleared optional field is removed from the artifact (`undefined`), a required one stays as "".
import { useEffect, useState } from "preact/hooks";
import { getAt, isRecord, type Path, pathKey } from "./json-path";
import type { Issue } from "./schema";

export type Edit = (path: Path, value: unknown) => void;

interface Spec {
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

const BASICS: Spec[] = [
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

const MODEL: Spec[] = [
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

const WIDGET: Spec[] = [
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

const CONVERSATION: Spec[] = [
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

const LIMITS: Spec[] = [
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

const TOOL_FIELDS: Spec[] = [
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

type IssuesAt = (key: string) => Issue[];

function Problems(props: { id: string; issues: Issue[] }) {
  if (props.issues.length === 0) return null;
  return (
    <p id={props.id} class="field-error">
      {props.issues.map((issue) => issue.message).join("; ")}
    </p>
  );
}

const asText = (value: unknown): string =>
  value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);

/** A number as typed: a number when it is one, else the text (so the schema names the problem at this field). */
function readNumber(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === "") return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) && /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(trimmed) ? n : text;
}

function NumberInput(props: {
  id: string;
  value: unknown;
  onValue: (v: unknown) => void;
  described?: string;
  invalid: boolean;
}) {
  const [text, setText] = useState(asText(props.value));
  // A change from elsewhere (the JSON view, a reload) replaces what is typed; "1." typed here stays as typed.
  useEffect(() => {
    if (readNumber(text) !== props.value) setText(asText(props.value));
  }, [props.value]);
  return (
    <input
      id={props.id}
      type="text"
      inputMode="decimal"
      value={text}
      aria-invalid={props.invalid}
      aria-describedby={props.described}
      onInput={(event) => {
        const next = event.currentTarget.value;
        setText(next);
        props.onValue(readNumber(next));
      }}
    />
  );
}

function Field(props: { spec: Spec; base: Path; value: unknown; edit: Edit; issuesAt: IssuesAt }) {
  const { spec } = props;
  const path = [...props.base, ...spec.path];
  const key = pathKey(path);
  const id = fieldId(key);
  const value = getAt(props.value, path);
  const issues = props.issuesAt(key);
  const hintId = spec.hint ? `${id}-hint` : undefined;
  const errorId = issues.length > 0 ? `${id}-error` : undefined;
  const described = [hintId, errorId].filter(Boolean).join(" ") || undefined;
  const invalid = issues.length > 0;
  const setText = (text: string) => props.edit(path, text === "" && !spec.required ? undefined : text);
  let control: preact.JSX.Element;
  switch (spec.kind) {
    case "textarea":
      control = (
        <textarea
          id={id}
          rows={spec.rows ?? 3}
          value={asText(value)}
          required={spec.required}
          aria-invalid={invalid}
          aria-describedby={described}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      );
      break;
    case "number":
      control = (
        <NumberInput
          id={id}
          value={value}
          invalid={invalid}
          described={described}
          onValue={(v) => props.edit(path, v)}
        />
      );
      break;
    case "select": {
      const options = spec.options ?? [];
      const unknown = value !== undefined && !options.includes(asText(value));
      control = (
        <select
          id={id}
          value={asText(value)}
          aria-invalid={invalid}
          aria-describedby={described}
          onChange={(e) => setText(e.currentTarget.value)}
        >
          {spec.required && value !== undefined ? null : <option value="">{spec.none ?? "(choose)"}</option>}
          {unknown ? <option value={asText(value)}>{asText(value)} (not valid)</option> : null}
          {options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      );
      break;
    }
    case "check":
      return (
        <div class="field">
          <div class="row">
            <input
              id={id}
              type="checkbox"
              checked={value === true}
              aria-invalid={invalid}
              aria-describedby={described}
              onChange={(e) => props.edit(path, e.currentTarget.checked ? true : undefined)}
            />
            <label for={id}>{spec.label}</label>
          </div>
          <Problems id={`${id}-error`} issues={issues} />
        </div>
      );
    case "color": {
      const colour = typeof value === "string" && /^#[0-9a-fA-F]{6}$/.test(value) ? value : "#000000";
      control = (
        <div class="row">
          <input
            id={id}
            type="text"
            value={asText(value)}
            placeholder={spec.placeholder}
            spellcheck={false}
            aria-invalid={invalid}
            aria-describedby={described}
            onInput={(e) => setText(e.currentTarget.value)}
          />
          <input
            type="color"
            value={colour}
            aria-label={`Pick the ${spec.label.toLowerCase()}`}
            onInput={(e) => props.edit(path, e.currentTarget.value)}
          />
        </div>
      );
      break;
    }
    default:
      control = (
        <input
          id={id}
          type="text"
          value={asText(value)}
          placeholder={spec.placeholder}
          required={spec.required}
          spellcheck={false}
          aria-invalid={invalid}
          aria-describedby={described}
          onInput={(e) => setText(e.currentTarget.value)}
        />
      );
  }
  return (
    <div class="field">
      <label for={id}>{spec.label}</label>
      {control}
      {spec.hint ? (
        <p id={hintId} class="hint">
          {spec.hint}
        </p>
      ) : null}
      <Problems id={`${id}-error`} issues={issues} />
    </div>
  );
}

function Section(props: {
  key_: string;
  legend: string;
  issuesAt: IssuesAt;
  children: preact.ComponentChildren;
}) {
  const id = fieldId(props.key_);
  return (
    <fieldset
      id={id}
      tabIndex={-1}
      aria-describedby={props.issuesAt(props.key_).length ? `${id}-error` : undefined}
    >
      <legend>{props.legend}</legend>
      <Problems id={`${id}-error`} issues={props.issuesAt(props.key_)} />
      {props.children}
    </fieldset>
  );
}

function Prompts(props: { value: unknown; edit: Edit; issuesAt: IssuesAt }) {
  const raw = getAt(props.value, ["suggestedPrompts"]);
  const prompts = Array.isArray(raw) ? raw : [];
  return (
    <Section key_="suggestedPrompts" legend="Suggested prompts" issuesAt={props.issuesAt}>
      <p class="hint">Buttons under the greeting that send their text.</p>
      {prompts.map((prompt, i) => {
        const key = `suggestedPrompts.${i}`;
        const issues = props.issuesAt(key);
        return (
          <div class="field" key={i}>
            <label for={fieldId(key)}>Prompt {i + 1}</label>
            <div class="row">
              <input
                id={fieldId(key)}
                type="text"
                value={asText(prompt)}
                aria-invalid={issues.length > 0}
                aria-describedby={issues.length > 0 ? `${fieldId(key)}-error` : undefined}
                onInput={(e) => props.edit(["suggestedPrompts", i], e.currentTarget.value)}
              />
              <button type="button" onClick={() => props.edit(["suggestedPrompts", i], undefined)}>
                Remove prompt {i + 1}
              </button>
            </div>
            <Problems id={`${fieldId(key)}-error`} issues={issues} />
          </div>
        );
      })}
      <button
        type="button"
        disabled={prompts.length >= MAX_PROMPTS}
        onClick={() => props.edit(["suggestedPrompts", prompts.length], "")}
      >
        Add a prompt
      </button>
    </Section>
  );
}

function Tools(props: { value: unknown; edit: Edit; issuesAt: IssuesAt }) {
  const raw = getAt(props.value, ["tools"]);
  const tools = Array.isArray(raw) ? raw : [];
  return (
    <Section key_="tools" legend="Tools" issuesAt={props.issuesAt}>
      <p class="hint">
        Webhooks the model may call (docs: tools). A tool's input schema and identity pointers are edited in
        the JSON view.
      </p>
      {tools.map((tool, i) => {
        const name =
          isRecord(tool) && typeof tool.name === "string" && tool.name !== "" ? tool.name : "(unnamed)";
        return (
          <Section key={i} key_={`tools.${i}`} legend={`Tool ${i + 1}: ${name}`} issuesAt={props.issuesAt}>
            <div class="grid">
              {TOOL_FIELDS.map((spec) => (
                <Field
                  key={spec.path.join(".")}
                  spec={spec}
                  base={["tools", i]}
                  value={props.value}
                  edit={props.edit}
                  issuesAt={props.issuesAt}
                />
              ))}
            </div>
            <button type="button" class="danger" onClick={() => props.edit(["tools", i], undefined)}>
              Remove tool {i + 1}
            </button>
          </Section>
        );
      })}
      <button
        type="button"
        disabled={tools.length >= MAX_TOOLS}
        onClick={() =>
          props.edit(["tools", tools.length], {
            name: "",
            description: "",
            url: "https://",
            signingSecret: "",
          })
        }
      >
        Add a tool
      </button>
    </Section>
  );
}

function Fields(props: { specs: Spec[]; value: unknown; edit: Edit; issuesAt: IssuesAt; grid?: boolean }) {
  const fields = props.specs.map((spec) => (
    <Field
      key={pathKey(spec.path)}
      spec={spec}
      base={[]}
      value={props.value}
      edit={props.edit}
      issuesAt={props.issuesAt}
    />
  ));
  return props.grid ? <div class="grid">{fields}</div> : <>{fields}</>;
}

/** The form; `value` must be an object (the editor says so and shows only the JSON view otherwise). */
export function ArtifactForm(props: { value: unknown; edit: Edit; issuesAt: IssuesAt }) {
  const common = { value: props.value, edit: props.edit, issuesAt: props.issuesAt };
  return (
    <div>
      <fieldset>
        <legend>Basics</legend>
        <Fields specs={BASICS} {...common} />
      </fieldset>
      <Section key_="model" legend="Model" issuesAt={props.issuesAt}>
        <Fields specs={MODEL} grid {...common} />
        <p class="hint">The local model's test options (model.local) are edited in the JSON view.</p>
      </Section>
      <Prompts {...common} />
      <Section key_="widget" legend="Widget look" issuesAt={props.issuesAt}>
        <Fields specs={WIDGET} grid {...common} />
        <p class="hint">Text overrides (widget.strings) are edited in the JSON view.</p>
      </Section>
      <Section key_="conversation" legend="Conversation" issuesAt={props.issuesAt}>
        <Fields specs={CONVERSATION} {...common} />
      </Section>
      <Section key_="limits" legend="Limits and retention" issuesAt={props.issuesAt}>
        <Fields specs={LIMITS} grid {...common} />
      </Section>
      <Tools {...common} />
    </div>
  );
}
