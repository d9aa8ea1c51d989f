// A run's audit record (docs/api.md): the exact model input rebuilt from storage, its digest and whether it verified.
import { useId, useState } from "preact/hooks";
import type { RunInputResponse } from "../../client/admin";
import { api, describeError } from "../api";
import { TextBlock } from "../ui/text-block";
import { jsonText } from "./message-parts";

/** The text of one prompt message: its string content, or its text parts; other parts are named. */
function promptText(message: Record<string, unknown>): string {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return jsonText(content);
  return content
    .map((part: unknown) => {
      if (typeof part !== "object" || part === null) return "";
      const p = part as Record<string, unknown>;
      if (p.type === "text" && typeof p.text === "string") return p.text;
      if (p.type === "tool-call") return `[tool call ${String(p.toolName)}: ${jsonText(p.input)}]`;
      if (p.type === "tool-result") return `[tool result ${String(p.toolName)}: ${jsonText(p.output)}]`;
      return `[${String(p.type)}]`;
    })
    .join("\n");
}

/** Every model call of the run: the one shown is marked, another loads on a click (the list stays, so does focus). */
function Steps(props: { input: RunInputResponse; onStep: (step: number) => void }) {
  const { input } = props;
  if (input.steps.length < 2) return null;
  return (
    <nav aria-label="Model calls of this run">
      <ol class="steps">
        {input.steps.map((s) => (
          <li key={s.step}>
            <button
              type="button"
              class="small"
              aria-current={s.step === input.step ? "step" : undefined}
              onClick={() => props.onStep(s.step)}
            >
              Call {s.step + 1}
            </button>{" "}
            <code class="wrap">{s.inputDigest ?? "not recorded"}</code>
          </li>
        ))}
      </ol>
    </nav>
  );
}

function AuditRecord(props: { input: RunInputResponse; onStep: (step: number) => void }) {
  const { input } = props;
  return (
    <div class="run-input">
      <p class={input.verified ? "note ok" : "note error"}>
        {input.verified
          ? "Verified: the rebuilt input hashes to the digest recorded when this model call started."
          : "Not verified: the rebuilt input does not hash to the recorded digest."}
      </p>
      <Steps input={input} onStep={props.onStep} />
      <dl class="facts">
        <dt>Model call</dt>
        <dd>
          {input.step + 1} of {input.steps.length}
        </dd>
        <dt>Input digest</dt>
        <dd>
          <code class="wrap">{input.inputDigest}</code>
        </dd>
        <dt>Model</dt>
        <dd>{input.model}</dd>
        <dt>Agent version</dt>
        <dd>v{input.agentVersion}</dd>
        <dt>Prompt builder</dt>
        <dd>{input.promptBuilder}</dd>
        <dt>Artifact digest</dt>
        <dd>
          <code class="wrap">{input.artifactDigest}</code>
        </dd>
        <dt>Tools</dt>
        <dd>
          {input.tools.length === 0 ? "none" : input.tools.map((t) => String(t.name ?? "?")).join(", ")}
        </dd>
      </dl>
      <h4>Prompt ({input.messages.length} messages)</h4>
      <ol class="prompt">
        {input.messages.map((m, i) => (
          <li key={i}>
            <span class="role">{String(m.role)}</span>
            <TextBlock>{promptText(m)}</TextBlock>
          </li>
        ))}
      </ol>
      <details>
        <summary>Raw record (JSON)</summary>
        <TextBlock>{jsonText(input)}</TextBlock>
      </details>
    </div>
  );
}

/** A toggle that loads the record on first open. */
export function RunInput(props: { threadId: string; runId: string }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  const [state, setState] = useState<{ input?: RunInputResponse; error?: string; loading?: boolean }>({});
  const load = async (step?: number) => {
    setState((previous) => ({ ...(previous.input ? { input: previous.input } : {}), loading: true }));
    try {
      setState({
        input: await api().sessions.runInput(props.threadId, props.runId, step === undefined ? {} : { step }),
      });
    } catch (error) {
      setState({ error: describeError(error) });
    }
  };
  const toggle = async () => {
    const next = !open;
    setOpen(next);
    if (!next || state.input || state.loading) return;
    await load();
  };
  return (
    <div class="audit">
      <button
        type="button"
        class="small"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => void toggle()}
      >
        {open ? "Hide model input" : "Model input"}
      </button>
      <section id={id} hidden={!open} aria-label={`Model input of run ${props.runId}`}>
        {state.loading ? <p role="status">Loading the run's input…</p> : null}
        {state.error ? (
          <p class="note error" role="alert">
            {state.error}
          </p>
        ) : null}
        {state.input ? <AuditRecord input={state.input} onStep={(step) => void load(step)} /> : null}
      </section>
    </div>
  );
}
