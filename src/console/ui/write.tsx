// Controls that change things: disabled for a read-only key, and pointing at the page's explanation of why.
import type { JSX } from "preact";
import { canWrite } from "../api";
import { READ_ONLY_NOTE_ID } from "./page";

/** A button that writes; with a read-only key it is disabled and described by the page's read-only note. */
export function WriteButton(props: JSX.ButtonHTMLAttributes<HTMLButtonElement>) {
  const readOnly = !canWrite();
  return (
    <button
      type="button"
      {...props}
      disabled={readOnly || Boolean(props.disabled)}
      aria-describedby={readOnly ? READ_ONLY_NOTE_ID : props["aria-describedby"]}
    />
  );
}
