// Tenant secrets (/console/secrets): model-provider keys and signing secrets that artifacts name by alias. Values
// are write-only: set or replace one, delete one; the console never receives a value back.
import { useRef, useState } from "preact/hooks";
import type { SecretResponse } from "../../client/admin";
import { api, canWrite, describeError } from "../api";
import type { ScreenProps } from "../screens";
import { ConfirmDialog } from "../ui/confirm";
import { Field } from "../ui/field";
import { useAction, usePaged } from "../ui/hooks";
import { EmptyNote, ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { Pager } from "../ui/pager";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

/** The API's alias rule (SECRET_ALIAS in src/shared/api.ts), for the browser's own check. */
const ALIAS_PATTERN = "[a-z0-9][a-z0-9_\\-]{0,63}";
const PAGE_SIZE = 50;

function SetSecret(props: {
  alias: string;
  onAlias: (alias: string) => void;
  onSaved: (alias: string) => void;
  valueRef: { current: HTMLInputElement | null };
}) {
  const save = useAction(async (alias: string, value: string) => {
    await api().secrets.put(alias, value);
    props.onSaved(alias);
  });
  return (
    <form
      class="card form"
      aria-labelledby="set-secret-title"
      autoComplete="off"
      onSubmit={async (event) => {
        event.preventDefault();
        const value = props.valueRef.current;
        if (!value) return;
        // The value leaves the field as soon as it is stored: nothing keeps it on this page.
        if (await save.run(props.alias.trim(), value.value)) value.value = "";
      }}
    >
      <h2 id="set-secret-title">Set a secret</h2>
      <fieldset class="plain" disabled={!canWrite() || save.pending}>
        <Field
          id="secret-alias"
          label="Alias"
          hint={
            <>
              Lowercase letters, digits, “-” and “_”, up to 64: what an artifact's <code>apiKeySecret</code>{" "}
              or a tool's <code>signingSecret</code> names. An existing alias is replaced.
            </>
          }
        >
          {(control) => (
            <input
              {...control}
              required
              pattern={ALIAS_PATTERN}
              maxLength={64}
              spellcheck={false}
              value={props.alias}
              onInput={(event) => props.onAlias(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          id="secret-value"
          label="Value"
          hint="Encrypted at rest and never shown again, here or by the API."
        >
          {(control) => (
            <input
              {...control}
              ref={props.valueRef}
              type="password"
              required
              autoComplete="new-password"
              spellcheck={false}
            />
          )}
        </Field>
      </fieldset>
      {save.error ? <ErrorNote>Could not save the secret: {save.error}</ErrorNote> : null}
      <div class="form-actions">
        <WriteButton type="submit" class="primary" disabled={save.pending}>
          {save.pending ? "Saving…" : "Save secret"}
        </WriteButton>
      </div>
    </form>
  );
}

export default function SecretsScreen(_props: ScreenProps) {
  const secrets = usePaged(
    (cursor) => api().secrets.list({ limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }),
    [],
  );
  const [alias, setAlias] = useState("");
  const valueRef = useRef<HTMLInputElement>(null);
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
      <SetSecret
        alias={alias}
        onAlias={setAlias}
        valueRef={valueRef}
        onSaved={(saved) => {
          setDone(`Saved “${saved}”. Its value is not shown again.`);
          setAlias("");
          secrets.reload();
        }}
      />
      <h2>Aliases</h2>
      {done ? <StatusNote>{done}</StatusNote> : null}
      {secrets.error ? <ErrorNote>Could not list the secrets: {secrets.error}</ErrorNote> : null}
      {secrets.loading && !secrets.data ? <Loading label="Loading the secrets…" /> : null}
      {secrets.data && secrets.items.length === 0 && secrets.page === 1 ? (
        <EmptyNote>No secrets yet.</EmptyNote>
      ) : null}
      {secrets.items.length > 0 ? (
        <Table label="Secrets" head={["Alias", "Value", "Created", "Updated", "Actions"]}>
          {secrets.items.map((s) => (
            <tr key={s.alias}>
              <td>
                <code>{s.alias}</code>
              </td>
              <td class="muted">hidden (write-only)</td>
              <td>
                <RelativeTime iso={s.createdAt} />
              </td>
              <td>
                <RelativeTime iso={s.updatedAt} />
              </td>
              <td>
                <div class="row-actions">
                  <WriteButton
                    class="small"
                    aria-label={`Replace the value of ${s.alias}`}
                    onClick={() => {
                      setAlias(s.alias);
                      valueRef.current?.focus();
                    }}
                  >
                    Replace…
                  </WriteButton>
                  <WriteButton
                    class="danger small"
                    aria-label={`Delete ${s.alias}`}
                    onClick={() => {
                      setDel({});
                      setDeleting(s);
                    }}
                  >
                    Delete…
                  </WriteButton>
                </div>
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <Pager paged={secrets} label="Secret pages" />
      <ConfirmDialog
        open={deleting !== undefined}
        title={`Delete the secret “${deleting?.alias ?? ""}”?`}
        confirmLabel="Delete secret"
        danger
        pending={del.pending ?? false}
        error={del.error}
        onConfirm={() => void doDelete()}
        onClose={() => setDeleting(undefined)}
      >
        <p>
          Agents and tools that name this alias fail (model calls, tool signatures) until it is set again. The
          value cannot be recovered.
        </p>
      </ConfirmDialog>
    </Page>
  );
}
