// An approval's card, a separate asset the widget imports the first time a run waits for a decision (most visits
// never see one): the tool, its title and description, its input as a key/value list, Approve and Deny, then the
// outcome (docs/widget.md#approvals-and-client-tools).
import type { ApprovalAction, ApprovalDecisionRecord } from "../shared/protocol";
import { h } from "./dom";
import type { CardDeps } from "./tools";

export const CARD_CSS = `
.tool .bubble{width:100%;padding:0}
.card{width:100%;padding:12px 14px;border:1px solid var(--at-border);border-radius:var(--at-bubble-radius);background:var(--at-bg);color:var(--at-fg)}
.card p{margin:0}
.card .h{font-size:12px;color:var(--at-muted)}
.card code{font-family:var(--at-mono);font-size:.88em}
.card dl{display:grid;grid-template-columns:auto 1fr;gap:2px 10px;margin:8px 0 0;font-size:13.5px}
.card dt{color:var(--at-muted)}
.card dd{margin:0;overflow-wrap:anywhere;font-family:var(--at-mono)}
.card div{display:flex;gap:8px;margin-top:10px}
.card button{padding:6px 14px;border:1px solid var(--at-border);border-radius:10px;background:var(--at-bg);color:var(--at-fg);font:inherit;font-weight:600;cursor:pointer}
.card button:first-child{border-color:var(--at-accent);background:var(--at-accent);color:var(--at-accent-fg)}
.card .o{margin-top:8px;font-weight:600}
`;

interface Card {
  action?: ApprovalAction;
  decision?: "approve" | "deny";
}

const cards = new WeakMap<HTMLElement, Card>();
const styled = new WeakSet<ShadowRoot>();

/** A value of the input as shown: strings as written, anything else as compact JSON. */
const shown = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value));

/**
 * Draws (or redraws) the card in `el` from what is known of its approval: the request (a run's `actions`, an
 * `approval_request` entry) and the decision (an `approval_decision` entry, or this visitor's click).
 */
export function drawCard(
  d: CardDeps,
  el: HTMLElement,
  action?: ApprovalAction,
  decision?: ApprovalDecisionRecord,
): void {
  const s = d.strings;
  const card = cards.get(el) ?? {};
  cards.set(el, card);
  card.action = action ?? card.action;
  card.decision = decision?.decision ?? card.decision;
  if (!styled.has(d.root)) {
    styled.add(d.root);
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(CARD_CSS);
    d.root.adoptedStyleSheets = [...d.root.adoptedStyleSheets, sheet];
  }
  const a = card.action;
  const outcome =
    card.decision &&
    h("p", { class: "o", tabindex: "-1" }, card.decision === "approve" ? s.approved : s.denied);
  const id = `at-a-${a?.approvalId ?? decision?.approvalId}`;
  const body = h("div", { class: "card", role: "group", "aria-labelledby": id });
  body.append(h("p", { class: "h", id }, s.approvalNeeded, a && ": ", a && (a.title ?? a.name)));
  if (a !== undefined) {
    if (a.title !== undefined) body.append(h("p", {}, h("code", {}, a.name)));
    if (a.description !== undefined) body.append(h("p", { dir: "auto" }, a.description));
    const entries = Object.entries(a.input);
    if (entries.length > 0) {
      body.append(
        h(
          "dl",
          {},
          ...entries.flatMap(([key, value]) => [h("dt", {}, key), h("dd", { dir: "auto" }, shown(value))]),
        ),
      );
    }
  }
  if (outcome) body.append(outcome);
  // Only the tenant may decide this one (the tool's `by`): the card waits for their decision, without buttons.
  else if (a !== undefined && a.by !== "tenant") {
    const button = (decision: "approve" | "deny") => {
      const b = h("button", { type: "button" }, s[decision]);
      b.onclick = () => {
        if (!d.send({ type: "approval", approvalId: a.approvalId, decision })) return;
        drawCard(d, el, undefined, { approvalId: a.approvalId, decision, by: "user", reason: null });
        const shownOutcome = el.querySelector<HTMLElement>(".o");
        shownOutcome?.focus();
        d.announce(shownOutcome?.textContent ?? "");
      };
      return b;
    };
    body.append(h("div", {}, button("approve"), button("deny")));
  }
  el.replaceChildren(body);
}
