// Counts what a Durable Object's SQLite work costs: every statement run through `storage.sql.exec` is recorded with
// its cursor, whose `rowsWritten` (rows plus index rows, as billed) is read once the work is done.
const WRITE =
  /^\s*(?:WITH\b[\s\S]*?\)\s*)?(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+["`]?(\w+)/i;

interface Recorded {
  query: string;
  table: string | null;
  cursor: SqlStorageCursor<Record<string, SqlStorageValue>>;
}

export interface StorageTally {
  statements: number;
  writeStatements: number;
  rowsWritten: number;
  /** Rows written per table. */
  byTable: Record<string, number>;
  /** Statements run per query text (whitespace collapsed): which reads and writes a turn repeats. */
  byQuery: Record<string, number>;
}

export class StorageMeter {
  #recorded: Recorded[] = [];

  /** A storage whose SQL goes through this meter; transactions and everything else are the real object's. */
  wrap(storage: DurableObjectStorage): DurableObjectStorage {
    const recorded = () => this.#recorded;
    const sql = new Proxy(storage.sql, {
      get(target, prop) {
        if (prop === "exec") {
          return (query: string, ...bindings: unknown[]) => {
            const cursor = target.exec(query, ...bindings);
            recorded().push({ query, table: WRITE.exec(query)?.[1]?.toLowerCase() ?? null, cursor });
            return cursor;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return new Proxy(storage, {
      get(target, prop) {
        if (prop === "sql") return sql;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** What was recorded since the last call, and forgets it. */
  take(): StorageTally {
    const tally: StorageTally = {
      statements: 0,
      writeStatements: 0,
      rowsWritten: 0,
      byTable: {},
      byQuery: {},
    };
    for (const { query, table, cursor } of this.#recorded) {
      tally.statements += 1;
      const text = query.replace(/\s+/g, " ").trim();
      tally.byQuery[text] = (tally.byQuery[text] ?? 0) + 1;
      const rows = cursor.rowsWritten;
      if (table !== null) tally.writeStatements += 1;
      if (rows > 0) {
        tally.rowsWritten += rows;
        const key = table ?? "(other)";
        tally.byTable[key] = (tally.byTable[key] ?? 0) + rows;
      }
    }
    this.#recorded = [];
    return tally;
  }
}
