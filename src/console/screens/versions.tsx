// Versions: the published, immutable artifacts of an agent; one version's artifact, the differences between any
// two (or a version and the current draft), and publishing the saved draft revision.
import { useRef, useState } from "preact/hooks";
import type { VersionSummaryResponse } from "../../client/admin";
import { AgentThreadsError } from "../../client/http";
import { api, canWrite, describeError } from "../api";
import { type Change, diffJson } from "../draft/diff";
import { formatJson } from "../draft/json-path";
import { AgentTabs, DiffTable, IssueList, useAgentName } from "../draft/parts";
import { type Issue, serverIssues } from "../draft/schema";
import { href } from "../router";
import type { ScreenProps } from "../screens";
import { useLoad } from "../ui/hooks";
import { ErrorNote, Loading, Page, ReadOnlyNote, StatusNote } from "../ui/page";

/** "draft" or a version number, as the compare selects hold them. */
type Side = string;

const DRAFT = "draft";

async function listVersions(agentId: string, cursor?: string) {
  return api().versions.list(agentId, { limit: 50, ...(cursor ? { cursor } : {}) });
}

async function draftRevision(agentId: string): Promise<{ revision: number; definition: unknown } | null> {
  try {
    return await api().drafts.get(agentId);
  } catch (error) {
    if (error instanceof AgentThreadsError && error.code === "not_found") return null;
    throw error;
  }
}

const shortDigest = (digest: string) => `${digest.slice(0, 7 + 12)}…`;

export default function VersionsScreen(props: ScreenProps) {
  const agentId = props.params.agentId ?? "";
  const agentName = useAgentName(agentId);
  const [more, setMore] = useState<VersionSummaryResponse[]>([]);
  const [cursor, setCursor] = useState<string | undefined>();
  const versions = useLoad(async () => {
    const page = await listVersions(agentId);
    setMore([]);
    setCursor(page.nextCursor);
    return page.items;
  }, [agentId]);
  const draft = useLoad(() => draftRevision(agentId), [agentId]);
  const artifacts = useRef(new Map<Side, unknown>());
  const [viewing, setViewing] = useState<{ version: number; artifact: unknown }>();
  const [from, setFrom] = useState<Side>("");
  const [to, setTo] = useState<Side>("");
  const [diff, setDiff] = useState<{ from: Side; to: Side; changes: Change[] }>();
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<string>();
  const [publishIssues, setPublishIssues] = useState<Issue[]>([]);
  const writable = canWrite();

  const all = [...(versions.data ?? []), ...more];
  const latest = all[0]?.version;
  const fromValue = from || (all[1] ? String(all[1].version) : DRAFT);
  const toValue = to || (latest !== undefined ? String(latest) : DRAFT);

  const artifactOf = async (side: Side): Promise<unknown> => {
    if (side === DRAFT) {
      const current = await draftRevision(agentId);
      return current?.definition ?? {};
    }
    const cached = artifacts.current.get(side);
    if (cached !== undefined) return cached;
    const version = await api().versions.get(agentId, Number(side));
    artifacts.current.set(side, version.artifact);
    return version.artifact;
  };

  const run = async (what: string, work: () => Promise<void>) => {
    setBusy(what);
    setError(undefined);
    try {
      await work();
    } catch (e) {
      setError(describeError(e));
    } finally {
      setBusy(undefined);
    }
  };

  const view = (version: number) =>
    run(`view-${version}`, async () => {
      setViewing({ version, artifact: await artifactOf(String(version)) });
      requestAnimationFrame(() => document.getElementById("viewing-title")?.focus());
    });

  const compare = () =>
    run("compare", async () => {
      const [a, b] = await Promise.all([artifactOf(fromValue), artifactOf(toValue)]);
      setDiff({ from: fromValue, to: toValue, changes: diffJson(a, b) });
    });

  const publish = () =>
    run("publish", async () => {
      const revision = draft.data?.revision;
      if (revision === undefined) return;
      setStatus(undefined);
      setPublishIssues([]);
      try {
        const published = await api().versions.publish(agentId, revision);
        setStatus(`Published draft revision ${revision} as version ${published.version}.`);
        versions.reload();
      } catch (e) {
        const issues = e instanceof AgentThreadsError ? serverIssues(e.details) : [];
        setPublishIssues(issues);
        throw e;
      }
    });

  const loadMore = () =>
    run("more", async () => {
      const page = await listVersions(agentId, cursor);
      setMore((m) => [...m, ...page.items]);
      setCursor(page.nextCursor);
    });

  const name = (side: Side) => (side === DRAFT ? "Current draft" : `Version ${side}`);
  const options = [
    ...all.map((v) => (
      <option key={v.version} value={String(v.version)}>
        Version {v.version}
      </option>
    )),
    <option key={DRAFT} value={DRAFT}>
      Current draft
    </option>,
  ];
  const revision = draft.data?.revision;
  const published = all.find((v) => v.draftRevision === revision);
  const draftHref = href(`/agents/${encodeURIComponent(agentId)}/draft`);

  return (
    <Page title={`Versions · ${agentName}`}>
      <AgentTabs agentId={agentId} current="/versions" />
      <div class="work">
        <section aria-labelledby="publish-title">
          <h2 id="publish-title">Publish</h2>
          {draft.loading ? <Loading /> : null}
          {draft.error ? <ErrorNote>Could not read the draft: {draft.error}</ErrorNote> : null}
          {draft.data === null ? (
            <p>
              No draft yet. <a href={draftHref}>Write one</a>.
            </p>
          ) : null}
          {revision !== undefined ? (
            <>
              <p>
                The saved draft is at revision {revision}
                {published ? `, published as version ${published.version}` : ", not published yet"}. Unsaved
                changes in the <a href={draftHref}>editor</a> are not part of it.
              </p>
              {writable ? (
                <button
                  type="button"
                  class="primary"
                  disabled={busy !== undefined}
                  onClick={() => void publish()}
                >
                  {busy === "publish" ? "Publishing…" : `Publish revision ${revision}`}
                </button>
              ) : (
                <ReadOnlyNote />
              )}
            </>
          ) : null}
          <IssueList
            issues={publishIssues}
            title={`The draft cannot be published: ${publishIssues.length} ${publishIssues.length === 1 ? "problem" : "problems"}`}
          />
          {publishIssues.length > 0 ? (
            <p>
              <a href={draftHref}>Fix them in the draft editor</a>.
            </p>
          ) : null}
          {status ? <StatusNote>{status}</StatusNote> : null}
          {error ? <ErrorNote>{error}</ErrorNote> : null}
        </section>

        <h2>Published versions</h2>
        {versions.loading && !versions.data ? <Loading /> : null}
        {versions.error ? <ErrorNote>Could not list the versions: {versions.error}</ErrorNote> : null}
        {versions.data && all.length === 0 ? <p>Nothing published yet.</p> : null}
        {all.length > 0 ? (
          <div class="table-wrap">
            <table>
              <caption class="muted">Newest first. Versions never change once published.</caption>
              <thead>
                <tr>
                  <th scope="col">Version</th>
                  <th scope="col">Published</th>
                  <th scope="col">Draft revision</th>
                  <th scope="col">Digest</th>
                  <th scope="col">
                    <span class="muted">Artifact</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {all.map((v) => (
                  <tr key={v.version}>
                    <th scope="row">{v.version}</th>
                    <td>{new Date(v.createdAt).toLocaleString()}</td>
                    <td>{v.draftRevision}</td>
                    <td>
                      <code title={v.digest}>{shortDigest(v.digest)}</code>
                    </td>
                    <td>
                      <button
                        type="button"
                        disabled={busy !== undefined}
                        onClick={() => void view(v.version)}
                      >
                        View version {v.version}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
        {cursor ? (
          <button type="button" disabled={busy !== undefined} onClick={() => void loadMore()}>
            Show older versions
          </button>
        ) : null}

        {viewing ? (
          <section aria-labelledby="viewing-title">
            <h2 id="viewing-title" tabIndex={-1}>
              Version {viewing.version}
            </h2>
            <pre class="artifact">{formatJson(viewing.artifact)}</pre>
            <div class="actions">
              <button type="button" onClick={() => setViewing(undefined)}>
                Close version {viewing.version}
              </button>
            </div>
          </section>
        ) : null}

        {all.length > 0 ? (
          <section aria-labelledby="compare-title">
            <h2 id="compare-title">Compare</h2>
            <form
              class="row"
              onSubmit={(event) => {
                event.preventDefault();
                void compare();
              }}
            >
              <label for="compare-from">From</label>
              <select id="compare-from" value={fromValue} onChange={(e) => setFrom(e.currentTarget.value)}>
                {options}
              </select>
              <label for="compare-to">To</label>
              <select id="compare-to" value={toValue} onChange={(e) => setTo(e.currentTarget.value)}>
                {options}
              </select>
              <button type="submit" disabled={busy !== undefined}>
                {busy === "compare" ? "Comparing…" : "Compare"}
              </button>
            </form>
            {diff ? (
              <div aria-live="polite">
                <DiffTable
                  changes={diff.changes}
                  before={name(diff.from)}
                  after={name(diff.to)}
                  caption={`${name(diff.from)} to ${name(diff.to)}`}
                />
              </div>
            ) : null}
          </section>
        ) : null}
      </div>
    </Page>
  );
}
