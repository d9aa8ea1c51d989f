// Event webhooks (/console/webhooks): endpoints (create with the secret shown once, edit, rotate the secret, delete),
// each endpoint's delivery log, and redelivery of one event (docs/webhooks.md).
import { useState } from "preact/hooks";
import type { DeliveryView, EventType, WebhookResponse, WebhookWithSecret } from "../../client/webhooks";
import { api, canWrite, describeError } from "../api";
import { SecretOnce } from "../kit/secret-once";
import type { ScreenProps } from "../screens";
import { ConfirmDialog } from "../ui/confirm";
import { Field, fieldErrors } from "../ui/field";
import { useAction, usePaged } from "../ui/hooks";
import { EmptyNote, ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { Pager } from "../ui/pager";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

/** Every event type (the Record's keys must be exactly the API's), with what it means. */
const EVENT_HELP: Record<EventType, string> = {
  "thread.created": "a conversation starts",
  "run.succeeded": "a reply finished",
  "run.failed": "a reply failed",
  "message.feedback": "a user rated a reply",
  "handoff.requested": "the model asked for a person",
  "session.erased": "a conversation was erased",
  "approval.requested": "a tool call waits for a decision",
  "approval.decided": "a tool call was approved, denied or timed out",
  "tool.requested": "a client tool call waits for the page's answer",
  "eval.completed": "an eval run of a suite finished",
};
const EVENT_TYPES = Object.keys(EVENT_HELP) as EventType[];

interface EndpointFields {
  url: string;
  events: EventType[];
  description: string;
}

function readFields(form: HTMLFormElement): EndpointFields {
  const data = new FormData(form);
  const events = data.getAll("events").map(String);
  return {
    url: String(data.get("url") ?? "").trim(),
    events: EVENT_TYPES.filter((e) => events.includes(e)),
    description: String(data.get("description") ?? "").trim(),
  };
}

function EndpointForm(props: {
  idPrefix: string;
  title: string;
  submitLabel: string;
  initial?: WebhookResponse;
  onSubmit: (fields: EndpointFields) => Promise<unknown>;
  onCancel?: () => void;
}) {
  const action = useAction(props.onSubmit);
  const [noEvents, setNoEvents] = useState(false);
  const p = props.idPrefix;
  const { byField, rest } = fieldErrors((action.failure as { details?: unknown } | undefined)?.details, [
    "url",
    "events",
    "description",
  ]);
  const eventsError = noEvents ? "Choose at least one event." : byField.events;
  return (
    <form
      class="card form"
      aria-labelledby={`${p}-title`}
      onSubmit={async (event) => {
        event.preventDefault();
        const form = event.currentTarget as HTMLFormElement;
        const fields = readFields(form);
        setNoEvents(fields.events.length === 0);
        if (fields.events.length === 0) return;
        if ((await action.run(fields)) && !props.initial) form.reset();
      }}
    >
      {props.initial ? <h4 id={`${p}-title`}>{props.title}</h4> : <h2 id={`${p}-title`}>{props.title}</h2>}
      <fieldset class="plain" disabled={!canWrite() || action.pending}>
        <Field
          id={`${p}-url`}
          label="URL"
          hint="Public https on the default port; under npm run dev also http://127.0.0.1:<port>."
          error={byField.url}
        >
          {(control) => (
            <input
              {...control}
              name="url"
              type="url"
              required
              maxLength={2048}
              defaultValue={props.initial?.url ?? ""}
              placeholder="https://crm.example.com/hooks/agent"
              spellcheck={false}
            />
          )}
        </Field>
        <fieldset
          class="field choices"
          aria-describedby={eventsError ? `${p}-events-error` : undefined}
          aria-invalid={eventsError ? true : undefined}
        >
          <legend>Events</legend>
          {EVENT_TYPES.map((type) => (
            <label class="choice" key={type}>
              <input
                type="checkbox"
                name="events"
                value={type}
                defaultChecked={props.initial ? props.initial.events.includes(type) : true}
              />
              <span>
                <code>{type}</code> <span class="muted">— {EVENT_HELP[type]}</span>
              </span>
            </label>
          ))}
          {eventsError ? (
            <p id={`${p}-events-error`} class="field-error">
              {eventsError}
            </p>
          ) : null}
        </fieldset>
        <Field id={`${p}-description`} label="Description (optional)" error={byField.description}>
          {(control) => (
            <input
              {...control}
              name="description"
              maxLength={500}
              defaultValue={props.initial?.description ?? ""}
            />
          )}
        </Field>
      </fieldset>
      {action.error ? (
        <ErrorNote>Could not save the endpoint: {rest.length > 0 ? rest.join("; ") : action.error}</ErrorNote>
      ) : null}
      <div class="form-actions">
        <WriteButton type="submit" class="primary" disabled={action.pending}>
          {action.pending ? "Saving…" : props.submitLabel}
        </WriteButton>
        {props.onCancel ? (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}

function DeliveryLog(props: { endpoint: WebhookResponse }) {
  const id = props.endpoint.id;
  const log = usePaged(
    (cursor) => api().webhooks.deliveries(id, { limit: 25, ...(cursor ? { cursor } : {}) }),
    [id],
  );
  const [note, setNote] = useState<{ ok?: string; error?: string }>({});
  const redeliver = async (delivery: DeliveryView) => {
    setNote({});
    try {
      await api().webhooks.redeliver(id, delivery.id);
      setNote({ ok: `Queued a new delivery of ${delivery.eventType} (${delivery.eventId}).` });
      log.reload();
    } catch (error) {
      setNote({ error: `Could not redeliver: ${describeError(error)}` });
    }
  };
  const titleId = `log-${id}`;
  return (
    <section class="delivery-log" aria-labelledby={titleId}>
      <div class="page-head">
        <h4 id={titleId}>Delivery log</h4>
        <button type="button" class="small" onClick={log.reload} disabled={log.loading}>
          Refresh
        </button>
      </div>
      {note.ok ? <StatusNote>{note.ok}</StatusNote> : null}
      {note.error ? <ErrorNote>{note.error}</ErrorNote> : null}
      {log.error ? <ErrorNote>Could not read the log: {log.error}</ErrorNote> : null}
      {log.loading && !log.data ? <Loading label="Loading the deliveries…" /> : null}
      {log.data && log.items.length === 0 && log.page === 1 ? (
        <EmptyNote>No deliveries yet: events appear here as they happen.</EmptyNote>
      ) : null}
      {log.items.length > 0 ? (
        <Table
          label={`Deliveries to ${props.endpoint.url}`}
          head={["Event", "Status", "Attempts", "Last answer", "Created", "Actions"]}
        >
          {log.items.map((d) => (
            <tr key={d.id}>
              <td>
                <code>{d.eventType}</code>
                <br />
                <code class="muted wrap">{d.eventId}</code>
              </td>
              <td>
                <span
                  class={`badge ${d.status === "failed" ? "error" : d.status === "succeeded" ? "ok" : ""}`}
                >
                  {d.status}
                </span>
                {d.nextAttemptAt ? (
                  <>
                    <br />
                    <span class="muted">
                      next <RelativeTime iso={d.nextAttemptAt} />
                    </span>
                  </>
                ) : null}
              </td>
              <td>{d.attempts}</td>
              <td>{d.lastStatusCode !== undefined ? `HTTP ${d.lastStatusCode}` : "—"}</td>
              <td>
                <RelativeTime iso={d.createdAt} />
              </td>
              <td>
                <WriteButton
                  class="small"
                  aria-label={`Redeliver ${d.eventType} ${d.eventId}`}
                  onClick={() => void redeliver(d)}
                >
                  Redeliver
                </WriteButton>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <Pager paged={log} label="Delivery pages" />
    </section>
  );
}

function Endpoint(props: {
  endpoint: WebhookResponse;
  logOpen: boolean;
  onToggleLog: () => void;
  onChanged: (message: string, secret?: WebhookWithSecret) => void;
  onDelete: () => void;
  onRotate: () => void;
}) {
  const e = props.endpoint;
  const [editing, setEditing] = useState(false);
  return (
    <li class="card endpoint">
      <h3>
        <code class="wrap">{e.url}</code>
      </h3>
      {e.description ? <p>{e.description}</p> : null}
      <p class="muted">
        {e.events.join(", ")} · created <RelativeTime iso={e.createdAt} />
      </p>
      <div class="row-actions">
        <button type="button" aria-expanded={props.logOpen} onClick={props.onToggleLog}>
          {props.logOpen ? "Hide delivery log" : "Delivery log"}
        </button>
        <WriteButton onClick={() => setEditing(!editing)} aria-expanded={editing}>
          Edit
        </WriteButton>
        <WriteButton onClick={props.onRotate}>Rotate secret…</WriteButton>
        <WriteButton class="danger" onClick={props.onDelete}>
          Delete…
        </WriteButton>
      </div>
      {editing ? (
        <EndpointForm
          idPrefix={`edit-${e.id}`}
          title="Edit endpoint"
          submitLabel="Save changes"
          initial={e}
          onCancel={() => setEditing(false)}
          onSubmit={async (fields) => {
            await api().webhooks.update(e.id, {
              url: fields.url,
              events: fields.events,
              description: fields.description === "" ? null : fields.description,
            });
            setEditing(false);
            props.onChanged(`Saved ${fields.url}.`);
          }}
        />
      ) : null}
      {props.logOpen ? <DeliveryLog endpoint={e} /> : null}
    </li>
  );
}

type Confirm = { kind: "delete" | "rotate"; endpoint: WebhookResponse; pending?: boolean; error?: string };

export default function WebhooksScreen(_props: ScreenProps) {
  const endpoints = usePaged(
    (cursor) => api().webhooks.list({ limit: 20, ...(cursor ? { cursor } : {}) }),
    [],
  );
  const [secret, setSecret] = useState<WebhookWithSecret | undefined>(undefined);
  const [done, setDone] = useState<string | undefined>(undefined);
  const [openLog, setOpenLog] = useState<string | undefined>(undefined);
  const [confirm, setConfirm] = useState<Confirm | undefined>(undefined);

  const changed = (message: string, withSecret?: WebhookWithSecret) => {
    setDone(message);
    if (withSecret) setSecret(withSecret);
    endpoints.reload();
  };

  const doConfirm = async () => {
    if (!confirm) return;
    setConfirm({ ...confirm, pending: true, error: undefined });
    try {
      if (confirm.kind === "delete") {
        await api().webhooks.delete(confirm.endpoint.id);
        changed(`Deleted ${confirm.endpoint.url} and its delivery log.`);
      } else {
        const rotated = await api().webhooks.rotateSecret(confirm.endpoint.id);
        changed(`Replaced the secret of ${confirm.endpoint.url}.`, rotated);
      }
      setConfirm(undefined);
    } catch (error) {
      setConfirm({ ...confirm, pending: false, error: describeError(error) });
    }
  };

  return (
    <Page title="Webhooks">
      <p class="muted">
        Your backend hears about conversations as they happen: each event is POSTed to your endpoints, signed
        with Standard Webhooks headers, and retried for more than a day.
      </p>
      {secret ? (
        <SecretOnce
          title={`Signing secret of ${secret.url}`}
          label="Signing secret"
          value={secret.secret}
          onDone={() => setSecret(undefined)}
        >
          Your receiver verifies every delivery with it. If it is lost, rotate the secret.
        </SecretOnce>
      ) : null}
      <EndpointForm
        idPrefix="new-endpoint"
        title="Add an endpoint"
        submitLabel="Add endpoint"
        onSubmit={async (fields) => {
          const created = await api().webhooks.create({
            url: fields.url,
            events: fields.events,
            ...(fields.description ? { description: fields.description } : {}),
          });
          changed(`Added ${created.url}.`, created);
        }}
      />
      <h2 id="endpoints-title">Endpoints</h2>
      {done ? <StatusNote>{done}</StatusNote> : null}
      {endpoints.error ? <ErrorNote>{endpoints.error}</ErrorNote> : null}
      {endpoints.loading && !endpoints.data ? <Loading label="Loading the endpoints…" /> : null}
      {endpoints.data && endpoints.items.length === 0 && endpoints.page === 1 ? (
        <EmptyNote>No endpoints yet.</EmptyNote>
      ) : null}
      <ul class="endpoints" aria-labelledby="endpoints-title">
        {endpoints.items.map((e) => (
          <Endpoint
            key={e.id}
            endpoint={e}
            logOpen={openLog === e.id}
            onToggleLog={() => setOpenLog(openLog === e.id ? undefined : e.id)}
            onChanged={changed}
            onDelete={() => setConfirm({ kind: "delete", endpoint: e })}
            onRotate={() => setConfirm({ kind: "rotate", endpoint: e })}
          />
        ))}
      </ul>
      <Pager paged={endpoints} label="Endpoint pages" />
      <ConfirmDialog
        open={confirm !== undefined}
        title={
          confirm?.kind === "rotate"
            ? `Replace the secret of ${confirm.endpoint.url}?`
            : `Delete ${confirm?.endpoint.url ?? ""}?`
        }
        confirmLabel={confirm?.kind === "rotate" ? "Rotate secret" : "Delete endpoint"}
        danger={confirm?.kind === "delete"}
        pending={confirm?.pending ?? false}
        error={confirm?.error}
        onConfirm={() => void doConfirm()}
        onClose={() => setConfirm(undefined)}
      >
        <p>
          {confirm?.kind === "rotate"
            ? "Every delivery from now on, retries included, is signed with the new secret only: update your receiver at once."
            : "Its pending deliveries and its delivery log are deleted too. This cannot be undone."}
        </p>
      </ConfirmDialog>
    </Page>
  );
}
