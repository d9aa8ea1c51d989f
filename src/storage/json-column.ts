// JSON columns are parsed and checked on the way out of SQLite, never cast.
import { z } from "zod";
import type { JsonValue } from "./redact";

const jsonValue: z.ZodType<JsonValue> = z.json();

export function parseJsonColumn(text: string): JsonValue {
  return jsonValue.parse(JSON.parse(text));
}
