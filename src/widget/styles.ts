// The widget's stylesheet: theme tokens as custom properties, logical properties for RTL, px sizes (never rem).
import { LAUNCHER_CSS } from "./launcher";

const DARK = `--at-bg:#15171c;--at-fg:#eceef3;--at-muted:#a3a9b6;--at-surface:#22252d;--at-border:#2f333d;--at-link:#a5b4fc;--at-code-bg:rgb(255 255 255/.08);--at-notice-bg:#3b1418;--at-notice-fg:#fecdd3;color-scheme:dark`;

export const WIDGET_CSS = `${LAUNCHER_CSS}\
:host{\
--at-accent:#4f46e5;--at-accent-fg:#fff;--at-bg:#fff;--at-fg:#111827;--at-muted:#5f6673;--at-surface:#f2f3f6;\
--at-border:#e4e6eb;--at-user-bg:var(--at-accent);--at-user-fg:var(--at-accent-fg);--at-link:var(--at-accent);\
--at-radius:18px;--at-bubble-radius:18px;--at-font:system-ui,sans-serif;\
--at-mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;--at-font-size:15px;--at-space:16px;\
--at-shadow:0 24px 60px -12px rgb(15 23 42/.3),0 6px 16px rgb(15 23 42/.08);--at-width:400px;--at-height:640px;\
--at-code-bg:rgb(15 23 42/.07);--at-notice-bg:#fef2f2;--at-notice-fg:#9f1239;color-scheme:light}\
:host([theme=dark]){${DARK}}\
@media (prefers-color-scheme:dark){:host(:not([theme=light])){${DARK}}}\
:host([layout=inline]){position:relative;height:var(--at-height)}\
:host([layout=fullpage]){position:fixed;inset:0;z-index:var(--at-z,2147483000)}\
*,::before,::after{box-sizing:border-box}\
[hidden]{display:none!important}\
.launcher:focus-visible{outline-color:var(--at-focus,var(--at-accent))}\
.launcher{transition:transform .15s ease}\
.launcher:hover{transform:translateY(-2px)}\
.launcher[data-unread]::after{content:"";position:absolute;inset-block-start:2px;inset-inline-end:2px;width:12px;height:12px;border-radius:50%;background:#ef4444;border:2px solid var(--at-bg)}\
.panel{display:flex;flex-direction:column;overflow:hidden;background:var(--at-bg);color:var(--at-fg);font-family:var(--at-font);font-size:var(--at-font-size);line-height:1.5;text-align:start;-webkit-font-smoothing:antialiased;width:100%;height:100%}\
:host([layout=inline]) .panel{border:1px solid var(--at-border);border-radius:var(--at-radius)}\
:host([layout=floating]) .panel{position:fixed;inset-block-end:calc(var(--at-offset-block,24px) + var(--at-launcher-size,56px) + 16px);inset-inline-end:var(--at-offset-inline,24px);width:min(var(--at-width),calc(100vw - 2 * var(--at-offset-inline,24px)));height:min(var(--at-height),calc(100vh - var(--at-offset-block,24px) - var(--at-launcher-size,56px) - 40px));border:1px solid var(--at-border);border-radius:var(--at-radius);box-shadow:var(--at-shadow);transform-origin:bottom right;animation:at-in .2s cubic-bezier(.2,.8,.2,1)}\
:host([layout=floating][position=bottom-left]) .panel{inset-inline-end:auto;left:var(--at-offset-inline,24px);transform-origin:bottom left}\
:host([layout=floating][position=bottom-right]) .panel{inset-inline-end:auto;right:var(--at-offset-inline,24px)}\
@keyframes at-in{from{opacity:0;transform:translateY(12px) scale(.97)}}\
.header{display:flex;align-items:center;gap:12px;padding:14px 12px;padding-inline-start:var(--at-space);border-block-end:1px solid var(--at-border)}\
.avatar{flex:none;display:grid;place-items:center;width:38px;height:38px;border-radius:50%;background:var(--at-accent);color:var(--at-accent-fg);font-size:16px}\
.titles{flex:1;min-width:0}\
.avatar,.title{font-weight:650;letter-spacing:-.01em}\
.title{margin:0;font-size:15.5px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}\
.status,.intro p{margin:0}\
.status{display:flex;align-items:center;gap:6px;font-size:12.5px;color:var(--at-muted)}\
.dot{width:8px;height:8px;border-radius:50%;background:#9ca3af;flex:none}\
.status[data-state=open] .dot{background:#16a34a}\
.status[data-state$=connecting] .dot{background:#d97706}\
.status[data-state=failed] .dot{background:#dc2626}\
.icon{all:unset;box-sizing:border-box;display:grid;place-items:center;width:36px;height:36px;border-radius:10px;color:var(--at-muted);cursor:pointer}\
.icon:hover{background:var(--at-surface);color:var(--at-fg)}\
.i{width:20px;height:20px;fill:none;stroke:currentColor;stroke-width:2;stroke-linecap:round;stroke-linejoin:round}\
.i-stop{fill:currentColor;stroke:none}\
:focus-visible{outline:2px solid var(--at-focus,var(--at-accent));outline-offset:2px}\
.body{position:relative;flex:1;min-height:0;display:flex;flex-direction:column}\
.log{flex:1;overflow-y:auto;overscroll-behavior:contain;padding:var(--at-space);display:flex;flex-direction:column;gap:12px}\
.log:focus-visible{outline-offset:-2px}\
:host([layout=fullpage]) .log,:host([layout=fullpage]) .foot{padding-inline:max(var(--at-space),calc((100% - 760px) / 2))}\
.intro{margin:auto 0 8px;padding:8px 4px;text-align:center;color:var(--at-muted)}\
.intro .avatar{margin:0 auto 10px;width:48px;height:48px;font-size:20px}\
.intro strong{display:block;color:var(--at-fg);font-size:16px;margin-bottom:2px}\
.intro[hidden]+*{margin-top:auto}\
.prompts{display:flex;flex-wrap:wrap;justify-content:center;gap:8px;margin-top:14px}\
.prompt{all:unset;box-sizing:border-box;max-width:100%;padding:7px 14px;border:1px solid var(--at-border);border-radius:999px;background:var(--at-bg);color:var(--at-fg);font-size:13.5px;line-height:1.35;cursor:pointer;overflow-wrap:anywhere}\
.prompt:hover{border-color:var(--at-accent)}\
.msg{display:flex;flex-direction:column;max-width:86%;min-width:0}\
.msg.user{align-self:flex-end;align-items:flex-end}\
.msg.assistant{align-self:flex-start;align-items:flex-start}\
.bubble{padding:10px 14px;border-radius:var(--at-bubble-radius);overflow-wrap:anywhere;max-width:100%}\
.user .bubble{background:var(--at-user-bg);color:var(--at-user-fg);border-end-end-radius:6px;white-space:pre-wrap}\
.assistant .bubble{background:var(--at-surface);color:var(--at-fg);border-end-start-radius:6px}\
.meta{margin-top:4px;font-size:12px;color:var(--at-muted)}\
.failed .meta{color:#b91c1c}\
.md>*,.md>*+*{margin-top:.65em}\
.md ul,.md ol{padding-inline-start:1.35em}\
.md li+li{margin-top:.2em}\
.md li>*+*{margin-top:.4em}\
.md a{color:var(--at-link);text-decoration:underline;text-underline-offset:2px}\
.md code{font-family:var(--at-mono);font-size:.88em;background:var(--at-code-bg);padding:.12em .36em;border-radius:6px}\
.md pre{background:#0f172a;color:#e5e7eb;padding:10px 12px;border-radius:10px;overflow-x:auto;font-size:13px;line-height:1.45;white-space:pre}\
.md pre code{background:none;padding:0;font-size:inherit;color:inherit}\
.md blockquote{padding-inline-start:12px;border-inline-start:3px solid var(--at-border);color:var(--at-muted)}\
.md hr{border:0;border-top:1px solid var(--at-border)}\
.typing{display:inline-flex;gap:4px;padding:4px 0}\
.typing i{width:7px;height:7px;border-radius:50%;background:currentColor;opacity:.35;animation:at-dot 1.2s infinite ease-in-out}\
.typing i+i{animation-delay:.15s}\
.typing i+i+i{animation-delay:.3s}\
@keyframes at-dot{30%{opacity:.9;transform:translateY(-2px)}}\
.pill{all:unset;position:absolute;inset-block-end:10px;inset-inline:0;margin-inline:auto;width:max-content;display:flex;align-items:center;gap:6px;padding:6px 12px;border-radius:999px;background:var(--at-fg);color:var(--at-bg);font:600 12.5px/1.2 var(--at-font);cursor:pointer;box-shadow:0 4px 14px rgb(0 0 0/.18)}\
.pill .i{width:14px;height:14px}\
.foot{padding:0 12px 12px}\
.notice{display:flex;align-items:center;gap:10px;margin-bottom:10px;padding:10px 12px;border-radius:12px;background:var(--at-notice-bg);color:var(--at-notice-fg);font-size:13.5px}\
.notice span{flex:1}\
.notice button{all:unset;cursor:pointer;font-weight:600;text-decoration:underline}\
.composer{display:flex;align-items:flex-end;gap:8px;padding:6px;padding-inline-start:14px;border:1px solid var(--at-border);border-radius:16px;background:var(--at-bg);transition:border-color .15s,box-shadow .15s}\
.composer:focus-within{border-color:var(--at-accent);box-shadow:0 0 0 3px color-mix(in srgb,var(--at-accent) 22%,transparent)}\
textarea{all:unset;flex:1;min-width:0;min-height:24px;max-height:140px;padding:6px 0;font:inherit;font-size:16px;line-height:1.45;color:var(--at-fg);white-space:pre-wrap;overflow-wrap:anywhere;overflow-y:auto;field-sizing:content}\
textarea::placeholder{color:var(--at-muted);opacity:1}\
textarea:focus-visible{outline:none}\
.send{all:unset;box-sizing:border-box;flex:none;display:grid;place-items:center;width:36px;height:36px;border-radius:11px;background:var(--at-accent);color:var(--at-accent-fg);cursor:pointer}\
.send:hover{filter:brightness(1.08)}\
.composer:has(:disabled){opacity:.55}\
:disabled{cursor:not-allowed}\
.send .i{width:18px;height:18px;stroke-width:2.4}\
.sr{position:absolute;width:1px;height:1px;margin:-1px;padding:0;overflow:hidden;clip-path:inset(50%);white-space:nowrap;border:0}\
@media (max-width:640px){\
:host([layout=floating][open]) .panel{inset:auto 0 auto 0;inset-block-start:var(--at-vv-top,0px);width:100%;height:var(--at-vv-height,100dvh);border:0;border-radius:0;box-shadow:none}\
:host([layout=floating][open]) .launcher{display:none}\
.foot{padding-bottom:max(12px,env(safe-area-inset-bottom))}\
}\
@media (forced-colors:active){\
.panel,.bubble,.composer,.notice,.icon,.send,.pill,.prompt{border:1px solid CanvasText}\
.dot{forced-color-adjust:none}\
.composer:focus-within{outline:2px solid Highlight}\
}\
@media (prefers-reduced-motion:reduce){*,::before,::after{animation:none!important;transition:none!important;scroll-behavior:auto!important}}\
`;
