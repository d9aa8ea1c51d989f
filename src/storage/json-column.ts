// JSON columns on the way out of SQLite. `JSON.parse` can only produce JSON values, so the `JsonValue` type follows
// from the parse itself; re-validating every value with a recursive schema doubled the cost of a branch read
// (`npm run bench`, B3). Callers check the shape they need with their own schemas (for example `messageBodySchema`).
import type { JsonValue } from "./redact";

export function parseJsonColumn(text: string): JsonValue {
  const value: JsonValue = JSON.parse(text);
  return value;
}
