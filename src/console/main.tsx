// The console's shell: sign-in, the signed-in frame (tenant, navigation, sign-out) and the lazy screen of the path.
import { render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { canWrite, describeError, restoreSession, session, signedOutReason, signIn, signOut } from "./api";
import { href, match, navigate, onLinkClick, path, requestFocus } from "./router";
import { SCREENS, type ScreenProps } from "./screens";
import { ErrorNote, Loading, Page } from "./ui/page";

const NAV: [string, string][] = [
  ["/agents", "Agents"],
  ["/sessions", "Sessions"],
  ["/approvals", "Approvals"],
  ["/analytics", "Analytics"],
  ["/keys", "API keys"],
  ["/secrets", "Secrets"],
  ["/webhooks", "Webhooks"],
];

function SignIn() {
  const [error, setError] = useState<string | undefined>(undefined);
  const [pending, setPending] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const field = input.current!;
    setPending(true);
    setError(undefined);
    try {
      await signIn(field.value.trim());
      field.value = "";
      if (path.value === "/") navigate("/agents", { replace: true });
      else requestFocus();
    } catch (e) {
      setError(describeError(e));
      field.focus();
    } finally {
      setPending(false);
    }
  };
  useEffect(() => {
    document.title = "Sign in · agent-threads console";
    input.current?.focus();
  }, []);
  const reason = signedOutReason.value;
  return (
    <main class="signin" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to the console</h1>
        {reason ? (
          <p class="note" role="status">
            {reason}
          </p>
        ) : null}
        <p class="muted">
          Paste a tenant API key (<code>sk_…</code>). It is exchanged for a session cookie and never stored in
          this browser. A read-only key opens a console that shows everything and changes nothing.
        </p>
        <label for="apiKey">API key</label>
        <input
          id="apiKey"
          name="apiKey"
          ref={input}
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          aria-invalid={error !== undefined}
          aria-describedby={error ? "signin-error" : undefined}
        />
        {error ? (
          <p id="signin-error" class="note error" role="alert">
            {error}
          </p>
        ) : null}
        <button class="primary" type="submit" disabled={pending}>
          {pending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}

function Screen(props: { name: string; params: Record<string, string> }) {
  const [loaded, setLoaded] = useState<{ name: string; Component: preact.ComponentType<ScreenProps> }>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    setError(undefined);
    const load = SCREENS[props.name];
    load?.().then(
      (module) => live && setLoaded({ name: props.name, Component: module.default }),
      (e: unknown) => live && setError(describeError(e)),
    );
    return () => {
      live = false;
    };
  }, [props.name]);
  if (error) return <ErrorNote>Could not load this screen: {error}</ErrorNote>;
  if (!loaded || loaded.name !== props.name) return <Loading />;
  const { Component } = loaded;
  return <Component params={props.params} />;
}

function Shell() {
  const current = session.value!;
  const route = match(path.value);
  const section = `/${path.value.split("/")[1] || "agents"}`;
  // On a phone the navigation folds behind a Menu button; any navigation folds it again.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path.value]);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: delegates clicks on the links inside to the router.
    // biome-ignore lint/a11y/useKeyWithClickEvents: links keep their own keyboard behaviour; this only intercepts.
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" href={href("/agents")}>
          agent-threads <span class="muted">console</span>
        </a>
        <button
          type="button"
          class="menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="console-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav aria-label="Console" id="console-nav" class={menuOpen ? "open" : undefined}>
          <ul>
            {NAV.map(([to, label]) => (
              <li key={to}>
                <a href={href(to)} aria-current={section === to ? "page" : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span class="tenant" title={current.tenantId}>
            {current.tenantName}
          </span>
          {canWrite() ? null : (
            <span class="badge" title="This key can read but not change anything">
              read-only
            </span>
          )}
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {route ? <Screen name={route.name} params={route.params} /> : <NotFound />}
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <Page title="Page not found">
      <p>
        No console page at this address. <a href={href("/agents")}>Go to the agents.</a>
      </p>
    </Page>
  );
}

function App() {
  const state = session.value;
  if (state === undefined) return <Loading label="Opening the console…" />;
  return state === null ? <SignIn /> : <Shell />;
}

void restoreSession();
render(<App />, document.getElementById("app")!);
