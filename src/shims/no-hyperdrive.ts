// What `control-plane-hyperdrive` resolves to in the default build: no `pg`, no Postgres adapter (~40 KB gzip past
// the Worker's budget). A Hyperdrive build aliases the real module in (docs/control-plane.md#hyperdrive).
export function callOverHyperdrive(): Promise<never> {
  return Promise.reject(
    new Error(
      "This Worker was built without the Hyperdrive adapter: build from a config whose alias maps " +
        "control-plane-hyperdrive to ./src/storage/postgres/hyperdrive-store.ts (docs/control-plane.md#hyperdrive).",
    ),
  );
}
