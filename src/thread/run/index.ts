// The run: a turn accepted, queued, streamed from the model and sealed (docs/protocol.md#runs). What the rest of the
// thread uses of it.
export { encodeFrame, type Peer, toWireEntry, type UpgradeBy, type VersionChangeBody } from "./frames";
export { DELTAS_PER_CHUNK, StreamReceivers, settledFrames } from "./live-run";
export { queuedFrame } from "./multitask";
export type { TurnRequest } from "./place-user-turn";
export { type AttachmentBytes, attachmentReader } from "./prompt-attachments";
export { PromptHistory } from "./prompt-history";
export { approvalView } from "./run-action-views";
export type { DeciderKind } from "./run-actions";
export { runArtifact, VersionBindings } from "./run-artifact";
export { rebuildRunInput } from "./run-input";
export { RunLifecycle, type TurnAccepted } from "./run-lifecycle";
export { openRunStores, type RunStores } from "./run-stores";
export { recordHandoffRequest } from "./run-wiring";
export { type ThreadLimits, threadLimits } from "./thread-limits";
