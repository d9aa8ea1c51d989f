// A modal confirmation for what cannot be undone (erase, revoke, delete): the native <dialog>, so focus is trapped,
// Escape cancels and the page behind is inert; Cancel has the focus first, so Enter never destroys by accident.
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef } from "preact/hooks";

export interface ConfirmDialogProps {
  open: boolean;
  title: string;
  /** What will happen, in words. */
  children: ComponentChildren;
  confirmLabel: string;
  pendingLabel?: string;
  pending?: boolean;
  /** The last attempt's failure, shown inside the dialog. */
  error?: string | undefined;
  onConfirm: () => void;
  onCancel: () => void;
}

export function ConfirmDialog(props: ConfirmDialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const id = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) {
      dialog.showModal();
      cancelRef.current?.focus();
    } else if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class="confirm"
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-body`}
      onCancel={(event) => {
        event.preventDefault();
        if (!props.pending) props.onCancel();
      }}
    >
      <h2 id={`${id}-title`}>{props.title}</h2>
      <div id={`${id}-body`}>{props.children}</div>
      {props.error ? (
        <p class="note error" role="alert">
          {props.error}
        </p>
      ) : null}
      <div class="dialog-actions">
        <button type="button" ref={cancelRef} onClick={props.onCancel} disabled={props.pending}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm} disabled={props.pending}>
          {props.pending ? (props.pendingLabel ?? "Working…") : props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
