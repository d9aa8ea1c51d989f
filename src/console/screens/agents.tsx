// The tenant's agents, a page at a time, and a form to create one (name, slug, visibility, allowed origins).
import { useEffect, useRef, useState } from "preact/hooks";
import type { AgentResponse } from "../../client/admin";
import { OriginsField, parseOrigins, SLUG_PATTERN, slugFromName, VisibilityField } from "../agents/fields";
import { api } from "../api";
import { href, navigate } from "../router";
import type { ScreenProps } from "../screens";
import { Field, fieldErrors } from "../ui/field";
import { useAction, usePaged } from "../ui/hooks";
import { EmptyNote, ErrorNote, flashNext, Loading, Page } from "../ui/page";
import { Pager } from "../ui/pager";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

const PAGE_SIZE = 20;

export default function Agents(_props: ScreenProps) {
  const [creating, setCreating] = useState(false);
  const paged = usePaged(
    (cursor) => api().agents.list({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
    [],
  );
  return (
    <Page
      title="Agents"
      actions={
        <WriteButton class="primary" aria-expanded={creating} onClick={() => setCreating(!creating)}>
          New agent
        </WriteButton>
      }
    >
      {creating ? <CreateAgent onCancel={() => setCreating(false)} /> : null}
      {paged.error ? <ErrorNote>Could not list the agents: {paged.error}</ErrorNote> : null}
      {paged.loading && !paged.data ? <Loading label="Loading the agents…" /> : null}
      {paged.data && paged.items.length === 0 && paged.page === 1 ? (
        <EmptyNote>No agents yet. Create one to embed it on a site.</EmptyNote>
      ) : null}
      {paged.items.length > 0 ? <AgentTable agents={paged.items} busy={paged.loading} /> : null}
      <Pager paged={paged} label="Agent pages" />
    </Page>
  );
}

function AgentTable(props: { agents: AgentResponse[]; busy: boolean }) {
  return (
    <Table
      label="Agents"
      busy={props.busy}
      head={["Name", "Slug", "Visibility", "Status", "Allowed origins", "Created"]}
    >
      {props.agents.map((agent) => (
        <tr key={agent.id}>
          <td>
            <a href={href(`/agents/${encodeURIComponent(agent.id)}`)}>{agent.name}</a>
          </td>
          <td>
            <code>{agent.slug}</code>
          </td>
          <td>{agent.visibility}</td>
          <td>
            <span class={`status status-${agent.status}`}>{agent.status}</span>
          </td>
          <td>{originsSummary(agent.allowedOrigins)}</td>
          <td>
            <RelativeTime iso={agent.createdAt} />
          </td>
        </tr>
      ))}
    </Table>
  );
}

function originsSummary(origins: string[]): string {
  if (origins.length === 0) return "none";
  if (origins.length === 1) return origins[0]!;
  return `${origins[0]} and ${origins.length - 1} more`;
}

const CREATE_FIELDS = ["name", "slug", "visibility", "allowedOrigins"] as const;

/** What the browser can tell before asking: an empty name, a slug the API would refuse. */
function checkCreate(name: string, slug: string): Record<string, string> {
  const problems: Record<string, string> = {};
  if (name.trim() === "") problems.name = "Enter a name.";
  if (!new RegExp(`^${SLUG_PATTERN}$`).test(slug)) {
    problems.slug = "Use 1 to 63 lowercase letters, digits or '-', starting with a letter or digit.";
  }
  return problems;
}

function CreateAgent(props: { onCancel: () => void }) {
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [slugEdited, setSlugEdited] = useState(false);
  const [visibility, setVisibility] = useState<"public" | "private">("public");
  const [origins, setOrigins] = useState("");
  const [local, setLocal] = useState<Record<string, string>>({});
  const first = useRef<HTMLInputElement>(null);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => first.current?.focus(), []);
  const create = useAction(async () => {
    const agent = await api().agents.create({
      name: name.trim(),
      slug,
      visibility,
      allowedOrigins: parseOrigins(origins),
    });
    flashNext(`Agent “${agent.name}” created. Its embed snippet is below.`);
    navigate(`/agents/${encodeURIComponent(agent.id)}`);
  });
  const server = fieldErrors((create.failure as { details?: unknown } | undefined)?.details, CREATE_FIELDS);
  const byField = { ...server.byField, ...local };
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const problems = checkCreate(name, slug);
    setLocal(problems);
    if (Object.keys(problems).length === 0) await create.run();
    // Whatever is wrong is announced with its field: start there.
    requestAnimationFrame(() => form.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus());
  };
  return (
    <form class="card form" ref={form} onSubmit={submit} aria-labelledby="create-title" noValidate>
      <h2 id="create-title">New agent</h2>
      <Field id="agent-name" label="Name" error={byField.name}>
        {(control) => (
          <input
            {...control}
            ref={first}
            name="name"
            required
            maxLength={200}
            autoComplete="off"
            value={name}
            onInput={(event) => {
              const value = event.currentTarget.value;
              setName(value);
              setLocal({});
              if (!slugEdited) setSlug(slugFromName(value));
            }}
          />
        )}
      </Field>
      <Field
        id="agent-slug"
        label="Slug"
        hint="Lowercase letters, digits and '-', unique in your tenant; it cannot be changed later."
        error={byField.slug}
      >
        {(control) => (
          <input
            {...control}
            name="slug"
            required
            pattern={SLUG_PATTERN}
            maxLength={63}
            autoComplete="off"
            spellcheck={false}
            value={slug}
            onInput={(event) => {
              setSlug(event.currentTarget.value);
              setSlugEdited(true);
              setLocal({});
            }}
          />
        )}
      </Field>
      <VisibilityField name="visibility" value={visibility} onChange={setVisibility} />
      <OriginsField id="agent-origins" value={origins} error={byField.allowedOrigins} onInput={setOrigins} />
      {create.error && Object.keys(local).length === 0 ? (
        <ErrorNote>
          Could not create the agent:{" "}
          {server.rest.length > 0
            ? server.rest.join("; ")
            : Object.keys(server.byField).length > 0
              ? "check the fields marked above."
              : create.error}
        </ErrorNote>
      ) : null}
      <div class="form-actions">
        <button type="submit" class="primary" disabled={create.pending}>
          {create.pending ? "Creating…" : "Create agent"}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
