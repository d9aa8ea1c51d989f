// A confirmation as a modal <dialog>: the browser makes the page behind it inert and closes it on Escape; focus
// starts on Cancel (the safe answer) and returns to the control that opened it.
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";
import { ErrorNote } from "./page";

export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  /** The confirming button looks destructive. */
  danger?: boolean;
  pending?: boolean;
  error?: string | undefined;
  onConfirm: () => void;
  /** Cancel, Escape, or the dialog closing for any other reason. */
  onClose: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const cancel = useRef<HTMLButtonElement>(null);
  const opener = useRef<Element | null>(null);
  const id = useId();
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.open && !element.open) {
      opener.current = document.activeElement;
      element.showModal();
      cancel.current?.focus();
    } else if (!props.open && element.open) {
      element.close();
    }
  }, [props.open]);
  const restoreFocus = () => {
    const target = opener.current;
    opener.current = null;
    if (target instanceof HTMLElement && target.isConnected) target.focus();
  };
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      onCancel={(event) => {
        // Escape: we close it ourselves, so `open` and the element never disagree.
        event.preventDefault();
        if (!props.pending) props.onClose();
      }}
      onClose={() => {
        restoreFocus();
        if (props.open) props.onClose();
      }}
    >
      <h2 id={`${id}-title`}>{props.title}</h2>
      <div id={`${id}-body`}>{props.children}</div>
      {props.error ? <ErrorNote>{props.error}</ErrorNote> : null}
      <div class="dialog-actions">
        <button type="button" ref={cancel} onClick={props.onClose} disabled={props.pending}>
          Cancel
        </button>
        <button
          type="button"
          class={props.danger ? "danger" : "primary"}
          onClick={props.onConfirm}
          disabled={props.pending}
        >
          {props.pending ? "Working…" : props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
