// Styles of the conversation controls (message actions, edit box, handoff line; the past conversations list brings
// its own, ./past-view.ts), kept apart from the base stylesheet; the same rules as styles.ts: custom properties,
// logical properties, px.

export const CONTROLS_CSS = `\
.acts{display:flex}\
.acts .icon{width:28px;height:28px}\
.acts .i{width:16px;height:16px}\
.i-thumb-down{rotate:180deg}\
[aria-pressed=true]{color:var(--at-accent)}\
[aria-pressed=true] .i{fill:currentColor}\
.who,.handoff,.vc{font-size:12px;color:var(--at-muted)}\
.vc{border-top:1px solid;padding-top:4px;text-align:center}\
.msg:has(.edit){width:86%}\
.edit{display:flex;flex-direction:column;gap:6px}\
.edit textarea,.edit button{padding:6px 10px;border:1px solid var(--at-border);border-radius:10px;font:inherit}\
.edit textarea:focus-visible{outline:2px solid var(--at-focus,var(--at-accent))}\
.edit div{display:flex;gap:6px;justify-content:flex-end}\
.edit button{background:var(--at-bg);color:var(--at-fg)}\
.edit button+button{background:var(--at-accent);color:var(--at-accent-fg)}\
.handoff{margin:0 0 8px;text-align:center}\
@media (forced-colors:active){[aria-pressed=true]{border:2px solid Highlight}}\
`;
