// Styles that only the draft, playground, versions and releases screens use travel in their lazy chunks and are
// adopted on first use: a constructed stylesheet is allowed by the console's `style-src 'self'` (no inline style),
// and the first screen's stylesheet stays as small as it is.
const adopted = new Set<string>();

export function adoptCss(name: string, css: string): void {
  if (adopted.has(name)) return;
  adopted.add(name);
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}

/** What the four screens share: sub-navigation, issue lists, diffs, dialogs, and 3:1 control borders. */
export const SHARED_CSS = `
.agent-tabs ul{display:flex;flex-wrap:wrap;gap:4px 16px;list-style:none;margin:0 0 16px;padding:0;border-bottom:1px solid var(--border)}
.agent-tabs a{display:inline-block;padding:6px 2px;color:var(--text);text-decoration:none;border-bottom:2px solid transparent}
.agent-tabs a[aria-current=page]{border-bottom-color:var(--accent);font-weight:600}
.work input,.work select,.work textarea{border-color:var(--muted)}
.work fieldset{border:1px solid var(--border);border-radius:var(--radius);margin:0 0 16px;padding:12px 16px;min-width:0}
.work legend{font-weight:700;padding:0 4px}
.work .hint{font-size:13px;color:var(--muted);margin:0}
.work .row{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
.work .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:0 16px}
.work [aria-invalid=true]{border-color:var(--danger);border-width:2px}
.issues{border:2px solid var(--danger);border-radius:var(--radius);padding:8px 16px;margin:0 0 16px;background:var(--surface)}
.issues h2{margin:4px 0;font-size:16px}
.issues ul{margin:4px 0;padding-left:20px}
.issues button{background:none;border:0;padding:0;color:var(--accent);text-decoration:underline;text-align:left}
.diff td,.diff th{font-size:13px}
.diff pre,.artifact{white-space:pre-wrap;word-break:break-word;margin:0}
.diff .kind{font-weight:600}
.diff .added{color:var(--ok)}
.diff .removed{color:var(--danger)}
.artifact{background:var(--surface);border:1px solid var(--border);border-radius:var(--radius);padding:12px}
dialog{border:1px solid var(--border);border-radius:var(--radius);background:var(--surface);color:var(--text);max-width:min(520px,calc(100vw - 32px))}
dialog::backdrop{background:rgb(0 0 0 / .5)}
.actions{display:flex;flex-wrap:wrap;gap:8px;margin-top:12px}
.visually-hidden{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.sticky-bar{position:sticky;bottom:0;background:var(--bg);border-top:1px solid var(--border);padding:8px 0;z-index:1}
`;
