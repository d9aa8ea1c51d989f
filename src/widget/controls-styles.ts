// Styles of the conversation controls, kept apart from the base stylesheet; the same rules as styles.ts: custom
// properties, logical properties, px. The handoff line and dividers are in the first screen; the message actions and
// the edit box come with their module (./message-actions.ts), the past conversations list and the approval card
// bring their own.

export const CONTROLS_CSS = `\
.who,.handoff,.vc{font-size:12px;color:var(--at-muted)}\
.vc{border-top:1px solid;padding-top:4px;text-align:center}\
.handoff{margin:0 0 8px;text-align:center}\
`;

export const ACTIONS_CSS = `\
.acts{display:flex}\
.acts .icon{width:28px;height:28px}\
.acts .i{width:16px;height:16px}\
.i-thumb-down{rotate:180deg}\
[aria-pressed=true]{color:var(--at-accent)}\
[aria-pressed=true] .i{fill:currentColor}\
.msg:has(.edit){width:86%}\
.edit{display:flex;flex-direction:column;gap:6px}\
.edit textarea,.edit button{padding:6px 10px;border:1px solid var(--at-border);border-radius:10px;font:inherit}\
.edit textarea:focus-visible{outline:2px solid var(--at-focus,var(--at-accent))}\
.edit div{display:flex;gap:6px;justify-content:flex-end}\
.edit button{background:var(--at-bg);color:var(--at-fg)}\
.edit button+button{background:var(--at-accent);color:var(--at-accent-fg)}\
@media (forced-colors:active){[aria-pressed=true]{border:2px solid Highlight}}\
`;
