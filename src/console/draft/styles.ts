// Styles that only the draft, playground, versions and releases screens use travel in their lazy chunks and are
// adopted on first use: a constructed stylesheet is allowed by the console's `style-src 'self'` (no inline style),
// and the first screen's stylesheet stays as small as it is.
const adopted = new Set<string>();

function adopt(name: string, css: string): void {
  if (adopted.has(name)) return;
  adopted.add(name);
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(css);
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
}

/** Adopts the styles the four screens share, and the calling screen's own. */
export function adoptCss(name: string, css = ""): void {
  adopt("shared", SHARED_CSS);
  if (css !== "") adopt(name, css);
}

/** What the four screens share: fieldsets, issue lists and diffs. */
const SHARED_CSS = `
.work .table-wrap{position:relative}
.work fieldset{border:1px solid var(--border);border-radius:var(--radius);margin:0 0 16px;padding:12px 16px;min-width:0}
.work fieldset.plain{border:0;padding:0;margin:0}
.work legend{font-weight:700;padding:0 4px}
.work .hint{font-size:13px;color:var(--muted);margin:0}
.work .row{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
.work .grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:0 16px;align-items:start}
.work .row>input[type=text]{flex:1 1 12em;width:auto}
.work .row>input[type=color]{width:44px;height:36px;padding:2px;flex:none}
.work [aria-invalid=true]{border-width:2px}
.work .issues{border:2px solid var(--danger);border-radius:var(--radius);padding:8px 16px;margin:0 0 16px;background:var(--surface)}
.work .issues h2{margin:4px 0;font-size:16px}
.work .issues ul{margin:4px 0;padding-left:20px}
.work .issues button{background:none;border:0;padding:0;color:var(--accent);text-decoration:underline;text-align:left}
.work .diff td,.work .diff th{font-size:13px}
.work .diff pre,.work .artifact{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
.work .diff .added{color:var(--ok)}
.work .diff .removed{color:var(--danger)}
.work .artifact{background:var(--surface);border:1px solid var(--border);border-radius:var(--radius);padding:12px}
.work .sticky-bar{position:sticky;bottom:0;background:var(--bg);border-top:1px solid var(--border);padding:8px 0;z-index:1}
`;
