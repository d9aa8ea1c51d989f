// Tenant secrets (/console/secrets): model-provider keys and signing secrets that artifacts name by alias. Values
// are write-only: set or replace one, delete one; the console never receives a value back.
import { useState } from "preact/hooks";
import type { SecretResponse } from "../../client/admin";
import { api, canWrite, describeError } from "../api";
import { ConfirmDialog } from "../kit/confirm-dialog";
import { MoreButton } from "../kit/more-button";
import { usePaged } from "../kit/paged";
import { Time } from "../kit/time";
import type { ScreenProps } from "../screens";
import { useAction } from "../ui/hooks";
import { ErrorNote, Loading, Page, ReadOnlyNote, StatusNote } from "../ui/page";

/** The API's alias rule (SECRET_ALIAS in src/shared/api.ts), for the browser's own check. */
const ALIAS_PATTERN = "[a-z0-9][a-z0-9_\\-]{0,63}";

function SetSecret(props: {
  alias: string;
  onAlias: (alias: string) => void;
  onSaved: (alias: string) => void;
}) {
  const save = useAction(async (alias: string, value: string) => {
    await api().secrets.put(alias, value);
    props.onSaved(alias);
  });
  return (
    <form
      class="card form-grid"
      aria-labelledby="set-secret-title"
      autoComplete="off"
      onSubmit={async (event) => {
        event.preventDefault();
        const form = event.currentTarget as HTMLFormElement;
        const value = form.elements.namedItem("value") as HTMLInputElement;
        // The value leaves the field as soon as it is stored: nothing keeps it on this page.
        if (await save.run(props.alias.trim(), value.value)) value.value = "";
      }}
    >
      <h2 id="set-secret-title">Set a secret</h2>
      <div class="field">
        <label for="secret-alias">Alias</label>
        <input
          id="secret-alias"
          name="alias"
          required
          pattern={ALIAS_PATTERN}
          value={props.alias}
          onInput={(event) => props.onAlias(event.currentTarget.value)}
          spellcheck={false}
          aria-describedby="secret-alias-help"
        />
        <span id="secret-alias-help" class="muted">
          Lowercase letters, digits, “-” and “_”, up to 64; what an artifact's <code>apiKeySecret</code> or a
          tool's <code>signingSecret</code> names. An existing alias is replaced.
        </span>
      </div>
      <div class="field">
        <label for="secret-value">Value</label>
        <input
          id="secret-value"
          name="value"
          type="password"
          required
          autoComplete="new-password"
          spellcheck={false}
          aria-describedby="secret-value-help"
        />
        <span id="secret-value-help" class="muted">
          Encrypted at rest and never shown again, here or by the API.
        </span>
      </div>
      {save.error ? <ErrorNote>{save.error}</ErrorNote> : null}
      <div>
        <button class="primary" type="submit" disabled={save.pending}>
          {save.pending ? "Saving…" : "Save secret"}
        </button>
      </div>
    </form>
  );
}

export default function SecretsScreen(_props: ScreenProps) {
  const secrets = usePaged((cursor) => api().secrets.list({ limit: 100, ...(cursor ? { cursor } : {}) }));
  const [alias, setAlias] = useState("");
  const [done, setDone] = useState<string | undefined>(undefined);
  const [deleting, setDeleting] = useState<SecretResponse | undefined>(undefined);
  const [del, setDel] = useState<{ pending?: boolean; error?: string }>({});

  const doDelete = async () => {
    if (!deleting) return;
    setDel({ pending: true });
    try {
      await api().secrets.delete(deleting.alias);
      setDone(`Deleted “${deleting.alias}”. Agents that name it fail until it is set again.`);
      setDeleting(undefined);
      setDel({});
      secrets.reload();
    } catch (error) {
      setDel({ error: describeError(error) });
    }
  };

  return (
    <Page title="Secrets">
      {canWrite() ? (
        <SetSecret
          alias={alias}
          onAlias={setAlias}
          onSaved={(saved) => {
            setDone(`Saved “${saved}”. Its value is not shown again.`);
            setAlias("");
            secrets.reload();
          }}
        />
      ) : (
        <ReadOnlyNote />
      )}
      <h2 id="secrets-title">Aliases</h2>
      {done ? <StatusNote>{done}</StatusNote> : null}
      {secrets.error ? <ErrorNote>{secrets.error}</ErrorNote> : null}
      {secrets.loading && secrets.items.length === 0 ? <Loading /> : null}
      {!secrets.loading && secrets.items.length === 0 && !secrets.error ? (
        <p class="muted">No secrets yet.</p>
      ) : null}
      {secrets.items.length > 0 ? (
        <div class="table-wrap">
          <table aria-labelledby="secrets-title">
            <thead>
              <tr>
                <th scope="col">Alias</th>
                <th scope="col">Value</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {secrets.items.map((s) => (
                <tr key={s.alias}>
                  <td>
                    <code>{s.alias}</code>
                  </td>
                  <td class="muted">hidden (write-only)</td>
                  <td>
                    <Time iso={s.createdAt} />
                  </td>
                  <td>
                    <Time iso={s.updatedAt} />
                  </td>
                  <td class="row-actions">
                    {canWrite() ? (
                      <>
                        <button
                          type="button"
                          class="small"
                          aria-label={`Replace the value of ${s.alias}`}
                          onClick={() => {
                            setAlias(s.alias);
                            document.getElementById("secret-value")?.focus();
                          }}
                        >
                          Replace…
                        </button>
                        <button
                          type="button"
                          class="danger small"
                          aria-label={`Delete ${s.alias}`}
                          onClick={() => {
                            setDel({});
                            setDeleting(s);
                          }}
                        >
                          Delete…
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <MoreButton list={secrets} what="secrets" />
      <ConfirmDialog
        open={deleting !== undefined}
        title={`Delete the secret “${deleting?.alias ?? ""}”?`}
        confirmLabel="Delete secret"
        pendingLabel="Deleting…"
        pending={del.pending ?? false}
        error={del.error}
        onConfirm={() => void doDelete()}
        onCancel={() => setDeleting(undefined)}
      >
        <p>
          Agents and tools that name this alias fail (model calls, tool signatures) until it is set again. The
          value cannot be recovered.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
