// "Make a test from this branch" on a conversation: copies the shown branch (redacted as the export is) into a case
// of one of the agent's eval suites, or of a new one (docs/evals.md#cases).
import { useState } from "preact/hooks";
import { api, describeError } from "../api";
import { href } from "../router";
import { ConfirmDialog } from "../ui/confirm";
import { useLoad } from "../ui/hooks";
import { StatusNote } from "../ui/page";
import { WriteButton } from "../ui/write";

const NEW = "__new__";

export function MakeTest(props: { agentId: string; threadId: string; entryId: string }) {
  const [open, setOpen] = useState(false);
  const suites = useLoad(
    () => (open ? api().evals.list(props.agentId, { limit: 100 }) : Promise.resolve(undefined)),
    [props.agentId, open],
  );
  const [picked, setPicked] = useState<string>();
  const [name, setName] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<{ suiteId: string; name: string; caseId: string }>();
  const items = suites.data?.items ?? [];
  const choice = picked ?? items[0]?.id ?? NEW;

  const make = async () => {
    setPending(true);
    setError(undefined);
    try {
      const client = api().evals;
      const suiteId =
        choice === NEW
          ? (await client.create(props.agentId, { name: name.trim() || "Cases from conversations" })).id
          : choice;
      const fromThread = { threadId: props.threadId, entryId: props.entryId };
      const suite = await client.addCase(props.agentId, suiteId, { fromThread });
      const added = suite.cases[suite.cases.length - 1];
      setDone({ suiteId, name: suite.name, caseId: added?.id ?? "" });
      setOpen(false);
    } catch (e) {
      setError(describeError(e));
    } finally {
      setPending(false);
    }
  };

  return (
    <>
      <WriteButton onClick={() => setOpen(true)}>Make a test from this branch</WriteButton>
      {done ? (
        <StatusNote>
          Added case <code>{done.caseId}</code> to {done.name}.{" "}
          <a
            href={href(
              `/agents/${encodeURIComponent(props.agentId)}/evals?suite=${encodeURIComponent(done.suiteId)}`,
            )}
          >
            Open the suite
          </a>
        </StatusNote>
      ) : null}
      <ConfirmDialog
        open={open}
        title="Make a test from this branch"
        confirmLabel="Add the case"
        pending={pending}
        error={error ?? suites.error}
        onConfirm={() => void make()}
        onClose={() => setOpen(false)}
      >
        <p>
          The branch shown, from its first message to the last one, becomes a case (secrets redacted). Add its
          expectations in the suite.
        </p>
        <div class="field">
          <label for="make-test-suite">Suite</label>
          <select id="make-test-suite" value={choice} onChange={(e) => setPicked(e.currentTarget.value)}>
            {items.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name} ({s.cases.length} cases)
              </option>
            ))}
            <option value={NEW}>A new suite…</option>
          </select>
        </div>
        {choice === NEW ? (
          <div class="field">
            <label for="make-test-name">New suite name</label>
            <input id="make-test-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
          </div>
        ) : null}
      </ConfirmDialog>
    </>
  );
}
