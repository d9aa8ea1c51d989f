// Counts a D1 binding's cost: round trips (a batch or a single statement), statements and rows written, as D1
// reports them in each result's `meta`.
export interface D1Tally {
  batches: number;
  /** Single statements run outside a batch (`first`, `all`, `run`, `raw`). */
  singles: number;
  statements: number;
  rowsWritten: number;
}

const empty = (): D1Tally => ({ batches: 0, singles: 0, statements: 0, rowsWritten: 0 });

function rowsWrittenOf(result: unknown): number {
  if (result === null || typeof result !== "object" || !("meta" in result)) return 0;
  const meta = result.meta;
  if (meta === null || typeof meta !== "object" || !("rows_written" in meta)) return 0;
  return typeof meta.rows_written === "number" ? meta.rows_written : 0;
}

export class D1Meter {
  #tally = empty();

  /** The database with `batch` counted; single statements are counted by `countSingles` on their prototype. */
  wrap(db: D1Database): D1Database {
    const tally = () => this.#tally;
    return new Proxy(db, {
      get(target, prop) {
        if (prop === "batch") {
          return async (statements: D1PreparedStatement[]) => {
            const results = await target.batch(statements);
            const t = tally();
            t.batches += 1;
            t.statements += statements.length;
            for (const result of results) t.rowsWritten += rowsWrittenOf(result);
            return results;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  }

  /** Wraps the statement class's methods once per isolate; statements keep their real type for `batch`. */
  countSingles(db: D1Database): void {
    const proto: unknown = Object.getPrototypeOf(db.prepare("SELECT 1"));
    if (proto === null || typeof proto !== "object" || Reflect.get(proto, "__benchMetered") === true) return;
    const tally = () => this.#tally;
    for (const name of ["first", "all", "run", "raw"]) {
      const original: unknown = Reflect.get(proto, name);
      if (typeof original !== "function") continue;
      Reflect.set(proto, name, async function (this: unknown, ...args: unknown[]) {
        const result: unknown = await original.apply(this, args);
        const t = tally();
        t.singles += 1;
        t.statements += 1;
        t.rowsWritten += rowsWrittenOf(result);
        return result;
      });
    }
    Reflect.set(proto, "__benchMetered", true);
  }

  take(): D1Tally {
    const tally = this.#tally;
    this.#tally = empty();
    return tally;
  }
}
