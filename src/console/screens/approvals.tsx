// The approval inbox (/console/approvals): tool calls waiting for the tenant's decision across every conversation,
// each with Approve and Deny (docs/api.md#approvals).
import { useState } from "preact/hooks";
import type { ApprovalView } from "../../shared/approvals-api";
import { call, describeError } from "../api";
import { href } from "../router";
import type { ScreenProps } from "../screens";
import { usePaged } from "../ui/hooks";
import { EmptyNote, ErrorNote, Loading, Page, StatusNote } from "../ui/page";
import { Pager } from "../ui/pager";
import { Table } from "../ui/table";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";

const PAGE_SIZE = 25;

/** Who may decide, as the inbox says it. */
const DECIDERS: Record<ApprovalView["by"], string> = {
  user: "the user",
  tenant: "your team",
  any: "anyone",
};

interface ApprovalPage {
  items: ApprovalView[];
  nextCursor?: string;
}

function listApprovals(cursor: string | undefined): Promise<ApprovalPage> {
  const query = new URLSearchParams({ status: "pending", limit: String(PAGE_SIZE) });
  if (cursor) query.set("cursor", cursor);
  return call<ApprovalPage>("GET", `/v1/approvals?${query}`);
}

function decide(a: ApprovalView, decision: "approve" | "deny"): Promise<unknown> {
  return call(
    "POST",
    `/v1/sessions/${encodeURIComponent(a.threadId)}/approvals/${encodeURIComponent(a.id)}`,
    { decision },
  );
}

export default function ApprovalsScreen(_props: ScreenProps) {
  const pending = usePaged(listApprovals, []);
  const [note, setNote] = useState<{ ok?: string; error?: string }>({});
  const [deciding, setDeciding] = useState<string | undefined>(undefined);
  // Decided here: hidden at once, before the list (read from the queryable copy) catches up.
  const [decided, setDecided] = useState<ReadonlySet<string>>(new Set());

  const answer = async (a: ApprovalView, decision: "approve" | "deny") => {
    setNote({});
    setDeciding(a.id);
    try {
      await decide(a, decision);
      setDecided((set) => new Set([...set, a.id]));
      setNote({ ok: `${decision === "approve" ? "Approved" : "Denied"} ${a.toolName} (${a.id}).` });
      pending.reload();
    } catch (error) {
      setNote({ error: `Could not ${decision} ${a.toolName}: ${describeError(error)}` });
    } finally {
      setDeciding(undefined);
    }
  };

  const items = pending.items.filter((a) => !decided.has(a.id));
  return (
    <Page title="Approvals">
      <p class="muted">
        Tool calls waiting for a person before the agent goes on. An approved call runs; a denied one tells
        the model it was refused.
      </p>
      <div class="page-head">
        <h2 id="approvals-title">Pending</h2>
        <button type="button" class="small" onClick={pending.reload} disabled={pending.loading}>
          Refresh
        </button>
      </div>
      {note.ok ? <StatusNote>{note.ok}</StatusNote> : null}
      {note.error ? <ErrorNote>{note.error}</ErrorNote> : null}
      {pending.error ? <ErrorNote>Could not read the approvals: {pending.error}</ErrorNote> : null}
      {pending.loading && !pending.data ? <Loading label="Loading the approvals…" /> : null}
      {pending.data && items.length === 0 && pending.page === 1 ? (
        <EmptyNote>Nothing is waiting for a decision.</EmptyNote>
      ) : null}
      {items.length > 0 ? (
        <Table
          label="Pending approvals"
          head={["Tool", "Conversation", "Requested", "Expires", "Who decides", "Decision"]}
          busy={pending.loading}
        >
          {items.map((a) => (
            <tr key={a.id} data-approval={a.id}>
              <td>
                <code>{a.toolName}</code>
                <br />
                <code class="muted wrap">{a.id}</code>
              </td>
              <td>
                <a href={href(`/sessions/${encodeURIComponent(a.threadId)}`)}>
                  <code class="wrap">{a.threadId}</code>
                </a>
              </td>
              <td>
                <RelativeTime iso={a.requestedAt} />
              </td>
              <td>
                <RelativeTime iso={a.expiresAt} />
              </td>
              <td>{DECIDERS[a.by]}</td>
              <td>
                {a.by === "user" ? (
                  <span class="muted">the user decides</span>
                ) : (
                  <div class="row-actions">
                    <WriteButton
                      class="small"
                      aria-label={`Approve ${a.toolName} ${a.id}`}
                      disabled={deciding !== undefined}
                      onClick={() => void answer(a, "approve")}
                    >
                      Approve
                    </WriteButton>
                    <WriteButton
                      class="small danger"
                      aria-label={`Deny ${a.toolName} ${a.id}`}
                      disabled={deciding !== undefined}
                      onClick={() => void answer(a, "deny")}
                    >
                      Deny
                    </WriteButton>
                  </div>
                )}
              </td>
            </tr>
          ))}
        </Table>
      ) : null}
      <Pager paged={pending} label="Approval pages" />
    </Page>
  );
}
