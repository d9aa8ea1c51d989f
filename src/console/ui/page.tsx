// The pieces every screen is made of: a titled page, notices, loading states. Plain elements, labelled for screen
// readers; API data is only ever rendered as text.
import { signal } from "@preact/signals";
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { canWrite } from "../api";
import { navigation } from "../router";

/** The id of the page's read-only explanation: write controls point at it with `aria-describedby`. */
export const READ_ONLY_NOTE_ID = "read-only-note";

/** The navigation whose page already took focus: a page re-rendering for its own reasons never steals it again. */
let focusedFor = 0;

/** A one-time message for the next page (set before navigating: "Agent created."), shown and announced there. */
const flash = signal<string | undefined>(undefined);
export function flashNext(message: string): void {
  flash.value = message;
}

export function Page(props: {
  title: string;
  /** A line under the title (an id, a slug). */
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
  /** Links below the title (an agent's sub-pages). */
  nav?: ComponentChildren;
  children: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  const nav = navigation.value;
  useEffect(() => {
    document.title = `${props.title} · agent-threads console`;
  }, [props.title]);
  useEffect(() => {
    if (nav === 0 || focusedFor === nav) return;
    focusedFor = nav;
    heading.current?.focus();
  }, [nav]);
  const message = useFlash();
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <div class="page-title">
          <h1 id="page-title" tabIndex={-1} ref={heading}>
            {props.title}
          </h1>
          {props.subtitle ? <p class="subtitle muted">{props.subtitle}</p> : null}
        </div>
        {props.actions ? <div class="page-actions">{props.actions}</div> : null}
      </header>
      {props.nav}
      {canWrite() ? null : (
        <p id={READ_ONLY_NOTE_ID} class="note readonly">
          Signed in with a read-only key: you can look at everything here, and change nothing.
        </p>
      )}
      {message ? <StatusNote>{message}</StatusNote> : null}
      {props.children}
    </section>
  );
}

/** Takes the flashed message once, for the page that mounts after it was set. */
function useFlash(): string | undefined {
  const [message] = useState(() => {
    const pending = flash.peek();
    if (pending !== undefined) flash.value = undefined;
    return pending;
  });
  return message;
}

/** An error the user should read now (announced). */
export function ErrorNote(props: { children: ComponentChildren; id?: string }) {
  return (
    <p class="note error" role="alert" id={props.id}>
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

/** Shown when a list has nothing in it yet. */
export function EmptyNote(props: { children: ComponentChildren }) {
  return <p class="note empty muted">{props.children}</p>;
}
