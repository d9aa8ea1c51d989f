// The playground: the saved draft and the version the active release gives, each in the real widget, side by side,
// with one prompt box that sends the same text to both. Preview threads are marked as such by the server (never
// counted in usage or analytics, gone after 24 h).
import { useRef, useState } from "preact/hooks";
import type { ReleaseResponse } from "../../client/admin";
import { call } from "../api";
import { allReleases, draftOrNull } from "../draft/lists";
import { useAgentName } from "../draft/parts";
import { adoptCss } from "../draft/styles";
import { percent } from "../draft/weights";
import { type FrameHandle, type LaunchBody, WidgetFrame } from "../draft/widget-frame";
import { href } from "../router";
import type { ScreenProps } from "../screens";
import { AgentNav } from "../ui/agent-nav";
import { useLoad } from "../ui/hooks";
import { ErrorNote, Loading, Page } from "../ui/page";

const CSS = `
.work .frames{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:16px;margin:12px 0}
.work .frames h2{margin:0 0 6px;font-size:16px}
.work .frame iframe{display:block;width:100%;height:min(560px,70vh);border:1px solid var(--muted);border-radius:var(--radius);background:var(--surface)}
.work .frame-failed{border:1px solid var(--danger);border-radius:var(--radius);padding:12px;min-height:120px}
.work .prompt textarea{width:100%}
`;

interface Setup {
  environment: string;
  draftRevision: number | null;
  active: ReleaseResponse | null;
}

async function setup(agentId: string): Promise<Setup> {
  const [health, draft, releases] = await Promise.all([
    call<{ environment: string }>("GET", "/v1/health"),
    draftOrNull(agentId),
    allReleases(agentId),
  ]);
  const active = releases.find((r) => r.active && r.environment === health.environment) ?? null;
  return { environment: health.environment, draftRevision: draft?.revision ?? null, active };
}

const previewPath = (agentId: string) => `/v1/agents/${encodeURIComponent(agentId)}/draft/preview-session`;

export default function PlaygroundScreen(props: ScreenProps) {
  adoptCss("playground", CSS);
  const agentId = props.params.agentId ?? "";
  const agentName = useAgentName(agentId);
  const loaded = useLoad(() => setup(agentId), [agentId]);
  const [picked, setPicked] = useState<number>();
  const [prompt, setPrompt] = useState("");
  const [sent, setSent] = useState<string>();
  const draftFrame = useRef<FrameHandle>();
  const versionFrame = useRef<FrameHandle>();

  const data = loaded.data;
  const allocations = [...(data?.active?.allocations ?? [])].sort((a, b) => b.weight - a.weight);
  const version = picked ?? allocations[0]?.version;

  const launch = (body: Record<string, unknown>) => (threadId: string | undefined) =>
    call<LaunchBody>("POST", previewPath(agentId), { ...body, ...(threadId ? { threadId } : {}) });

  const sendBoth = (event: SubmitEvent) => {
    event.preventDefault();
    const text = prompt.trim();
    if (text === "") return;
    draftFrame.current?.send(text);
    versionFrame.current?.send(text);
    setSent(`Sent to ${version !== undefined ? "both" : "the draft"}: ${text}`);
    setPrompt("");
  };

  const base = `/agents/${encodeURIComponent(agentId)}`;
  return (
    <Page title={`Playground · ${agentName}`} nav={<AgentNav agentId={agentId} current="playground" />}>
      <div class="work">
        <p class="muted">
          Talk to the saved draft before publishing, beside what visitors get now. Unsaved edits are not here:{" "}
          <a href={href(`${base}/draft`)}>save them in the editor</a>, then reload.
        </p>
        {loaded.loading && !data ? <Loading /> : null}
        {loaded.error ? <ErrorNote>Could not prepare the playground: {loaded.error}</ErrorNote> : null}
        {data ? (
          <>
            <form class="prompt" onSubmit={sendBoth}>
              <div class="field">
                <label for="playground-prompt">
                  Prompt for {version !== undefined ? "both conversations" : "the draft"}
                </label>
                <textarea
                  id="playground-prompt"
                  rows={2}
                  value={prompt}
                  onInput={(e) => setPrompt(e.currentTarget.value)}
                  onKeyDown={(e) => {
                    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
                      e.preventDefault();
                      e.currentTarget.form?.requestSubmit();
                    }
                  }}
                  aria-describedby="playground-prompt-hint"
                />
                <p id="playground-prompt-hint" class="hint">
                  Enter sends, Shift+Enter starts a new line. Each widget also has its own message box.
                </p>
              </div>
              <div class="row">
                <button type="submit" class="primary" disabled={data.draftRevision === null}>
                  {version !== undefined ? "Send to both" : "Send"}
                </button>
                <button
                  type="button"
                  onClick={() => {
                    draftFrame.current?.newConversation();
                    versionFrame.current?.newConversation();
                    setSent("Started new conversations.");
                  }}
                >
                  New conversations
                </button>
                {allocations.length > 1 ? (
                  <>
                    <label for="playground-version">Compare with</label>
                    <select
                      id="playground-version"
                      value={String(version)}
                      onChange={(e) => setPicked(Number(e.currentTarget.value))}
                    >
                      {allocations.map((a) => (
                        <option key={a.version} value={String(a.version)}>
                          Version {a.version} ({percent(a.weight)} of new threads)
                        </option>
                      ))}
                    </select>
                  </>
                ) : null}
              </div>
              <p class="hint" role="status">
                {sent ?? ""}
              </p>
            </form>

            <div class="frames">
              <section aria-labelledby="frame-draft-title">
                <h2 id="frame-draft-title">
                  {data.draftRevision === null ? "Draft" : `Draft, revision ${data.draftRevision}`}
                </h2>
                {data.draftRevision === null ? (
                  <p>
                    No draft yet. <a href={href(`${base}/draft`)}>Write one</a>.
                  </p>
                ) : (
                  <WidgetFrame
                    key={`draft-${data.draftRevision}`}
                    title={`Widget talking to draft revision ${data.draftRevision}`}
                    launch={launch({ draftRevision: data.draftRevision })}
                    handle={draftFrame}
                  />
                )}
              </section>
              <section aria-labelledby="frame-version-title">
                <h2 id="frame-version-title">
                  {version !== undefined
                    ? `Version ${version}, active in ${data.environment}`
                    : `Active in ${data.environment}`}
                </h2>
                {version !== undefined ? (
                  <WidgetFrame
                    key={`version-${version}`}
                    title={`Widget talking to version ${version}`}
                    launch={launch({ version })}
                    handle={versionFrame}
                  />
                ) : (
                  <p>
                    No active release in {data.environment}: visitors cannot start a conversation yet.{" "}
                    <a href={href(`${base}/releases`)}>Release a version</a>.
                  </p>
                )}
              </section>
            </div>
            <button type="button" onClick={loaded.reload}>
              Reload the draft and release
            </button>
          </>
        ) : null}
      </div>
    </Page>
  );
}
