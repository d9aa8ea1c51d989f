// The draft editor's two views of one value: the tabs that switch between them (the WAI-ARIA tabs pattern: one tab
// stop, arrow keys move between tabs) and the JSON text box with its syntax error.
import type { Ref } from "preact";
import { adoptCss } from "./styles";

const CSS = `
.work .tabs{display:flex;gap:4px;margin:0 0 12px;border-bottom:1px solid var(--border)}
.work .tabs [role=tab]{border:1px solid var(--border);border-bottom:0;border-radius:6px 6px 0 0;background:var(--bg)}
.work .tabs [role=tab][aria-selected=true]{background:var(--surface);font-weight:700;border-color:var(--control-border)}
.work textarea.json{width:100%;min-height:60vh;white-space:pre;tab-size:2}
`;

export type View = "form" | "json";
const VIEWS: [View, string][] = [
  ["form", "Form"],
  ["json", "JSON"],
];

export function ViewTabs(props: { view: View; onView: (view: View) => void }) {
  adoptCss("editor-views", CSS);
  const move = (event: KeyboardEvent) => {
    if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) return;
    event.preventDefault();
    const next = props.view === "form" ? "json" : "form";
    props.onView(next);
    document.getElementById(`tab-${next}`)?.focus();
  };
  return (
    <div role="tablist" class="tabs" aria-label="Edit the draft as">
      {VIEWS.map(([name, label]) => (
        <button
          key={name}
          type="button"
          role="tab"
          id={`tab-${name}`}
          aria-selected={props.view === name}
          aria-controls={`panel-${name}`}
          tabIndex={props.view === name ? 0 : -1}
          onClick={() => props.onView(name)}
          onKeyDown={move}
        >
          {label}
        </button>
      ))}
    </div>
  );
}

/** The artifact as JSON text; `syntax` is where it stops parsing (announced politely, not on every key as an alert). */
export function JsonEditor(props: {
  text: string;
  syntax: string | undefined;
  invalid: boolean;
  readOnly: boolean;
  textarea: Ref<HTMLTextAreaElement>;
  onText: (text: string) => void;
}) {
  adoptCss("editor-views", CSS);
  const broken = props.syntax !== undefined;
  return (
    <div role="tabpanel" id="panel-json" aria-labelledby="tab-json">
      <div class="field">
        <label for="draft-json">Artifact JSON</label>
        <p id="draft-json-hint" class="hint">
          Checked as you type against <a href="/v1/schemas/artifact.json">the artifact schema</a>. Tab leaves
          the text box; indent with spaces.
        </p>
        <textarea
          id="draft-json"
          ref={props.textarea}
          class="code json"
          value={props.text}
          readOnly={props.readOnly}
          spellcheck={false}
          autoCapitalize="off"
          autoComplete="off"
          wrap="off"
          aria-invalid={broken || props.invalid}
          aria-describedby={broken ? "draft-json-hint draft-json-error" : "draft-json-hint"}
          onInput={(e) => props.onText(e.currentTarget.value)}
        />
        <div aria-live="polite">
          {broken ? (
            <p id="draft-json-error" class="field-error">
              Not valid JSON: {props.syntax}
            </p>
          ) : null}
        </div>
      </div>
    </div>
  );
}
