// A credential the API shows exactly once (a new API key, a webhook secret): shown with a copy button and the
// warning that it will not be shown again; the screen drops it from memory when the user dismisses it.
import { useEffect, useId, useRef } from "preact/hooks";
import { CopyButton } from "../ui/copy";

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
  const ref = useRef<HTMLElement>(null);
  useEffect(() => {
    // Focus moves here, so a keyboard or screen-reader user meets the secret and its warning first.
    ref.current?.focus();
  }, [props.value]);
  return (
    <section class="card secret-once" ref={ref} tabIndex={-1} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{props.title}</h2>
      <p class="warning" id={`${id}-warning`}>
        <strong>Copy it now: it is shown only this once.</strong>{" "}
        {props.children ?? "Only a digest is stored; if it is lost, create a new one."}
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
          aria-describedby={`${id}-warning`}
          onFocus={(event) => event.currentTarget.select()}
        />
        <CopyButton text={props.value} label={`Copy ${props.label}`} />
      </div>
      <div class="form-actions">
        <button type="button" onClick={props.onDone}>
          I have saved it
        </button>
      </div>
    </section>
  );
}
