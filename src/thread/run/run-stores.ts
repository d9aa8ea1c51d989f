// The stores a run writes through, opened together so a run's redacting set redacts every table it writes.
import { ActionStore } from "../../storage/thread/action-store";
import { EntryStore } from "../../storage/thread/entry-store";
import { RunChunkStore } from "../../storage/thread/run-chunk-store";
import { RunStore } from "../../storage/thread/run-store";
import type { RunStoreOptions } from "../../storage/thread/run-types";
import { ToolCallStore } from "../../storage/thread/tool-call-store";
import { UsageStore } from "../../storage/thread/usage-store";

export interface RunStores {
  entries: EntryStore;
  runs: RunStore;
  chunks: RunChunkStore;
  toolCalls: ToolCallStore;
  usage: UsageStore;
  /** A waiting run's approvals and client tool requests, and the model calls it continues from. */
  actions: ActionStore;
}

export function openRunStores(storage: DurableObjectStorage, options: RunStoreOptions): RunStores {
  return {
    entries: new EntryStore(storage, options),
    runs: new RunStore(storage, options),
    chunks: new RunChunkStore(storage, options),
    toolCalls: new ToolCallStore(storage, options),
    usage: new UsageStore(storage, options),
    actions: new ActionStore(storage, options),
  };
}
