// Releases: per environment, the active split, a form for a new one, and the history. A release is created
// inactive, and activating it is confirmed first since it changes what every new conversation there talks to.
import { useState } from "preact/hooks";
import type { ReleaseResponse } from "../../client/admin";
import { api, call, canWrite, describeError } from "../api";
import { allReleases, allVersions } from "../draft/lists";
import { useAgentName } from "../draft/parts";
import { TOTAL } from "../draft/weights";
import { describeAllocations, type Environment, type Row, WeightsForm } from "../draft/weights-form";
import { type GateFailure, GateRefusal, gateFailures } from "../evals/gate-refusal";
import type { ScreenProps } from "../screens";
import { AgentNav } from "../ui/agent-nav";
import { ConfirmDialog } from "../ui/confirm";
import { useLoad } from "../ui/hooks";
import { ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

const ENVIRONMENTS = ["development", "staging", "production"] as const;

export default function ReleasesScreen(props: ScreenProps) {
  const agentId = props.params.agentId ?? "";
  const agentName = useAgentName(agentId);
  const health = useLoad(() => call<{ environment: Environment }>("GET", "/v1/health"), []);
  const [picked, setPicked] = useState<Environment>();
  const environment = picked ?? health.data?.environment ?? "development";
  const versions = useLoad(() => allVersions(agentId), [agentId]);
  const releases = useLoad(() => allReleases(agentId), [agentId]);
  const [confirming, setConfirming] = useState<ReleaseResponse>();
  const [pending, setPending] = useState(false);
  const [confirmError, setConfirmError] = useState<string>();
  const [gate, setGate] = useState<GateFailure[]>();
  const [status, setStatus] = useState<string>();
  const writable = canWrite();

  const here = (releases.data ?? []).filter((r) => r.environment === environment);
  const active = here.find((r) => r.active);
  const newest = versions.data?.[0];
  // Derived during render, not in an effect: the form must mount with the active release's split, or a pick made
  // before an effect caught up would be replaced by it.
  const initial: Row[] = active
    ? active.allocations.map((a) => ({ version: a.version, weight: a.weight }))
    : newest
      ? [{ version: newest.version, weight: TOTAL }]
      : [];

  const activate = async (force?: string) => {
    if (!confirming) return;
    setPending(true);
    setConfirmError(undefined);
    setGate(undefined);
    try {
      await api().releases.activate(
        agentId,
        confirming.id,
        force !== undefined ? { reason: force } : undefined,
      );
      setStatus(
        `Activated in ${environment}: ${describeAllocations(confirming.allocations)}${force !== undefined ? " (past the release gate)" : ""}.`,
      );
      setConfirming(undefined);
      releases.reload();
    } catch (e) {
      const failures = gateFailures(e);
      if (failures) setGate(failures);
      else setConfirmError(describeError(e));
    } finally {
      setPending(false);
    }
  };

  return (
    <Page title={`Releases · ${agentName}`} nav={<AgentNav agentId={agentId} current="releases" />}>
      <div class="work">
        <div class="field">
          <label for="release-env">Environment</label>
          <select
            id="release-env"
            value={environment}
            onChange={(e) => setPicked(e.currentTarget.value as Environment)}
          >
            {ENVIRONMENTS.map((env) => (
              <option key={env} value={env}>
                {env}
                {env === health.data?.environment ? " (this deployment)" : ""}
              </option>
            ))}
          </select>
        </div>

        <section aria-labelledby="active-title">
          <h2 id="active-title">Active in {environment}</h2>
          {releases.loading && !releases.data ? <Loading /> : null}
          {releases.error ? <ErrorNote>Could not list the releases: {releases.error}</ErrorNote> : null}
          {releases.data ? (
            active ? (
              <p>
                {describeAllocations(active.allocations)}
                {active.activatedAt ? (
                  <>
                    , since <RelativeTime iso={active.activatedAt} />
                  </>
                ) : null}
                .
              </p>
            ) : (
              <p>No active release: launches in {environment} are refused until one is activated.</p>
            )
          ) : null}
          {status ? <StatusNote>{status}</StatusNote> : null}
        </section>

        {!writable ? null : versions.error ? (
          <ErrorNote>Could not list the versions: {versions.error}</ErrorNote>
        ) : versions.data && versions.data.length === 0 ? (
          <p>Publish a version first (Versions).</p>
        ) : versions.data && releases.data ? (
          // Once both are in: the form starts from the active release, and a late load must not reset a pick.
          <WeightsForm
            agentId={agentId}
            environment={environment}
            versions={versions.data}
            initial={initial}
            onCreated={(release) => {
              setStatus(
                `Created a release for ${environment}: ${describeAllocations(release.allocations)}. Activate it below.`,
              );
              releases.reload();
            }}
          />
        ) : null}

        <h2>History in {environment}</h2>
        {releases.data && here.length === 0 ? <p>No releases in {environment} yet.</p> : null}
        {here.length > 0 ? (
          <Table
            label={`Releases in ${environment}, newest first`}
            head={["Created", "Versions and weights", "Status", "Action"]}
          >
            {here.map((release) => (
              <tr key={release.id} data-release={release.id}>
                <th scope="row">
                  <RelativeTime iso={release.createdAt} />
                </th>
                <td>
                  {describeAllocations(release.allocations)}
                  {release.gateOverrides?.map((o) => (
                    <p key={o.at} class="muted">
                      Past the release gate ({o.action}, {o.by}): {o.reason}
                    </p>
                  ))}
                </td>
                <td>
                  {release.active ? (
                    <strong>Active</strong>
                  ) : release.activatedAt ? (
                    <>
                      Was active from <RelativeTime iso={release.activatedAt} />
                    </>
                  ) : (
                    "Never activated"
                  )}
                </td>
                <td>
                  {release.active ? null : (
                    <WriteButton
                      onClick={() => {
                        setConfirmError(undefined);
                        setConfirming(release);
                      }}
                    >
                      Activate
                      <span class="sr-only">
                        {" "}
                        the release of {new Date(release.createdAt).toLocaleString()}
                      </span>
                    </WriteButton>
                  )}
                </td>
              </tr>
            ))}
          </Table>
        ) : null}
      </div>
      <ConfirmDialog
        open={confirming !== undefined}
        title={`Activate this release in ${environment}?`}
        confirmLabel="Activate"
        pending={pending}
        error={confirmError}
        onConfirm={() => void activate()}
        onClose={() => {
          setConfirming(undefined);
          setGate(undefined);
        }}
      >
        {gate ? (
          <GateRefusal
            agentId={agentId}
            failures={gate}
            pending={pending}
            onForce={(reason) => void activate(reason)}
          />
        ) : null}
        <p>
          New threads in {environment} will get{" "}
          {confirming ? describeAllocations(confirming.allocations) : ""}.
        </p>
        <p>
          {active
            ? `It replaces the active release (${describeAllocations(active.allocations)}). `
            : "There is no active release now. "}
          Threads already started keep their version.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
