// The bench Worker's bindings (bench/echo-worker/wrangler.toml).
import type { EchoAgent } from "./echo-agent";
import type { EntryBench } from "./entry-bench";
import type { TurnCost } from "./turn-cost";

export interface BenchEnv {
  ENVIRONMENT: "development";
  PUBLIC_HOSTS: string;
  DB: D1Database;
  FILES: R2Bucket;
  ECHO: DurableObjectNamespace<EchoAgent>;
  ENTRY_BENCH: DurableObjectNamespace<EntryBench>;
  TURN_COST: DurableObjectNamespace<TurnCost>;
}
