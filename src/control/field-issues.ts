// zod issues as the `{path, message}` details of a bad_request, naming each unknown key by its own path.
import type { z } from "zod";

export interface FieldIssue {
  path: string;
  message: string;
}

function joinPath(path: readonly PropertyKey[]): string {
  return path.map(String).join(".") || "(root)";
}

type Issue = z.core.$ZodIssue;

/** A branch of a union whose value had the branch's type: its issues all sit below the union's own place. */
const typeMatched = (issues: readonly Issue[]) =>
  issues.length > 0 && issues.every((issue) => issue.path.length > 0 || issue.code === "custom");

function issuesOf(issues: readonly Issue[], prefix: readonly PropertyKey[]): FieldIssue[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((key) => ({ path: joinPath([...path, key]), message: "unknown field" }));
    }
    // A union (such as a tool's `approval`: a word or an object) whose value matched one branch's type reports
    // that branch's own issues, each at its field, instead of one "Invalid input" at the union.
    if (issue.code === "invalid_union") {
      const matched = issue.errors.filter(typeMatched);
      const only = matched[0];
      if (matched.length === 1 && only !== undefined) return issuesOf(only, path);
    }
    return [{ path: joinPath(path), message: issue.message }];
  });
}

export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return issuesOf(error.issues, []);
}
