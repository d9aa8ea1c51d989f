// The tenant's API keys (/console/keys): create one (admin or read; the key is shown once), list, revoke.
import { useState } from "preact/hooks";
import type { ApiKeyResponse, CreatedApiKeyResponse } from "../../client/admin";
import { api, canWrite, describeError, session } from "../api";
import { ConfirmDialog } from "../kit/confirm-dialog";
import { MoreButton } from "../kit/more-button";
import { usePaged } from "../kit/paged";
import { SecretOnce } from "../kit/secret-once";
import { Time } from "../kit/time";
import type { ScreenProps } from "../screens";
import { useAction } from "../ui/hooks";
import { ErrorNote, Loading, Page, ReadOnlyNote, StatusNote } from "../ui/page";

function CreateKey(props: { onCreated: (key: CreatedApiKeyResponse) => void }) {
  const create = useAction(async (name: string, scope: "admin" | "read") =>
    props.onCreated(await api().apiKeys.create({ name, scope })),
  );
  return (
    <form
      class="card form-grid"
      aria-labelledby="create-key-title"
      onSubmit={async (event) => {
        event.preventDefault();
        const form = event.currentTarget as HTMLFormElement;
        const data = new FormData(form);
        const scope = data.get("scope") === "read" ? "read" : "admin";
        if (await create.run(String(data.get("name") ?? "").trim(), scope)) form.reset();
      }}
    >
      <h2 id="create-key-title">Create a key</h2>
      <div class="field">
        <label for="key-name">Name</label>
        <input id="key-name" name="name" required maxLength={100} placeholder="Backend (production)" />
      </div>
      <fieldset class="field">
        <legend>Scope</legend>
        <label class="inline">
          <input type="radio" name="scope" value="admin" defaultChecked /> Admin — reads and changes
          everything
        </label>
        <label class="inline">
          <input type="radio" name="scope" value="read" /> Read — reads only (sessions, analytics, exports)
        </label>
      </fieldset>
      {create.error ? <ErrorNote>{create.error}</ErrorNote> : null}
      <div>
        <button class="primary" type="submit" disabled={create.pending}>
          {create.pending ? "Creating…" : "Create key"}
        </button>
      </div>
    </form>
  );
}

export default function KeysScreen(_props: ScreenProps) {
  const keys = usePaged((cursor) => api().apiKeys.list({ limit: 100, ...(cursor ? { cursor } : {}) }));
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
          title={`New key “${created.name}” (${created.scope})`}
          label="API key"
          value={created.apiKey}
          onDone={() => setCreated(undefined)}
        />
      ) : null}
      {canWrite() ? (
        <CreateKey
          onCreated={(key) => {
            setDone(undefined);
            setCreated(key);
            keys.reload();
          }}
        />
      ) : (
        <ReadOnlyNote />
      )}
      <h2 id="keys-title">Keys</h2>
      {done ? <StatusNote>{done}</StatusNote> : null}
      {keys.error ? <ErrorNote>{keys.error}</ErrorNote> : null}
      {keys.loading && keys.items.length === 0 ? <Loading /> : null}
      <div class="table-wrap">
        <table aria-labelledby="keys-title">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scope</th>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.items.map((key) => (
              <tr key={key.id}>
                <td>
                  {key.name}
                  {key.id === ownKeyId ? <span class="badge">this session</span> : null}
                </td>
                <td>{key.scope}</td>
                <td>
                  <code>
                    {key.prefix}…{key.last4}
                  </code>
                </td>
                <td>
                  <Time iso={key.createdAt} />
                </td>
                <td>
                  {key.revokedAt ? (
                    <>
                      revoked <Time iso={key.revokedAt} />
                    </>
                  ) : (
                    "active"
                  )}
                </td>
                <td>
                  {canWrite() && !key.revokedAt ? (
                    <button
                      type="button"
                      class="danger small"
                      aria-label={`Revoke ${key.name}`}
                      onClick={() => {
                        setRevoke({});
                        setRevoking(key);
                      }}
                    >
                      Revoke…
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <MoreButton list={keys} what="keys" />
      <ConfirmDialog
        open={revoking !== undefined}
        title={`Revoke “${revoking?.name ?? ""}”?`}
        confirmLabel="Revoke key"
        pendingLabel="Revoking…"
        pending={revoke.pending ?? false}
        error={revoke.error}
        onConfirm={() => void doRevoke()}
        onCancel={() => setRevoking(undefined)}
      >
        <p>
          Every request with this key fails from now on
          {revoking?.id === ownKeyId ? ", including this console session: you will be signed out" : ""}. This
          cannot be undone.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
