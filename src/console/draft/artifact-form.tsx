// The artifact's common fields as a form. It holds no state of its own beyond what a half-typed number needs: every
// change goes out as (path, value) and comes back as the new definition, so the JSON view and this form show one
// value. A cleared optional field is removed from the artifact (`undefined`), a required one stays as "".
import { useEffect, useState } from "preact/hooks";
import {
  BASICS,
  CONVERSATION,
  fieldId,
  LIMITS,
  MAX_PROMPTS,
  MAX_TOOLS,
  MODEL,
  type Spec,
  TOOL_FIELDS,
  WIDGET,
} from "./form-fields";
import { getAt, isRecord, type Path, pathKey } from "./json-path";
import type { Issue } from "./schema";

export type Edit = (path: Path, value: unknown) => void;

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
