// The tenant's API keys (/console/keys): create one (admin or read; the key is shown once), list, revoke.
import { useState } from "preact/hooks";
import type { ApiKeyResponse, CreatedApiKeyResponse } from "../../client/admin";
import { api, canWrite, describeError, session } from "../api";
import { SecretOnce } from "../kit/secret-once";
import type { ScreenProps } from "../screens";
import { ConfirmDialog } from "../ui/confirm";
import { Field } from "../ui/field";
import { useAction, usePaged } from "../ui/hooks";
import { ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { Pager } from "../ui/pager";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

const PAGE_SIZE = 50;

function CreateKey(props: { onCreated: (key: CreatedApiKeyResponse) => void }) {
  const [name, setName] = useState("");
  const [scope, setScope] = useState<"admin" | "read">("admin");
  const create = useAction(async () => {
    props.onCreated(await api().apiKeys.create({ name: name.trim(), scope }));
    setName("");
  });
  return (
    <form
      class="card form"
      aria-labelledby="create-key-title"
      onSubmit={(event) => {
        event.preventDefault();
        void create.run();
      }}
    >
      <h2 id="create-key-title">Create a key</h2>
      <fieldset class="plain" disabled={!canWrite() || create.pending}>
        <Field id="key-name" label="Name" hint="What uses it, e.g. “Backend (production)”.">
          {(control) => (
            <input
              {...control}
              required
              maxLength={100}
              autoComplete="off"
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          )}
        </Field>
        <fieldset class="field choices">
          <legend>Scope</legend>
          <label class="choice">
            <input
              type="radio"
              name="scope"
              value="admin"
              checked={scope === "admin"}
              onChange={() => setScope("admin")}
            />
            <span>
              <strong>Admin</strong> — reads and changes everything
            </span>
          </label>
          <label class="choice">
            <input
              type="radio"
              name="scope"
              value="read"
              checked={scope === "read"}
              onChange={() => setScope("read")}
            />
            <span>
              <strong>Read</strong> — reads only: sessions, exports, analytics
            </span>
          </label>
        </fieldset>
      </fieldset>
      {create.error ? <ErrorNote>Could not create the key: {create.error}</ErrorNote> : null}
      <div class="form-actions">
        <WriteButton type="submit" class="primary" disabled={create.pending}>
          {create.pending ? "Creating…" : "Create key"}
        </WriteButton>
      </div>
    </form>
  );
}

export default function KeysScreen(_props: ScreenProps) {
  const keys = usePaged(
    (cursor) => api().apiKeys.list({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
    [],
  );
  const [created, setCreated] = useState<CreatedApiKeyResponse | undefined>(undefined);
  const [revoking, setRevoking] = useState<ApiKeyResponse | undefined>(undefined);
  const [revoke, setRevoke] = useState<{ pending?: boolean; error?: string }>({});
  const [done, setDone] = useState<string | undefined>(undefined);
  const ownKeyId = session.value?.keyId;

  const doRevoke = async () => {
    if (!revoking) return;
    setRevoke({ pending: true });
    try {
      await api().apiKeys.revoke(revoking.id);
      setDone(`Revoked “${revoking.name}”: it no longer works.`);
      setRevoking(undefined);
      setRevoke({});
      keys.reload();
    } catch (error) {
      setRevoke({ error: describeError(error) });
    }
  };

  return (
    <Page title="API keys">
      <p class="muted">
        Keys (<code>sk_…</code>) are for the tenant's backend: keep them out of browsers and repositories.
        Only a digest is stored, so a key is shown once, when it is created.
      </p>
      {created ? (
        <SecretOnce
          title={`New ${created.scope} key “${created.name}”`}
          label="API key"
          value={created.apiKey}
          onDone={() => setCreated(undefined)}
        />
      ) : null}
      <CreateKey
        onCreated={(key) => {
          setDone(undefined);
          setCreated(key);
          keys.reload();
        }}
      />
      <h2>Keys</h2>
      {done ? <StatusNote>{done}</StatusNote> : null}
      {keys.error ? <ErrorNote>Could not list the keys: {keys.error}</ErrorNote> : null}
      {keys.loading && !keys.data ? <Loading label="Loading the keys…" /> : null}
      {keys.items.length > 0 ? (
        <Table label="API keys" head={["Name", "Scope", "Key", "Created", "Status", "Actions"]}>
          {keys.items.map((key) => (
            <tr key={key.id}>
              <td>
                {key.name} {key.id === ownKeyId ? <span class="badge">this session</span> : null}
              </td>
              <td>{key.scope}</td>
              <td>
                <code>
                  {key.prefix}…{key.last4}
                </code>
              </td>
              <td>
                <RelativeTime iso={key.createdAt} />
              </td>
              <td>
                {key.revokedAt ? (
                  <>
                    revoked <RelativeTime iso={key.revokedAt} />
                  </>
                ) : (
                  "active"
                )}
              </td>
              <td>
                {key.revokedAt ? null : (
                  <WriteButton
                    class="danger small"
                    aria-label={`Revoke ${key.name}`}
                    onClick={() => {
                      setRevoke({});
                      setRevoking(key);
                    }}
                  >
                    Revoke…
                  </WriteButton>
                )}
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <Pager paged={keys} label="Key pages" />
      <ConfirmDialog
        open={revoking !== undefined}
        title={`Revoke “${revoking?.name ?? ""}”?`}
        confirmLabel="Revoke key"
        danger
        pending={revoke.pending ?? false}
        error={revoke.error}
        onConfirm={() => void doRevoke()}
        onClose={() => setRevoking(undefined)}
      >
        <p>
          Every request with this key fails from now on
          {revoking?.id === ownKeyId ? ", this console session's included: you will be signed out" : ""}. This
          cannot be undone.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
