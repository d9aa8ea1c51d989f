// zod issues as the `{path, message}` details of a bad_request, naming each unknown key by its own path.
import type { z } from "zod";

export interface FieldIssue {
  path: string;
  message: string;
}

function joinPath(path: readonly PropertyKey[]): string {
  return path.map(String).join(".") || "(root)";
}

export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({ path: joinPath([...issue.path, key]), message: "unknown field" }))
      : [{ path: joinPath(issue.path), message: issue.message }],
  );
}
