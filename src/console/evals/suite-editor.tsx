// One suite's name and cases, edited as JSON that is checked as you type (it must be a list of cases with ids) and by
// the server when saved; saved at the revision it was loaded from (If-Match), so a stale save shows the conflict.
import { useEffect, useState } from "preact/hooks";
import type { SuiteResponse } from "../../client/evals";
import { AgentThreadsError } from "../../client/http";
import { api, describeError } from "../api";
import { Field } from "../ui/field";
import { ErrorNote, StatusNote } from "../ui/page";
import { WriteButton } from "../ui/write";

const pretty = (cases: unknown) => JSON.stringify(cases, null, 2);

/** The cases text as a list, or why it is not one. */
export function parseCases(text: string): { cases?: unknown[]; error?: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { error: `Not JSON: ${(e as Error).message}` };
  }
  if (!Array.isArray(value)) return { error: "The cases must be a JSON list ([…])." };
  for (const [i, c] of value.entries()) {
    if (typeof c !== "object" || c === null || Array.isArray(c))
      return { error: `Case ${i + 1} must be an object.` };
    const item = c as { id?: unknown; messages?: unknown; fromThread?: unknown };
    if (typeof item.id !== "string" || item.id === "") return { error: `Case ${i + 1} needs an "id".` };
    if (item.messages === undefined && item.fromThread === undefined)
      return { error: `Case ${item.id} needs "messages" or "fromThread".` };
  }
  return { cases: value };
}

/** The server's 400 details as lines ("cases.0.expect.1.pattern: …"). */
function detailLines(error: unknown): string[] {
  if (!(error instanceof AgentThreadsError) || !Array.isArray(error.details)) return [];
  return (error.details as { path?: string; message?: string }[]).map(
    (d) => `${d.path ?? ""}: ${d.message ?? ""}`,
  );
}

export function SuiteEditor(props: {
  agentId: string;
  suite: SuiteResponse;
  onSaved: (s: SuiteResponse) => void;
}) {
  const { suite } = props;
  const [base, setBase] = useState(suite);
  const [name, setName] = useState(suite.name);
  const [text, setText] = useState(pretty(suite.cases));
  const [pending, setPending] = useState(false);
  const [status, setStatus] = useState<string>();
  const [error, setError] = useState<{ message: string; lines: string[] }>();
  const [conflict, setConflict] = useState<SuiteResponse>();
  useEffect(() => {
    setBase(suite);
    setName(suite.name);
    setText(pretty(suite.cases));
    setConflict(undefined);
    setError(undefined);
  }, [suite.id, suite.revision]);

  const parsed = parseCases(text);
  const save = async (revision: number) => {
    if (!parsed.cases) return;
    setPending(true);
    setStatus(undefined);
    setError(undefined);
    try {
      const saved = await api().evals.update(
        props.agentId,
        suite.id,
        { name, cases: parsed.cases as never },
        revision,
      );
      setConflict(undefined);
      setStatus(`Saved revision ${saved.revision}.`);
      props.onSaved(saved);
    } catch (e) {
      if (e instanceof AgentThreadsError && e.status === 412) {
        setConflict(
          await api()
            .evals.get(props.agentId, suite.id)
            .catch(() => undefined),
        );
      } else {
        setError({ message: describeError(e), lines: detailLines(e) });
      }
    } finally {
      setPending(false);
    }
  };

  return (
    <form
      aria-labelledby="suite-edit-title"
      onSubmit={(event) => {
        event.preventDefault();
        void save(base.revision);
      }}
    >
      <fieldset>
        <legend id="suite-edit-title">
          Edit {suite.name} (revision {base.revision})
        </legend>
        <Field id="suite-name" label="Suite name">
          {(control) => <input {...control} value={name} onInput={(e) => setName(e.currentTarget.value)} />}
        </Field>
        <Field
          id="suite-cases"
          label="Cases (JSON)"
          hint='Each case: {"id", "messages": [{"role": "user", "text"}], "expect": [{"type": "contains", "text"}], "toolMocks"?, "context"?}. Expectation types: contains, not_contains, regex, tool_called, tool_not_called, json_schema, judge.'
          error={parsed.error}
        >
          {(control) => (
            <textarea
              {...control}
              class="code"
              rows={Math.min(30, Math.max(8, text.split("\n").length + 1))}
              spellcheck={false}
              value={text}
              onInput={(e) => setText(e.currentTarget.value)}
            />
          )}
        </Field>
        <div class="form-actions">
          <WriteButton type="submit" class="primary" disabled={pending || parsed.cases === undefined}>
            {pending ? "Saving…" : "Save suite"}
          </WriteButton>
        </div>
        {status ? <StatusNote>{status}</StatusNote> : null}
        {error ? (
          <ErrorNote>
            Not saved: {error.message}
            {error.lines.map((line) => (
              <span key={line} class="block">
                {line}
              </span>
            ))}
          </ErrorNote>
        ) : null}
        {conflict ? (
          <section class="note error" role="alert" aria-labelledby="suite-conflict-title">
            <h3 id="suite-conflict-title">Not saved: this suite changed since you opened it</h3>
            <p>
              You edited revision {base.revision}; it is now at revision {conflict.revision} (
              {conflict.cases.length} cases). Take theirs (your edits are lost) or save yours over it.
            </p>
            <div class="form-actions">
              <button
                type="button"
                onClick={() => {
                  setConflict(undefined);
                  props.onSaved(conflict);
                }}
              >
                Take theirs
              </button>
              <WriteButton class="danger" disabled={pending} onClick={() => void save(conflict.revision)}>
                Save mine over theirs
              </WriteButton>
            </div>
          </section>
        ) : null}
      </fieldset>
    </form>
  );
}
