// Counts what an object's storage is billed for while a test asks: rows written by every `sql.exec` (its cursor's
// `rowsWritten`, index entries included, as billed) and every `setAlarm()` (billed as a row written).
export interface StorageCount {
  rowsWritten: number;
  alarmsSet: number;
  /** Rows written per table (`setAlarm` under "(alarm)"). */
  byTable: Record<string, number>;
}

const WRITE =
  /^\s*(?:WITH\b[\s\S]*?\)\s*)?(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+["`]?(\w+)/i;

export class StorageMeter {
  #on = false;
  #cursors: { table: string; cursor: SqlStorageCursor<Record<string, SqlStorageValue>> }[] = [];
  #alarms = 0;

  /** Starts counting from zero. */
  start(): void {
    this.#on = true;
    this.#cursors = [];
    this.#alarms = 0;
  }

  /** Stops counting and returns what was counted since `start`. */
  stop(): StorageCount {
    this.#on = false;
    const byTable: Record<string, number> = {};
    let rowsWritten = 0;
    for (const { table, cursor } of this.#cursors) {
      const rows = cursor.rowsWritten;
      if (rows === 0) continue;
      rowsWritten += rows;
      byTable[table] = (byTable[table] ?? 0) + rows;
    }
    if (this.#alarms > 0) byTable["(alarm)"] = this.#alarms;
    this.#cursors = [];
    return { rowsWritten: rowsWritten + this.#alarms, alarmsSet: this.#alarms, byTable };
  }

  /**
   * Meters the object's storage in place (its state object must stay the runtime's own, so `storage` is shadowed by
   * a metered proxy of itself); call before the object is built on it.
   */
  install(ctx: DurableObjectState): void {
    const storage = ctx.storage;
    const sql = new Proxy(storage.sql, {
      get: (target, prop) => {
        // Only while counting: a test that patches `exec` itself keeps the real one underneath.
        if (prop === "exec" && this.#on) {
          return (query: string, ...bindings: SqlStorageValue[]) => {
            const cursor = target.exec(query, ...bindings);
            if (this.#on)
              this.#cursors.push({ table: WRITE.exec(query)?.[1]?.toLowerCase() ?? "(other)", cursor });
            return cursor;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const metered = new Proxy(storage, {
      get: (target, prop) => {
        if (prop === "sql") return sql;
        if (prop === "setAlarm") {
          return (...args: Parameters<DurableObjectStorage["setAlarm"]>) => {
            if (this.#on) this.#alarms += 1;
            return target.setAlarm(...args);
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    Object.defineProperty(ctx, "storage", { value: metered, configurable: true });
  }
}
