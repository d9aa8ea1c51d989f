// The draft editor: the artifact as a form and as JSON (one value, two views), checked live against the server's
// JSON Schema, saved with the revision compare-and-swap (a 412 shows what the other save changed and lets the user
// take theirs or overwrite), and published from the saved revision.
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { AgentThreadsError } from "../../client/http";
import { api, canWrite, describeError } from "../api";
import { ArtifactForm } from "../draft/artifact-form";
import { ConflictView } from "../draft/conflict-view";
import { sameJson } from "../draft/diff";
import { JsonEditor, type View, ViewTabs } from "../draft/editor-views";
import { anchorOf, anchorsOf, fieldId } from "../draft/form-fields";
import { formatJson, getAt, isRecord, type Path, parseJson, parseKey, setAt } from "../draft/json-path";
import { draftOrNull, loadArtifactCheck } from "../draft/lists";
import { IssueList, useAgentName } from "../draft/parts";
import { type ArtifactCheck, type Issue, serverIssues } from "../draft/schema";
import { adoptCss } from "../draft/styles";
import { href } from "../router";
import type { ScreenProps } from "../screens";
import { AgentNav } from "../ui/agent-nav";
import { ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

const CSS = ".draft-editor .field textarea,.draft-editor .field input[type=text]{width:100%}";

interface Saved {
  /** 0: no draft stored yet (the first save creates it). */
  revision: number;
  definition: unknown;
  updatedAt?: string;
}

/** A server issue stays shown until the value it was about changes. */
interface HeldIssue {
  issue: Issue;
  was: string;
}

const valueKey = (value: unknown, path: string): string => JSON.stringify(getAt(value, parseKey(path))) ?? "";

function starter(name: string): Saved {
  return {
    revision: 0,
    definition: { schemaVersion: 1, name, instructions: "", model: { provider: "local", model: "echo" } },
  };
}

async function loadDraft(agentId: string): Promise<Saved> {
  const draft = await draftOrNull(agentId);
  if (draft !== null)
    return { revision: draft.revision, definition: draft.definition, updatedAt: draft.updatedAt };
  return starter((await api().agents.get(agentId)).name);
}

/** Finds where a path's last key sits in the JSON text, to put the caret there (best effort). */
function offsetOf(text: string, path: Path): number {
  let at = 0;
  for (const segment of path) {
    if (typeof segment !== "string") continue;
    const found = text.indexOf(JSON.stringify(segment), at);
    if (found < 0) break;
    at = found;
  }
  return at;
}

export default function DraftScreen(props: ScreenProps) {
  adoptCss("draft", CSS);
  const agentId = props.params.agentId ?? "";
  const agentName = useAgentName(agentId);
  const [saved, setSaved] = useState<Saved>();
  const [loadError, setLoadError] = useState<string>();
  const [value, setValue] = useState<unknown>(undefined);
  const [text, setText] = useState("");
  const [syntax, setSyntax] = useState<string>();
  const [view, setView] = useState<View>("form");
  const [check, setCheck] = useState<ArtifactCheck>();
  const [checkError, setCheckError] = useState<string>();
  const [held, setHeld] = useState<HeldIssue[]>([]);
  const [conflict, setConflict] = useState<Saved>();
  const [pending, setPending] = useState<"save" | "publish" | undefined>();
  const [status, setStatus] = useState<preact.ComponentChildren>();
  const [error, setError] = useState<string>();
  const focusNext = useRef<{ id: string } | { json: Path } | null>(null);
  const jsonRef = useRef<HTMLTextAreaElement>(null);
  const writable = canWrite();

  const show = (next: Saved) => {
    setSaved(next);
    setValue(next.definition);
    setText(formatJson(next.definition));
    setSyntax(undefined);
    setHeld([]);
  };

  useEffect(() => {
    let live = true;
    loadDraft(agentId).then(
      (draft) => live && show(draft),
      (e: unknown) => live && setLoadError(describeError(e)),
    );
    loadArtifactCheck().then(
      (c) => live && setCheck(() => c),
      (e: unknown) => live && setCheckError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [agentId]);

  const dirty = saved !== undefined && (syntax !== undefined || !sameJson(value, saved.definition));

  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    addEventListener("beforeunload", warn);
    return () => removeEventListener("beforeunload", warn);
  }, [dirty]);

  const issues = useMemo(() => {
    if (syntax !== undefined || value === undefined) return [];
    const own = check ? check(value) : [];
    const server = held.filter((h) => valueKey(value, h.issue.path) === h.was).map((h) => h.issue);
    return [...server, ...own];
  }, [value, check, held, syntax]);
  const anchors = useMemo(() => anchorsOf(value), [value]);
  const byAnchor = useMemo(() => {
    const map = new Map<string, Issue[]>();
    for (const issue of issues) {
      const anchor = anchorOf(issue.path, anchors);
      if (anchor !== null) map.set(anchor, [...(map.get(anchor) ?? []), issue]);
    }
    return map;
  }, [issues, anchors]);

  // Focus moves after the view that holds the target has rendered.
  useEffect(() => {
    const target = focusNext.current;
    if (target === null) return;
    focusNext.current = null;
    if ("id" in target) {
      const element = document.getElementById(target.id);
      element?.focus();
      element?.scrollIntoView({ block: "center" });
    } else if (jsonRef.current) {
      const at = offsetOf(jsonRef.current.value, target.json);
      jsonRef.current.focus();
      jsonRef.current.setSelectionRange(at, at);
    }
  });

  const locate = (path: string) => {
    const anchor = anchorOf(path, anchors);
    if (anchor !== null && isRecord(value)) {
      focusNext.current = { id: fieldId(anchor) };
      setView("form");
    } else {
      focusNext.current = { json: parseKey(path) };
      setView("json");
    }
    setStatus(undefined);
  };

  const edit = (path: Path, next: unknown) => {
    const updated = setAt(value, path, next);
    setValue(updated);
    setText(formatJson(updated));
    setSyntax(undefined);
    setStatus(undefined);
  };

  const onJson = (next: string) => {
    setText(next);
    setStatus(undefined);
    const parsed = parseJson(next);
    if (parsed.ok) {
      setValue(parsed.value);
      setSyntax(undefined);
    } else {
      setSyntax(parsed.message);
    }
  };

  const holdServerIssues = (failure: unknown) => {
    const list = failure instanceof AgentThreadsError ? serverIssues(failure.details) : [];
    setHeld(list.map((issue) => ({ issue, was: valueKey(value, issue.path) })));
    return list.length;
  };

  const put = async (revision: number) => {
    if (!isRecord(value)) {
      setError("The draft must be a JSON object: fix it in the JSON view.");
      return;
    }
    setPending("save");
    setError(undefined);
    try {
      const answer = await api().drafts.put(agentId, value, revision);
      setSaved({ revision: answer.revision, definition: value, updatedAt: new Date().toISOString() });
      setConflict(undefined);
      setHeld([]);
      setStatus(`Saved as revision ${answer.revision}.`);
    } catch (e) {
      if (e instanceof AgentThreadsError && e.code === "precondition_failed") {
        try {
          setConflict(await loadDraft(agentId));
        } catch (again) {
          setError(describeError(again));
        }
      } else {
        const count = holdServerIssues(e);
        setError(count > 0 ? `The server refused the draft: ${describeError(e)}` : describeError(e));
      }
    } finally {
      setPending(undefined);
    }
  };

  const save = () => {
    if (syntax !== undefined) {
      focusNext.current = { json: [] };
      setView("json");
      setError(`The JSON does not parse: ${syntax}`);
      return;
    }
    if (saved) void put(saved.revision);
  };

  const publish = async () => {
    if (!saved) return;
    setPending("publish");
    setError(undefined);
    try {
      const published = await api().versions.publish(agentId, saved.revision);
      setStatus(
        <>
          Published revision {saved.revision} as version {published.version}.{" "}
          <a href={href(`/agents/${encodeURIComponent(agentId)}/releases`)}>Release it</a>
        </>,
      );
    } catch (e) {
      const count = holdServerIssues(e);
      setError(
        count > 0
          ? `Not published: ${count} ${count === 1 ? "problem" : "problems"} below.`
          : describeError(e),
      );
    } finally {
      setPending(undefined);
    }
  };

  const takeTheirs = () => {
    if (!conflict) return;
    show(conflict);
    setConflict(undefined);
    setStatus(`Loaded revision ${conflict.revision}; your changes were discarded.`);
  };

  const title = `Draft · ${agentName}`;
  const nav = <AgentNav agentId={agentId} current="draft" />;
  if (!saved) {
    return (
      <Page title={title} nav={nav}>
        {loadError ? (
          <ErrorNote>Could not load the draft: {loadError}</ErrorNote>
        ) : (
          <Loading label="Loading the draft…" />
        )}
      </Page>
    );
  }

  return (
    <Page title={title} nav={nav}>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: Ctrl/⌘+S anywhere in the editor saves; not a control. */}
      <div
        class="work draft-editor"
        onKeyDown={(event) => {
          if (event.key === "s" && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            if (writable && !pending) save();
          }
        }}
      >
        <p class="muted">
          {saved.revision === 0 ? (
            "No draft is saved yet: the first save creates revision 1."
          ) : (
            <>
              Revision {saved.revision}
              {saved.updatedAt ? (
                <>
                  , saved <RelativeTime iso={saved.updatedAt} />
                </>
              ) : null}
              .
            </>
          )}{" "}
          {dirty ? <strong>Unsaved changes.</strong> : null}
        </p>
        {checkError ? (
          <ErrorNote>
            The artifact schema could not be loaded ({checkError}): fields are checked when you publish.
          </ErrorNote>
        ) : null}

        {conflict ? (
          <ConflictView
            mine={value}
            mineRevision={saved.revision}
            stored={conflict}
            pending={pending !== undefined}
            onTakeTheirs={takeTheirs}
            onOverwrite={() => void put(conflict.revision)}
          />
        ) : null}

        {syntax === undefined ? <IssueList issues={issues} locate={locate} /> : null}

        <ViewTabs view={view} onView={setView} />

        {view === "form" ? (
          <div role="tabpanel" id="panel-form" aria-labelledby="tab-form">
            {syntax !== undefined ? (
              <ErrorNote>
                The JSON has a syntax error ({syntax}): fix it in the JSON view to use the form.
              </ErrorNote>
            ) : !isRecord(value) ? (
              <ErrorNote>The draft is not a JSON object: fix it in the JSON view.</ErrorNote>
            ) : (
              <fieldset disabled={!writable} class="plain">
                <legend class="muted">Common fields (everything else is in the JSON view)</legend>
                <ArtifactForm value={value} edit={edit} issuesAt={(key) => byAnchor.get(key) ?? []} />
              </fieldset>
            )}
          </div>
        ) : (
          <JsonEditor
            text={text}
            syntax={syntax}
            invalid={issues.length > 0}
            readOnly={!writable}
            textarea={jsonRef}
            onText={onJson}
          />
        )}

        <div class="sticky-bar">
          {error ? <ErrorNote>{error}</ErrorNote> : null}
          {status ? <StatusNote>{status}</StatusNote> : null}
          <div class="row">
            <WriteButton class="primary" disabled={pending !== undefined} onClick={save}>
              {pending === "save" ? "Saving…" : "Save draft"}
            </WriteButton>
            <WriteButton
              disabled={pending !== undefined || dirty || saved.revision === 0}
              onClick={() => void publish()}
            >
              {pending === "publish" ? "Publishing…" : `Publish revision ${saved.revision || ""}`.trim()}
            </WriteButton>
            <button type="button" disabled={!dirty} onClick={() => show(saved)}>
              Revert changes
            </button>
            <span class="hint">{dirty ? "Save before publishing." : ""}</span>
          </div>
        </div>
      </div>
    </Page>
  );
}
