// One agent: its embed snippet, its settings (name, status, visibility, allowed origins, retention) and its public
// key, rotated only after a confirmation. Links lead to its draft, playground, versions and releases.
import { useEffect, useRef, useState } from "preact/hooks";
import type { AgentResponse, PatchAgentRequest } from "../../client/admin";
import { embedSnippet, OriginsField, parseOrigins, VisibilityField } from "../agents/fields";
import { api, canWrite } from "../api";
import type { ScreenProps } from "../screens";
import { AgentNav } from "../ui/agent-nav";
import { ConfirmDialog } from "../ui/confirm";
import { CopyButton } from "../ui/copy";
import { Field, fieldErrors } from "../ui/field";
import { useAction, useLoad } from "../ui/hooks";
import { ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { TextBlock } from "../ui/text-block";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

export default function Agent(props: ScreenProps) {
  const agentId = props.params.agentId!;
  const loaded = useLoad(() => api().agents.get(agentId), [agentId]);
  // The latest answer of a save or a rotation replaces the loaded agent without another request.
  const [agent, setAgent] = useState<AgentResponse | undefined>(undefined);
  useEffect(() => setAgent(loaded.data), [loaded.data]);
  const nav = <AgentNav agentId={agentId} current="settings" />;
  if (!agent) {
    return (
      <Page title="Agent" nav={nav}>
        {loaded.error ? <ErrorNote>Could not load the agent: {loaded.error}</ErrorNote> : <Loading />}
      </Page>
    );
  }
  return (
    <Page
      title={agent.name}
      subtitle={
        <>
          <code>{agent.slug}</code> · <code>{agent.id}</code> · created <RelativeTime iso={agent.createdAt} />
        </>
      }
      nav={nav}
    >
      <Embed agent={agent} />
      <Settings key={agent.id} agent={agent} onSaved={setAgent} />
      <PublicKey agent={agent} onRotated={setAgent} />
    </Page>
  );
}

function Embed(props: { agent: AgentResponse }) {
  const snippet = embedSnippet(props.agent.publicKey);
  return (
    <section class="card" aria-labelledby="embed-title">
      <h2 id="embed-title">Embed</h2>
      <p>
        Paste this into the pages of an allowed origin; the launcher appears on them.
        {props.agent.visibility === "private"
          ? " This agent is private: the page must also call AgentThreads.identify() with a launch token from your backend."
          : ""}
      </p>
      <TextBlock class="snippet">
        <code>{snippet}</code>
      </TextBlock>
      <CopyButton text={snippet} label="Copy embed snippet" />
      {props.agent.status === "disabled" ? (
        <p class="note muted">The agent is disabled: the launcher shows, but conversations cannot start.</p>
      ) : null}
    </section>
  );
}

const SETTINGS_FIELDS = ["name", "status", "visibility", "allowedOrigins", "retention"] as const;

function Settings(props: { agent: AgentResponse; onSaved: (agent: AgentResponse) => void }) {
  const { agent } = props;
  const [name, setName] = useState(agent.name);
  const [status, setStatus] = useState(agent.status);
  const [visibility, setVisibility] = useState(agent.visibility);
  const [origins, setOrigins] = useState(agent.allowedOrigins.join("\n"));
  const [retain, setRetain] = useState(agent.retention !== null);
  const [days, setDays] = useState(String(agent.retention?.maxAgeDays ?? 30));
  const [saved, setSaved] = useState(false);
  const readOnly = !canWrite();

  const save = useAction(async (patch: PatchAgentRequest) => {
    const updated = await api().agents.update(agent.id, patch);
    // The server answers origins in canonical form (lower case, no duplicates): show what it stored.
    setName(updated.name);
    setOrigins(updated.allowedOrigins.join("\n"));
    setSaved(true);
    props.onSaved(updated);
  });
  const { byField, rest } = fieldErrors(
    (save.failure as { details?: unknown } | undefined)?.details,
    SETTINGS_FIELDS,
  );
  const daysError =
    retain && !/^\d{1,4}$/.test(days.trim()) ? "Enter a whole number of days from 1 to 3650." : undefined;

  const form = useRef<HTMLFormElement>(null);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    setSaved(false);
    const patch = changes(agent, { name, status, visibility, origins, retain, days: Number(days) });
    if (!daysError && Object.keys(patch).length === 0) setSaved(true);
    else if (!daysError) await save.run(patch);
    // Whatever is wrong is announced with its field: start there.
    requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
  };

  return (
    <form class="card form" ref={form} onSubmit={submit} aria-labelledby="settings-title" noValidate>
      <h2 id="settings-title">Settings</h2>
      {/* A read-only key sees the values, greyed, with the page's note saying why. */}
      <fieldset class="plain" disabled={readOnly || save.pending}>
        <legend class="sr-only">Agent settings</legend>
        <Field id="settings-name" label="Name" error={byField.name}>
          {(control) => (
            <input
              {...control}
              name="name"
              required
              maxLength={200}
              autoComplete="off"
              value={name}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          id="settings-status"
          label="Status"
          hint="A disabled agent starts no conversations, and its existing threads are refused until it is active again."
          error={byField.status}
        >
          {(control) => (
            <select
              {...control}
              name="status"
              value={status}
              onChange={(event) => setStatus(event.currentTarget.value as AgentResponse["status"])}
            >
              <option value="active">Active</option>
              <option value="disabled">Disabled</option>
            </select>
          )}
        </Field>
        <VisibilityField name="settings-visibility" value={visibility} onChange={setVisibility} />
        <OriginsField
          id="settings-origins"
          value={origins}
          error={byField.allowedOrigins}
          onInput={setOrigins}
        />
        <fieldset class="field choices">
          <legend>Retention</legend>
          <label class="choice">
            <input
              type="checkbox"
              checked={retain}
              onChange={(event) => setRetain(event.currentTarget.checked)}
            />
            <span>Delete conversations older than a maximum age (existing ones too)</span>
          </label>
          {retain ? (
            <Field
              id="settings-retention"
              label="Maximum age in days"
              hint="1 to 3650. A version's own shorter retention still wins."
              error={daysError ?? byField.retention}
            >
              {(control) => (
                <input
                  {...control}
                  name="maxAgeDays"
                  type="number"
                  inputMode="numeric"
                  min={1}
                  max={3650}
                  class="narrow"
                  value={days}
                  onInput={(event) => setDays(event.currentTarget.value)}
                />
              )}
            </Field>
          ) : null}
        </fieldset>
      </fieldset>
      {save.error ? (
        <ErrorNote>
          Not saved:{" "}
          {rest.length > 0
            ? rest.join("; ")
            : Object.keys(byField).length > 0
              ? "check the fields marked above."
              : save.error}
        </ErrorNote>
      ) : null}
      {saved && !save.error ? <StatusNote>Settings saved.</StatusNote> : null}
      <div class="form-actions">
        <WriteButton type="submit" class="primary" disabled={save.pending}>
          {save.pending ? "Saving…" : "Save settings"}
        </WriteButton>
      </div>
    </form>
  );
}

/** Only what differs from the stored agent, so a save never rewrites a field someone else just changed. */
function changes(
  agent: AgentResponse,
  form: {
    name: string;
    status: AgentResponse["status"];
    visibility: AgentResponse["visibility"];
    origins: string;
    retain: boolean;
    days: number;
  },
): PatchAgentRequest {
  const patch: PatchAgentRequest = {};
  if (form.name.trim() !== agent.name) patch.name = form.name.trim();
  if (form.status !== agent.status) patch.status = form.status;
  if (form.visibility !== agent.visibility) patch.visibility = form.visibility;
  const origins = parseOrigins(form.origins);
  if (origins.join("\n") !== agent.allowedOrigins.join("\n")) patch.allowedOrigins = origins;
  const retention = form.retain ? { maxAgeDays: form.days } : null;
  if ((retention?.maxAgeDays ?? null) !== (agent.retention?.maxAgeDays ?? null)) patch.retention = retention;
  return patch;
}

function PublicKey(props: { agent: AgentResponse; onRotated: (agent: AgentResponse) => void }) {
  const [confirming, setConfirming] = useState(false);
  const [rotated, setRotated] = useState(false);
  const rotate = useAction(async () => {
    const updated = await api().agents.rotatePublicKey(props.agent.id);
    setConfirming(false);
    setRotated(true);
    props.onRotated(updated);
  });
  return (
    <section class="card" aria-labelledby="key-title">
      <h2 id="key-title">Public key</h2>
      <p>
        The key in the embed snippet. It only selects this agent; the allowed origins decide where it works.
      </p>
      <p class="key-line">
        <code class="public-key">{props.agent.publicKey}</code>{" "}
        <CopyButton text={props.agent.publicKey} label="Copy key" />
      </p>
      {rotated ? <StatusNote>New key issued: update every embed with the snippet above.</StatusNote> : null}
      <WriteButton
        class="danger"
        onClick={() => {
          rotate.clear();
          setConfirming(true);
        }}
      >
        Rotate public key…
      </WriteButton>
      <ConfirmDialog
        open={confirming}
        title="Rotate the public key?"
        confirmLabel="Rotate key"
        danger
        pending={rotate.pending}
        error={rotate.error}
        onConfirm={() => void rotate.run()}
        onClose={() => setConfirming(false)}
      >
        <p>
          The current key <code>{props.agent.publicKey}</code> stops starting conversations at once. Every
          site that embeds it needs the new snippet.
        </p>
      </ConfirmDialog>
    </section>
  );
}
