// The console's shell: sign-in, the signed-in frame (tenant, navigation, sign-out) and the lazy screen of the path.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { canWrite, describeError, restoreSession, session, signIn, signOut } from "./api";
import { href, match, navigate, onLinkClick, path } from "./router";
import { SCREENS, type ScreenProps } from "./screens";
import { ErrorNote, Loading } from "./ui/page";

const NAV: [string, string][] = [
  ["/agents", "Agents"],
  ["/sessions", "Sessions"],
  ["/analytics", "Analytics"],
  ["/keys", "API keys"],
  ["/secrets", "Secrets"],
  ["/webhooks", "Webhooks"],
];

function SignIn() {
  const [error, setError] = useState<string | undefined>(undefined);
  const [pending, setPending] = useState(false);
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem("apiKey") as HTMLInputElement;
    setPending(true);
    setError(undefined);
    try {
      await signIn(input.value.trim());
      input.value = "";
      if (path.value === "/") navigate("/agents", { replace: true });
    } catch (e) {
      setError(describeError(e));
    } finally {
      setPending(false);
    }
  };
  useEffect(() => {
    document.title = "Sign in · agent-threads console";
  }, []);
  return (
    <main class="signin" id="main">
      <form class="card" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to the console</h1>
        <p class="muted">
          Paste a tenant API key (<code>sk_…</code>). It is exchanged for a session cookie and never stored in
          this browser.
        </p>
        <label for="apiKey">API key</label>
        <input
          id="apiKey"
          name="apiKey"
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
        <nav aria-label="Console">
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
          <span title={current.tenantId}>{current.tenantName}</span>
          {canWrite() ? null : <span class="badge">read-only</span>}
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {route ? (
          <Screen name={route.name} params={route.params} />
        ) : (
          <ErrorNote>
            No console page at this address. <a href={href("/agents")}>Go to the agents.</a>
          </ErrorNote>
        )}
      </main>
    </div>
  );
}

function App() {
  const state = session.value;
  if (state === undefined) return <Loading label="Opening the console…" />;
  return state === null ? <SignIn /> : <Shell />;
}

void restoreSession();
render(<App />, document.getElementById("app")!);
