// The pieces every screen is made of: a titled page, notices, loading states. Plain elements, labelled for screen
// readers; no markup ever comes from API data (text only).
import type { ComponentChildren } from "preact";
import { useEffect } from "preact/hooks";

export function Page(props: { title: string; actions?: ComponentChildren; children: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · agent-threads console`;
  }, [props.title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </header>
      {props.children}
    </section>
  );
}

/** An error the user should read now (announced). */
export function ErrorNote(props: { children: ComponentChildren }) {
  return (
    <p class="note error" role="alert">
      {props.children}
    </p>
  );
}

/** A success or status line (announced politely). */
export function StatusNote(props: { children: ComponentChildren }) {
  return (
    <p class="note ok" role="status">
      {props.children}
    </p>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p class="loading" role="status">
      {props.label ?? "Loading…"}
    </p>
  );
}

/** Shown instead of a form's submit when the key is read-only. */
export function ReadOnlyNote() {
  return <p class="note muted">This key is read-only: changes are disabled.</p>;
}
