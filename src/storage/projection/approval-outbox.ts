// An approval's change queued for the D1 projection (agent_approvals), in the transaction that makes it.
import type { JsonValue } from "../redact";

export function enqueueApproval(
  _storage: DurableObjectStorage,
  _view: { [key: string]: JsonValue },
  _revision: number,
  _now: number,
): void {}
