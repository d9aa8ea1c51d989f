// A credential the API shows exactly once (a new API key, a webhook secret): shown with a copy button and the
// warning that it will not be shown again; the screen drops it from memory when the user dismisses it.
import { useEffect, useId, useRef, useState } from "preact/hooks";

export function SecretOnce(props: {
  /** The heading: "New API key created". */
  title: string;
  /** The field's label: "API key". */
  label: string;
  value: string;
  onDone: () => void;
  /** Why it cannot be shown again, and what to do if it is lost. */
  children?: string;
}) {
  const id = useId();
  const [copied, setCopied] = useState<"yes" | "failed" | undefined>(undefined);
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    // Move focus here so a keyboard or screen-reader user meets the secret and its warning first.
    ref.current?.focus();
  }, [props.value]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  };
  return (
    <section class="card secret-once" ref={ref} tabIndex={-1} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{props.title}</h2>
      <p class="warning">
        <strong>Copy it now: it is shown only this once.</strong>{" "}
        {props.children ?? "It is stored only as a digest; if you lose it, create a new one."}
      </p>
      <label for={`${id}-value`}>{props.label}</label>
      <div class="copy-row">
        <input
          id={`${id}-value`}
          class="code"
          readOnly
          value={props.value}
          spellcheck={false}
          autoComplete="off"
          onFocus={(event) => event.currentTarget.select()}
        />
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p role="status" class="note ok">
        {copied === "yes" ? "Copied to the clipboard." : ""}
        {copied === "failed" ? "Could not copy: select the text and copy it by hand." : ""}
      </p>
      <button type="button" onClick={props.onDone}>
        I have saved it
      </button>
    </section>
  );
}
