// Evals (/console/agents/:agentId/evals): the agent's suites, one suite's editor, a run on the draft and the active
// version side by side with a per-case diff, the pass rate of every run per version, and the release gate
// (docs/evals.md).
import { useEffect, useState } from "preact/hooks";
import type { RunResponse, SuiteResponse } from "../../client/evals";
import { api, call, canWrite, describeError } from "../api";
import { allReleases, draftOrNull } from "../draft/lists";
import { useAgentName } from "../draft/parts";
import { adoptCss } from "../draft/styles";
import { GateForm } from "../evals/gate-form";
import { RunHistory } from "../evals/history";
import { RunDiff } from "../evals/run-diff";
import { SuiteEditor } from "../evals/suite-editor";
import { navigate } from "../router";
import type { ScreenProps } from "../screens";
import { AgentNav } from "../ui/agent-nav";
import { useLoad } from "../ui/hooks";
import { EmptyNote, ErrorNote, Loading, Page } from "../ui/page";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

const CSS = `
.eval-pass{color:var(--ok,#1a7f37);font-weight:600}
.eval-fail{color:var(--danger,#b42318);font-weight:600}
.eval-failures{margin:4px 0 0;padding-left:1.2em}
textarea.code{font-family:ui-monospace,monospace;width:100%}
.block{display:block}
form[aria-labelledby="gate-form-title"],#run-title,#history-title{margin-top:24px}
.row{display:flex;gap:8px 12px;align-items:flex-end;flex-wrap:wrap}
`;

const suiteParam = (): string | undefined => new URLSearchParams(location.search).get("suite") ?? undefined;

const settled = (run: RunResponse | undefined) => run?.status === "completed" || run?.status === "failed";

/** The version most new threads get in this deployment's environment (the active release's heaviest). */
async function activeVersion(agentId: string): Promise<number | undefined> {
  const [health, releases] = await Promise.all([
    call<{ environment: string }>("GET", "/v1/health"),
    allReleases(agentId),
  ]);
  const active = releases.find((r) => r.active && r.environment === health.environment);
  return active?.allocations.slice().sort((a, b) => b.weight - a.weight)[0]?.version;
}

function NewSuite(props: { agentId: string; onCreated: (s: SuiteResponse) => void }) {
  const [name, setName] = useState("");
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState(false);
  return (
    <form
      class="row"
      onSubmit={async (event) => {
        event.preventDefault();
        setPending(true);
        setError(undefined);
        try {
          props.onCreated(await api().evals.create(props.agentId, { name: name.trim(), cases: [] }));
          setName("");
        } catch (e) {
          setError(describeError(e));
        } finally {
          setPending(false);
        }
      }}
    >
      <div class="field">
        <label for="new-suite-name">New suite name</label>
        <input id="new-suite-name" value={name} required onInput={(e) => setName(e.currentTarget.value)} />
      </div>
      <WriteButton type="submit" disabled={pending || name.trim() === ""}>
        Create suite
      </WriteButton>
      {error ? <ErrorNote>{error}</ErrorNote> : null}
    </form>
  );
}

function RunPanel(props: { agentId: string; suite: SuiteResponse; onDone: () => void }) {
  const { agentId, suite } = props;
  const targets = useLoad(
    async () => ({ draft: (await draftOrNull(agentId))?.revision, version: await activeVersion(agentId) }),
    [agentId],
  );
  const [runs, setRuns] = useState<{ draft?: RunResponse; version?: RunResponse; ids?: [string, string] }>(
    {},
  );
  const [error, setError] = useState<string>();
  const ids = runs.ids;

  useEffect(() => {
    if (!ids) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const [draft, version] = await Promise.all(ids.map((id) => api().evals.run(agentId, suite.id, id)));
        if (!live) return;
        setRuns({ draft, version, ids });
        if (settled(draft) && settled(version)) props.onDone();
        else timer = setTimeout(() => void poll(), 1000);
      } catch (e) {
        if (live) setError(describeError(e));
      }
    };
    void poll();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [ids?.[0], ids?.[1]]);

  const t = targets.data;
  const start = async () => {
    if (t?.draft === undefined || t.version === undefined) return;
    setError(undefined);
    setRuns({});
    try {
      const [a, b] = await Promise.all([
        api().evals.startRun(agentId, suite.id, { target: { draftRevision: t.draft } }),
        api().evals.startRun(agentId, suite.id, { target: { version: t.version } }),
      ]);
      setRuns({ ids: [a.runId, b.runId] });
    } catch (e) {
      setError(describeError(e));
    }
  };
  const running = ids !== undefined && !(settled(runs.draft) && settled(runs.version));
  return (
    <section aria-labelledby="run-title">
      <h2 id="run-title">Run on the draft and the active version</h2>
      {targets.error ? <ErrorNote>{targets.error}</ErrorNote> : null}
      {t && (t.draft === undefined || t.version === undefined) ? (
        <p>
          {t.draft === undefined ? "Save a draft first. " : ""}
          {t.version === undefined ? "No release is active in this environment. " : ""}
        </p>
      ) : null}
      <WriteButton
        class="primary"
        disabled={
          !t || t.draft === undefined || t.version === undefined || running || suite.cases.length === 0
        }
        onClick={() => void start()}
      >
        {running
          ? "Running…"
          : `Run ${suite.name} on draft revision ${t?.draft ?? "…"} and version ${t?.version ?? "…"}`}
      </WriteButton>
      {error ? <ErrorNote>Could not run: {error}</ErrorNote> : null}
      {ids ? (
        <RunDiff
          caseIds={suite.cases.map((c) => c.id)}
          sides={[
            { label: `Draft revision ${t?.draft}`, run: runs.draft },
            { label: `Version ${t?.version}`, run: runs.version },
          ]}
        />
      ) : null}
    </section>
  );
}

export default function EvalsScreen(props: ScreenProps) {
  adoptCss("evals", CSS);
  const agentId = props.params.agentId ?? "";
  const agentName = useAgentName(agentId);
  const suites = useLoad(() => api().evals.list(agentId, { limit: 100 }), [agentId]);
  const [selectedId, setSelectedId] = useState(suiteParam);
  const [current, setCurrent] = useState<SuiteResponse>();
  const [historyTick, setHistoryTick] = useState(0);
  const items = suites.data?.items ?? [];
  const listed = items.find((s) => s.id === selectedId);
  const suite = current?.id === selectedId ? current : listed;

  const select = (id: string, loaded?: SuiteResponse) => {
    setSelectedId(id);
    setCurrent(loaded);
    navigate(`/agents/${encodeURIComponent(agentId)}/evals?suite=${encodeURIComponent(id)}`, {
      replace: true,
    });
  };

  return (
    <Page title={`Evals · ${agentName}`} nav={<AgentNav agentId={agentId} current="evals" />}>
      <div class="work">
        <section aria-labelledby="suites-title">
          <h2 id="suites-title">Suites</h2>
          {suites.loading && !suites.data ? <Loading /> : null}
          {suites.error ? <ErrorNote>Could not list the suites: {suites.error}</ErrorNote> : null}
          {suites.data && items.length === 0 ? (
            <EmptyNote>
              No suites yet. Create one here, or make a test from a conversation's branch (Sessions).
            </EmptyNote>
          ) : null}
          {items.length > 0 ? (
            <Table label="Eval suites" head={["Suite", "Cases", "Revision", "Updated"]}>
              {items.map((s) => (
                <tr key={s.id} data-suite={s.id}>
                  <th scope="row">
                    <button type="button" aria-pressed={s.id === selectedId} onClick={() => select(s.id)}>
                      {s.name}
                    </button>
                  </th>
                  <td>{s.cases.length}</td>
                  <td>{s.revision}</td>
                  <td>
                    <RelativeTime iso={s.updatedAt} />
                  </td>
                </tr>
              ))}
            </Table>
          ) : null}
          {canWrite() ? (
            <NewSuite
              agentId={agentId}
              onCreated={(s) => {
                suites.reload();
                select(s.id, s);
              }}
            />
          ) : null}
        </section>

        {suite ? (
          <>
            <SuiteEditor
              agentId={agentId}
              suite={suite}
              onSaved={(s) => {
                setCurrent(s);
                suites.reload();
              }}
            />
            <RunPanel agentId={agentId} suite={suite} onDone={() => setHistoryTick((n) => n + 1)} />
            <RunHistory agentId={agentId} suiteId={suite.id} tick={historyTick} />
          </>
        ) : null}

        <GateForm agentId={agentId} suites={items} />
      </div>
    </Page>
  );
}
