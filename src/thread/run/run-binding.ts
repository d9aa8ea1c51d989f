// Which version a turn or a run runs on: the one in effect where its user message goes (or went), over the thread's
// verified versions; the pin when that version cannot be used (the run then fails).
import type { Entry, EntryStore } from "../../storage/thread/entry-store";
import type { ThreadBinding } from "../../storage/thread/pin-store";
import type { Run } from "../../storage/thread/run-store";
import { placeUserTurn, type TurnRequest } from "./place-user-turn";
import { runArtifact, type VersionBindings } from "./run-artifact";

export class RunBindings {
  readonly #versions: VersionBindings;
  readonly #pin: ThreadBinding;
  readonly #entries: EntryStore;

  constructor(versions: VersionBindings, pin: ThreadBinding, entries: EntryStore) {
    this.#versions = versions;
    this.#pin = pin;
    this.#entries = entries;
  }

  /** The binding a turn stored at `at` runs on; the pin when its version cannot be used. */
  at(at: Entry | null): ThreadBinding {
    const bound = runArtifact(this.#versions, at);
    return bound.ok ? bound.value : this.#pin;
  }

  /** Where a request's message would go, and so the version its limits and strategy come from. */
  ofRequest(request: TurnRequest): ThreadBinding {
    const sole = this.#versions.sole();
    if (sole !== null) return sole;
    const placed = placeUserTurn(request, this.#entries);
    if (!placed.ok) return this.at(this.#entries.latestLeaf());
    const { existingUser, parentId } = placed.value;
    return this.at(existingUser ?? (parentId === null ? null : this.#entries.get(parentId)));
  }

  /** The binding a run used: the one in effect at its user message (the pin for a run that never placed one). */
  ofRun(run: Run): ThreadBinding {
    const sole = this.#versions.sole();
    if (sole !== null) return sole;
    const user = run.userEntryId === null ? null : this.#entries.get(run.userEntryId);
    return this.at(user);
  }
}
