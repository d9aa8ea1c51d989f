// What the editor shows when its save met a newer stored draft (412): which fields differ between the stored draft
// and the user's, and the two ways out: take the stored one, or save over it at its revision. It takes focus when it
// appears, so a keyboard or screen-reader user lands on the choice.
import { useEffect, useRef } from "preact/hooks";
import { RelativeTime } from "../ui/time";
import { WriteButton } from "../ui/write";
import { diffJson } from "./diff";
import { DiffTable } from "./parts";
import { adoptCss } from "./styles";

const CSS = `.conflict{border:2px solid var(--danger);border-radius:var(--radius);padding:12px 16px;margin:0 0 16px;background:var(--surface)}`;

export function ConflictView(props: {
  mine: unknown;
  mineRevision: number;
  stored: { revision: number; definition: unknown; updatedAt?: string };
  pending: boolean;
  onTakeTheirs: () => void;
  onOverwrite: () => void;
}) {
  adoptCss("conflict", CSS);
  const ref = useRef<HTMLElement>(null);
  const { stored } = props;
  useEffect(() => ref.current?.focus(), [stored.revision]);
  return (
    <section class="conflict" ref={ref} tabIndex={-1} aria-labelledby="conflict-title">
      <h2 id="conflict-title">The draft was saved elsewhere</h2>
      <p>
        Yours is based on revision {props.mineRevision}; the stored draft is now revision {stored.revision}
        {stored.updatedAt ? (
          <>
            , saved <RelativeTime iso={stored.updatedAt} />
          </>
        ) : null}
        . What differs:
      </p>
      <DiffTable
        changes={diffJson(stored.definition, props.mine)}
        before={`Stored (revision ${stored.revision})`}
        after="Yours"
        caption="the stored draft against yours"
      />
      <div class="form-actions">
        <button type="button" onClick={props.onTakeTheirs}>
          Load revision {stored.revision} (discard mine)
        </button>
        <WriteButton class="primary" disabled={props.pending} onClick={props.onOverwrite}>
          Overwrite with mine
        </WriteButton>
      </div>
    </section>
  );
}
