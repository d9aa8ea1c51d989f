// Versions: the published, immutable artifacts of an agent; one version's artifact, the differences between any
// two (or a version and the current draft), and publishing the saved draft revision.
import { useRef, useState } from "preact/hooks";
import { AgentThreadsError } from "../../client/http";
import { api, describeError } from "../api";
import { type Change, diffJson } from "../draft/diff";
import { formatJson } from "../draft/json-path";
import { allVersions, draftOrNull } from "../draft/lists";
import { DiffTable, IssueList, useAgentName } from "../draft/parts";
import { type Issue, serverIssues } from "../draft/schema";
import { adoptCss } from "../draft/styles";
import { href } from "../router";
import type { ScreenProps } from "../screens";
import { AgentNav } from "../ui/agent-nav";
import { useLoad } from "../ui/hooks";
import { ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { Table } from "../ui/table";
import { TextBlock } from "../ui/text-block";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

/** "draft" or a version number, as the compare selects hold them. */
type Side = string;

const DRAFT = "draft";

const shortDigest = (digest: string) => `${digest.slice(0, 7 + 12)}…`;

export default function VersionsScreen(props: ScreenProps) {
  adoptCss("versions");
  const agentId = props.params.agentId ?? "";
  const agentName = useAgentName(agentId);
  const versions = useLoad(() => allVersions(agentId), [agentId]);
  const draft = useLoad(() => draftOrNull(agentId), [agentId]);
  const artifacts = useRef(new Map<Side, unknown>());
  const [viewing, setViewing] = useState<{ version: number; artifact: unknown }>();
  const [from, setFrom] = useState<Side>("");
  const [to, setTo] = useState<Side>("");
  const [diff, setDiff] = useState<{ from: Side; to: Side; changes: Change[] }>();
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState<string>();
  const [publishIssues, setPublishIssues] = useState<Issue[]>([]);

  const all = versions.data ?? [];
  const latest = all[0]?.version;
  const fromValue = from || (all[1] ? String(all[1].version) : DRAFT);
  const toValue = to || (latest !== undefined ? String(latest) : DRAFT);

  const artifactOf = async (side: Side): Promise<unknown> => {
    if (side === DRAFT) {
      const current = await draftOrNull(agentId);
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
    <Page title={`Versions · ${agentName}`} nav={<AgentNav agentId={agentId} current="versions" />}>
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
              <WriteButton
                class="primary"
                disabled={busy !== undefined || published !== undefined}
                onClick={() => void publish()}
              >
                {busy === "publish" ? "Publishing…" : `Publish revision ${revision}`}
              </WriteButton>
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
        <p class="muted">A version never changes once published; threads pinned to it keep it.</p>
        {versions.loading && !versions.data ? <Loading /> : null}
        {versions.error ? <ErrorNote>Could not list the versions: {versions.error}</ErrorNote> : null}
        {versions.data && all.length === 0 ? <p>Nothing published yet.</p> : null}
        {all.length > 0 ? (
          <Table
            label="Published versions, newest first"
            head={["Version", "Published", "Draft revision", "Digest", "Artifact"]}
          >
            {all.map((v) => (
              <tr key={v.version}>
                <th scope="row">{v.version}</th>
                <td>
                  <RelativeTime iso={v.createdAt} />
                </td>
                <td>{v.draftRevision}</td>
                <td>
                  <code title={v.digest}>{shortDigest(v.digest)}</code>
                </td>
                <td>
                  <button type="button" disabled={busy !== undefined} onClick={() => void view(v.version)}>
                    View version {v.version}
                  </button>
                </td>
              </tr>
            ))}
          </Table>
        ) : null}
        {viewing ? (
          <section aria-labelledby="viewing-title">
            <h2 id="viewing-title" tabIndex={-1}>
              Version {viewing.version}
            </h2>
            <TextBlock class="artifact">{formatJson(viewing.artifact)}</TextBlock>
            <div class="form-actions">
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
