// The Worker's D1 bindings in development: the control plane (`DB`, also projection shard 0) and each further
// projection shard (src/storage/d1/shards.ts `SHARDS`, wrangler.toml). Every one takes the same migrations.
export const D1_BINDINGS = ["DB", "DB_SHARD_1"];
