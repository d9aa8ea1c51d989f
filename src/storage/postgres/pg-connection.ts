// How the PostgreSQL adapter reaches a database without importing a driver: anything shaped like `pg`'s query, and
// one way to run a transaction on a single connection (a pool's checked-out client, or a lone client held in turn).

/** What a query answers: the shape of `pg`'s QueryResult that the adapter reads. */
export interface PgResult {
  rows: Record<string, unknown>[];
  rowCount: number | null;
}

/** A `pg` Client, PoolClient or Pool: `query(text, values)` with `$1…` placeholders. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<PgResult>;
}

/** A `pg` Pool: each transaction checks out its own client, so transactions run side by side. */
export interface PgPoolLike extends PgQueryable {
  connect(): Promise<PgQueryable & { release(error?: Error | boolean): void }>;
  readonly totalCount: number;
}

/** Any other driver or wrapper that runs `work` in one transaction on one connection (BEGIN … COMMIT / ROLLBACK). */
export interface PgTransactor extends PgQueryable {
  transaction<T>(work: (tx: PgQueryable) => Promise<T>): Promise<T>;
}

/**
 * What `createPostgresDeploymentStore({sql})` accepts. A Pool (detected by `connect` and `totalCount`) or a
 * PgTransactor runs transactions concurrently; anything else is one connection (a `pg` Client, as under a Worker's
 * Hyperdrive binding), where the adapter runs its statements and transactions one at a time so none interleave.
 */
export type PgConnection = PgQueryable | PgPoolLike | PgTransactor;

/** SQLSTATEs a transaction is retried on: serialization failure and deadlock. */
const RETRYABLE = new Set(["40001", "40P01"]);
const TRANSACTION_ATTEMPTS = 3;

/** The runner the store uses: plain statements, and transactions retried on serialization failures. */
export interface PgRunner {
  query(text: string, values?: unknown[]): Promise<PgResult>;
  transaction<T>(work: (tx: PgQueryable) => Promise<T>): Promise<T>;
}

export function pgRunner(sql: PgConnection): PgRunner {
  const once = oneTransaction(sql);
  const query =
    isPool(sql) || isTransactor(sql)
      ? (text: string, values?: unknown[]) => sql.query(text, values)
      : inTurn(sql).query;
  return {
    query,
    async transaction(work) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await once(work);
        } catch (error) {
          if (attempt >= TRANSACTION_ATTEMPTS || !RETRYABLE.has(pgErrorCode(error) ?? "")) throw error;
        }
      }
    },
  };
}

function isPool(sql: PgConnection): sql is PgPoolLike {
  return typeof (sql as Partial<PgPoolLike>).connect === "function" && "totalCount" in sql;
}

function isTransactor(sql: PgConnection): sql is PgTransactor {
  return typeof (sql as Partial<PgTransactor>).transaction === "function";
}

function oneTransaction(sql: PgConnection): <T>(work: (tx: PgQueryable) => Promise<T>) => Promise<T> {
  if (isTransactor(sql)) return (work) => sql.transaction(work);
  if (isPool(sql)) {
    return async (work) => {
      const client = await sql.connect();
      let broken: Error | undefined;
      try {
        return await inTransaction(client, work);
      } catch (error) {
        // A client whose ROLLBACK failed is in an unknown state: destroy it rather than return it to the pool.
        if (error instanceof RollbackFailed) broken = error;
        throw error instanceof RollbackFailed ? error.cause : error;
      } finally {
        client.release(broken);
      }
    };
  }
  const turn = inTurn(sql);
  return (work) => turn.hold(() => inTransaction(sql, work));
}

class RollbackFailed extends Error {}

async function inTransaction<T>(client: PgQueryable, work: (tx: PgQueryable) => Promise<T>): Promise<T> {
  await client.query("BEGIN");
  try {
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    try {
      await client.query("ROLLBACK");
    } catch {
      throw new RollbackFailed("ROLLBACK failed", { cause: error });
    }
    throw error;
  }
}

const turns = new WeakMap<PgQueryable, ReturnType<typeof makeTurn>>();

/** One queue per lone connection: a transaction holds it from BEGIN to COMMIT, a statement waits its turn. */
function inTurn(sql: PgQueryable) {
  let turn = turns.get(sql);
  if (turn === undefined) {
    turn = makeTurn(sql);
    turns.set(sql, turn);
  }
  return turn;
}

function makeTurn(sql: PgQueryable) {
  let tail: Promise<unknown> = Promise.resolve();
  function hold<T>(work: () => Promise<T>): Promise<T> {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  }
  return {
    hold,
    query: (text: string, values?: unknown[]) => hold(() => sql.query(text, values)),
  };
}

/** The SQLSTATE of a driver error (`pg`'s DatabaseError.code), if it has one. */
export function pgErrorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** The constraint a unique violation (23505) broke, or null when `error` is something else. */
export function uniqueViolation(error: unknown): string | null {
  if (pgErrorCode(error) !== "23505") return null;
  const constraint = (error as { constraint?: unknown }).constraint;
  return typeof constraint === "string" ? constraint : "";
}

/** True when `error` is a foreign-key violation (23503): a row named something that does not exist. */
export function foreignKeyViolation(error: unknown): boolean {
  return pgErrorCode(error) === "23503";
}
